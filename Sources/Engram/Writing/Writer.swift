import EngramCore
import EngramStore
import EngramVectors
import Foundation
import Synchronization

/// Writes sessions, turns, memories and preferences, each with its embedding in the same
/// transaction, and forgets items with every copy of them.
final class Writer: EnginePart {
  let resources: EngineResources
  /// Turns stored with `embedNow: false` and not embedded yet, oldest first.
  let deferredTurns = Mutex<[Int64]>([])

  init(resources: EngineResources) {
    self.resources = resources
  }

  // MARK: - Sessions and turns

  /// Starts a session; returns its id. An existing session with the same name is reused.
  func startSession(name: String? = nil, title: String? = nil, at date: Date = Date()) throws -> Int64 {
    try checkOpen()
    return try store.writeTransaction { connection in
      if let name, let existing = try connection.session(externalID: name), let id = existing.id {
        return id
      }
      return try connection.insert(
        Session(externalID: name, title: title, startedAt: date))
    }
  }

  /// Marks a session ended.
  func endSession(_ id: Int64, at date: Date = Date()) throws {
    try checkOpen()
    try store.writeTransaction { connection in
      guard var session = try connection.fetch(Session.self, id: id) else {
        throw StoreError.notFound(table: "sessions", id: id)
      }
      session.endedAt = date
      try connection.update(session)
    }
  }

  /// Appends one conversation turn (stored and embedded in one transaction); returns its id.
  @discardableResult
  func appendTurn(
    role: String, content: String, speaker: String? = nil, session: Int64? = nil, at date: Date = Date(),
    metadata: [String: JSONValue] = [:], embedNow: Bool = true
  ) async throws -> Int64 {
    try checkOpen()
    guard let role = MessageRole(rawValue: role) else {
      throw EngramError.invalidConfiguration(
        field: "role", reason: "'\(role)' is not system, user, assistant or tool")
    }
    guard !TextChecks.isBlank(content) else {
      throw EngramError.emptyText
    }
    let message = Message(
      sessionID: session, role: role, speaker: speaker, content: content,
      createdAt: date, tokenCount: TokenEstimator.estimate(content),
      metadata: JSONValue.object(metadata).jsonText)
    guard embedNow else {
      let id = try store.writeTransaction { try $0.insert(message) }
      deferredTurns.withLock { $0.append(id) }
      if speaker != nil { resources.speakers.invalidate() }
      return id
    }
    let vector = try await embed([DocumentText.make(speaker: speaker, content: content, date: date)])[0]
    let model = embedder.modelID
    let id = try await writeTrackedOffPool { connection in
      let id = try connection.insert(message)
      try connection.upsertEmbedding(
        EmbeddingRow(
          ownerKind: .message, ownerID: id, model: model, vector: vector,
          createdAt: message.createdAt))
      return id
    }
    if speaker != nil { resources.speakers.invalidate() }
    try indexVectors([
      (
        .message, id,
        VectorMetadata(
          kind: ItemKind.message.code, session: session ?? 0, scope: 0,
          timestamp: Timestamp.milliseconds(message.createdAt)), vector
      )
    ])
    return id
  }

  /// Embeds the turns this engine stored with `embedNow: false` (up to `limit` of them);
  @discardableResult
  func embedPendingTurns(limit: Int = 1024) async throws -> Int {
    try checkOpen()
    let ids = deferredTurns.withLock { ids in
      let taken = Array(ids.prefix(max(0, limit)))
      ids.removeFirst(taken.count)
      return taken
    }
    guard !ids.isEmpty else { return 0 }
    do {
      return try await embedTurns(ids)
    } catch {
      // Nothing was stored: keep them for the next call.
      deferredTurns.withLock { $0.insert(contentsOf: ids, at: 0) }
      throw error
    }
  }

  private func embedTurns(_ ids: [Int64]) async throws -> Int {
    let pending = try store.readTransaction { connection in
      try ids.compactMap { try connection.fetch(Message.self, id: $0) }
    }
    guard !pending.isEmpty else { return 0 }
    let vectors = try await embed(
      pending.map {
        DocumentText.make(speaker: $0.speaker, content: $0.content, date: $0.createdAt)
      })
    let model = embedder.modelID
    let stored = try await writeTrackedOffPool { connection -> [Int] in
      var stored: [Int] = []
      for (position, message) in pending.enumerated() {
        // A turn forgotten in the meantime stays forgotten.
        guard let id = message.id, try connection.fetch(Message.self, id: id) != nil else { continue }
        try connection.upsertEmbedding(
          EmbeddingRow(
            ownerKind: .message, ownerID: id, model: model, vector: vectors[position],
            createdAt: message.createdAt))
        stored.append(position)
      }
      return stored
    }
    try indexVectors(
      stored.map { position in
        let message = pending[position]
        return (
          .message, message.id ?? 0,
          VectorMetadata(
            kind: ItemKind.message.code, session: message.sessionID ?? 0, scope: 0,
            timestamp: Timestamp.milliseconds(message.createdAt)),
          vectors[position]
        )
      })
    return stored.count
  }

  /// The most recent turns, oldest first.
  func recentTurns(limit: Int, session: Int64? = nil) throws -> [SearchHit] {
    try checkOpen()
    return try store.readTransaction { try $0.recentMessages(limit: limit, sessionID: session) }.map {
      message in
      SearchHit(
        kind: .message, id: message.id ?? 0, text: message.content, sessionID: message.sessionID,
        speaker: message.speaker ?? message.role.rawValue, timestamp: message.createdAt,
        bm25: nil, cosine: nil, score: 0, provenance: ["recent"],
        metadata: (try? JSONValue.parse(message.metadata))?.objectValue ?? [:])
    }
  }

