import EngramCore
import EngramStore
import EngramVectors
import Foundation

/// Memories: stored with their embedding (an identical current memory is not stored
/// twice), replaced with history kept, and read back.
struct MemoryRecords: Sendable {
  let open: OpenState
  let store: any MemoryStore
  /// Stores embeddings and keeps the vector index in step.
  let vectors: VectorIndexKeeper
  let embedding: EmbeddingRunner

  /// Stores a memory and its embedding; returns its id.
  @discardableResult
  func remember(
    _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
    scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
    session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
  ) async throws -> (id: Int64, isNew: Bool) {
    try open.check()
    guard !TextChecks.isBlank(content) else {
      throw EngramError.emptyText
    }
    // A memory is one fact or note: a longer text is refused, not cut (ingest stores a long
    // note in parts).
    guard content.utf8.count <= TurnText.maxBytes else {
      throw EngramError.textTooLong(bytes: content.utf8.count, limit: TurnText.maxBytes)
    }
    guard importance >= 0, importance <= 1 else { throw StoreError.invalidImportance(importance) }
    if let existing = try await BlockingWork.run({ [store] in
      try store.readTransaction { try $0.identicalMemory(content: content, kind: kind, scopeUser: scopeUser) }
    }) {
      return (existing, false)
    }
    let vector = try await embedding.embed([content])[0]
    let now = date
    let memory = Memory(
      kind: kind, content: content, importance: importance, createdAt: now, updatedAt: now,
      validFrom: validFrom, validUntil: validUntil,
      sourceMessageIDs: sourceMessageIDs, scopeUser: scopeUser, scopeAgent: scopeAgent, sessionID: session,
      tags: tags)
    let id = try await insert([memory], vectors: [vector])[0]
    return (id, true)
  }

  /// Stores notes (`kind`, text, tags, time) as memories in one check, one embedding call
  /// and one transaction; a text stored already (or twice in `notes`) is not stored again.
  /// Returns, for each note, whether it was new.
  func rememberNotes(_ notes: [(text: String, tags: [String], date: Date)], kind: MemoryKind) async throws
    -> [Bool]
  {
    try open.check()
    guard !notes.isEmpty else { return [] }
    guard !notes.contains(where: { TextChecks.isBlank($0.text) }) else { throw EngramError.emptyText }
    let texts = notes.map(\.text)
    let stored = try await BlockingWork.run { [store] in
      try store.readTransaction { connection in
        try texts.map { try connection.identicalMemory(content: $0, kind: kind, scopeUser: nil) != nil }
      }
    }
    var seen: Set<String> = []
    let fresh = notes.indices.filter { !stored[$0] && seen.insert(notes[$0].text).inserted }
    guard !fresh.isEmpty else { return notes.map { _ in false } }
    let vectors = try await embedding.embed(fresh.map { notes[$0].text })
    let memories = fresh.map { index in
      Memory(
        kind: kind, content: notes[index].text, importance: 0.5, createdAt: notes[index].date,
        updatedAt: notes[index].date, tags: notes[index].tags)
    }
    _ = try await insert(memories, vectors: vectors)
    let freshSet = Set(fresh)
    return notes.indices.map { freshSet.contains($0) }
  }

  /// Stores `memories` with their embeddings in one transaction and adds them to the vector
  /// index; returns their ids (what `remember` and `rememberNotes` share).
  private func insert(_ memories: [Memory], vectors: [[Float]]) async throws -> [Int64] {
    let model = embedding.embedder.modelID
    let ids = try await self.vectors.writeTrackedOffPool { connection -> [Int64] in
      try memories.enumerated().map { position, memory in
        let id = try connection.insert(memory)
        try connection.upsertEmbedding(
          EmbeddingRow(
            ownerKind: .memory, ownerID: id, model: model, vector: vectors[position],
            createdAt: memory.createdAt))
        return id
      }
    }
    try self.vectors.add(
      ids.enumerated().map { position, id in
        let memory = memories[position]
        return (
          .memory, id,
          VectorMetadata(
            kind: ItemKind.memory.code, session: memory.sessionID ?? 0,
            scope: ScopeKey.make(memory.scopeUser),
            timestamp: Timestamp.milliseconds(memory.createdAt)),
          vectors[position]
        )
      })
    return ids
  }

  /// Replaces a memory's content (and kind, when given) with history kept: a new memory is
  /// stored and the old one is marked superseded by it; returns the new memory's id.
  @discardableResult
  func updateMemory(
    _ id: Int64, content: String, kind: MemoryKind? = nil, importance: Double? = nil, at date: Date = Date()
  ) async throws -> Int64 {
    try open.check()
    guard let old = try memory(id) else { throw EngramError.notFound(kind: .memory, id: id) }
    let newID = try await remember(
      content, kind: kind ?? old.kind, importance: importance ?? old.importance, scopeUser: old.scopeUser,
      tags: old.tags, validFrom: date, at: date
    ).id
    // The same text again changes nothing; the text of another current memory supersedes by it.
    guard newID != id else { return id }
    try store.writeTransaction { connection in
      try connection.supersedeMemory(id, by: newID, at: date)
    }
    return newID
  }

  /// The memory with this id, or nil.
  func memory(_ id: Int64) throws -> MemoryItem? {
    try open.check()
    return try store.readTransaction { try $0.fetch(Memory.self, id: id) }
  }

  /// Memories, newest first.
  func memories(kind: MemoryKind? = nil, limit: Int = 100, includeSuperseded: Bool = false) throws
    -> [MemoryItem]
  {
    try open.check()
    return try store.readTransaction {
      try $0.memories(kind: kind, limit: max(0, limit), includeSuperseded: includeSuperseded)
    }
  }
}