  // MARK: - Memories

  /// Stores a memory and its embedding; returns its id.
  @discardableResult
  func remember(
    _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
    scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
    session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
  ) async throws -> (id: Int64, isNew: Bool) {
    try checkOpen()
    guard !TextChecks.isBlank(content) else {
      throw EngramError.emptyText
    }
    guard importance >= 0, importance <= 1 else { throw StoreError.invalidImportance(importance) }
    if let existing = try await BlockingWork.run({ [store] in
      try store.readTransaction { try $0.identicalMemory(content: content, kind: kind, scopeUser: scopeUser) }
    }) {
      return (existing, false)
    }
    let vector = try await embed([content])[0]
    let now = date
    let memory = Memory(
      kind: kind, content: content, importance: importance, createdAt: now, updatedAt: now,
      validFrom: validFrom, validUntil: validUntil,
      sourceMessageIDs: sourceMessageIDs, scopeUser: scopeUser, scopeAgent: scopeAgent, sessionID: session,
      tags: tags)
    let id = try await store([memory], vectors: [vector])[0]
    return (id, true)
  }

  /// Stores notes (`kind`, text, tags, time) as memories in one check, one embedding call
  /// and one transaction; a text stored already (or twice in `notes`) is not stored again.
  /// Returns, for each note, whether it was new.
  func rememberNotes(_ notes: [(text: String, tags: [String], date: Date)], kind: MemoryKind) async throws
    -> [Bool]
  {
    try checkOpen()
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
    let vectors = try await embed(fresh.map { notes[$0].text })
    let memories = fresh.map { index in
      Memory(
        kind: kind, content: notes[index].text, importance: 0.5, createdAt: notes[index].date,
        updatedAt: notes[index].date, tags: notes[index].tags)
    }
    _ = try await store(memories, vectors: vectors)
    let freshSet = Set(fresh)
    return notes.indices.map { freshSet.contains($0) }
  }

  /// Stores `memories` with their embeddings in one transaction and adds them to the vector
  /// index; returns their ids (what `remember` and `rememberNotes` share).
  private func store(_ memories: [Memory], vectors: [[Float]]) async throws -> [Int64] {
    let model = embedder.modelID
    let ids = try await writeTrackedOffPool { connection -> [Int64] in
      try memories.enumerated().map { position, memory in
        let id = try connection.insert(memory)
        try connection.upsertEmbedding(
          EmbeddingRow(
            ownerKind: .memory, ownerID: id, model: model, vector: vectors[position],
            createdAt: memory.createdAt))
        return id
      }
    }
    try indexVectors(
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

  /// Replaces a memory's content with history kept: a new memory is stored and the old one
  @discardableResult
  func updateMemory(_ id: Int64, content: String, importance: Double? = nil, at date: Date = Date())
    async throws -> Int64
  {
    try checkOpen()
    guard let old = try memory(id) else { throw EngramError.notFound(kind: .memory, id: id) }
    let newID = try await remember(
      content, kind: old.kind, importance: importance ?? old.importance, scopeUser: old.scopeUser,
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
    try checkOpen()
    return try store.readTransaction { try $0.fetch(Memory.self, id: id) }
  }

  /// Memories, newest first.
  func memories(kind: MemoryKind? = nil, limit: Int = 100, includeSuperseded: Bool = false) throws
    -> [MemoryItem]
  {
    try checkOpen()
    return try store.readTransaction {
      try $0.memories(kind: kind, limit: max(0, limit), includeSuperseded: includeSuperseded)
    }
  }

  // MARK: - Forgetting

  /// Deletes an item and every copy of it (see ``forgetReporting(kind:id:dryRun:)``);
  @discardableResult
  func forget(kind: ItemKind = .memory, id: Int64) throws -> Bool {
    try forgetReporting(kind: kind, id: id) != nil
  }

  /// Deletes an item with its embedding and full-text entry, and every copy of it the
  @discardableResult
  func forgetReporting(kind: ItemKind, id: Int64, dryRun: Bool = false) throws -> ForgetReport? {
    try checkOpen()
    let report: ForgetReport?
    do {
      report = try writeTracked { connection -> ForgetReport? in
        guard let report = try connection.forgetItem(kind: kind, id: id) else { return nil }
        if dryRun { throw ForgetDryRun(report: report) }
        return report
      }
    } catch let preview as ForgetDryRun {
      return preview.report
    }
    guard let report else { return nil }
    _ = index.remove(id: VectorKey.make(kind, id))
    for turn in report.turns { _ = index.remove(id: VectorKey.make(.message, turn)) }
    for summary in report.summaries { _ = index.remove(id: VectorKey.make(.summary, summary)) }
    if kind == .message || !report.turns.isEmpty { resources.speakers.invalidate() }
    return report
  }

  private struct ForgetDryRun: Error {
    var report: ForgetReport
  }

  // MARK: - Preferences

  /// Sets a key-value preference (pinned ones go into every prompt context).
  func setPreference(_ key: String, _ value: String, pinned: Bool = false) throws {
    try checkOpen()
    try store.writeTransaction {
      try $0.setPreference(Preference(key: key, value: value, pinned: pinned, updatedAt: Date()))
    }
  }

  /// A preference's value, or nil.
  func preference(_ key: String) throws -> String? {
    try checkOpen()
    return try store.readTransaction { try $0.preference(key: key)?.value }
  }

  /// All preferences as (key, value, pinned), by key.
  func preferences() throws -> [(key: String, value: String, pinned: Bool)] {
    try checkOpen()
    return try store.readTransaction { try $0.preferences(pinnedOnly: false, page: .all) }
      .map { ($0.key, $0.value, $0.pinned) }
      .sorted { $0.key < $1.key }
  }
}
