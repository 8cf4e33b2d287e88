import EngramCore
import EngramStore
import EngramVectors
import Foundation

extension MemoryEngine {
  /// The memories of a memory store (`engine.memories`): facts, preferences, notes and the
  /// like, each stored with its embedding (an identical current memory is not stored twice),
  /// replaced with history kept, read back, searched, and forgotten with every copy of them.
  ///
  /// Every method is async and runs its SQLite work off the cooperative thread pool.
  public struct Memories: Sendable {
    let open: OpenState
    let store: any MemoryStore
    /// Stores embeddings, deletes in tracked writes and keeps the vector index in step.
    let vectors: VectorIndexKeeper
    let embedding: EmbeddingRunner
    /// Forgotten when a turn goes.
    let speakers: SpeakerDirectory
    /// Finds what a query names.
    let retriever: HybridRetriever

    /// Stores a memory and its embedding; returns its id. A current memory of the same kind
    /// (and `scopeUser`) with exactly this text is not stored again: its id is returned
    /// (`rememberReporting` says which happened).
    ///
    /// - Throws: `EngramError.emptyText`; `StoreError.invalidImportance` outside 0...1.
    @discardableResult
    public func remember(
      _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
      scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
      session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
    ) async throws -> Int64 {
      try await rememberReporting(
        content, kind: kind, importance: importance, scopeUser: scopeUser, scopeAgent: scopeAgent, tags: tags,
        validFrom: validFrom, validUntil: validUntil, session: session, sourceMessageIDs: sourceMessageIDs,
        at: date
      ).id
    }

    /// ``remember(_:kind:importance:scopeUser:scopeAgent:tags:validFrom:validUntil:session:sourceMessageIDs:at:)``,
    /// saying whether the memory is new (false: an identical one was stored already, and its
    /// id is returned).
    public func rememberReporting(
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
      if let existing = try await store.readOffPool(
        open, { try $0.identicalMemory(content: content, kind: kind, scopeUser: scopeUser) })
      {
        return (existing, false)
      }
      let vector = try await embedding.embed([content])[0]
      let memory = Memory(
        kind: kind, content: content, importance: importance, createdAt: date, updatedAt: date,
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
      let stored = try await store.readOffPool(open) { connection in
        try texts.map { try connection.identicalMemory(content: $0, kind: kind, scopeUser: nil) != nil }
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

    /// Replaces a memory's content (and its kind, when `kind` is given) with history kept: a
    /// new memory is stored and the old one is marked superseded by it (still readable and
    /// searchable with `includeSuperseded`). Returns the new memory's id (the old one when
    /// nothing changed).
    /// - Throws: `EngramError.notFound` when no memory has `id`.
    @discardableResult
    public func update(
      _ id: Int64, content: String, kind: MemoryKind? = nil, importance: Double? = nil, at date: Date = Date()
    ) async throws -> Int64 {
      guard let old = try await get(id) else { throw EngramError.notFound(kind: .memory, id: id) }
      let newID = try await remember(
        content, kind: kind ?? old.kind, importance: importance ?? old.importance, scopeUser: old.scopeUser,
        tags: old.tags, validFrom: date, at: date)
      // The same text again changes nothing; the text of another current memory supersedes by it.
      guard newID != id else { return id }
      try await store.writeOffPool(open) { try $0.supersedeMemory(id, by: newID, at: date) }
      return newID
    }

    /// The memory with this id, or nil.
    public func get(_ id: Int64) async throws -> MemoryItem? {
      try await store.readOffPool(open) { try $0.fetch(Memory.self, id: id) }
    }

    /// Memories, newest first.
    public func list(kind: MemoryKind? = nil, limit: Int = 100, includeSuperseded: Bool = false) async throws
      -> [MemoryItem]
    {
      try await store.readOffPool(open) {
        try $0.memories(kind: kind, limit: max(0, limit), includeSuperseded: includeSuperseded)
      }
    }

    /// The memories most relevant to `query` (hybrid search over the memories alone, not
    /// turns or summaries), best first, at most `k`: every id returned is one
    /// ``forget(kind:id:)`` deletes. `engine.search` searches everything.
    /// - Throws: `EngramError.emptyText`, `.invalidK`; embedder and store errors.
    public func search(_ query: String, k: Int = 10) async throws -> [SearchHit] {
      try await retriever.search(
        query, k: k, mode: .hybrid, filters: SearchFilters(kinds: [.memory]), recordAccess: true, exact: false
      )
    }

    /// Deletes an item (a memory by default, or a turn or summary) and every copy of it (see
    /// ``forgetReporting(kind:id:dryRun:)``); returns whether it existed.
    @discardableResult
    public func forget(kind: ItemKind = .memory, id: Int64) async throws -> Bool {
      try await forgetReporting(kind: kind, id: id) != nil
    }

    /// Deletes an item with its embedding and full-text entry, and every copy of it the
    /// memory holds, in one transaction; returns what was removed, or nil when no item of
    /// `kind` has `id` (nothing changed).
    ///
    /// The copies (docs/forgetting.md):
    /// - a turn: every summary that covers or quotes it (the session's other turns become
    ///   uncovered; the next `compact` summarizes them again without it);
    /// - a memory: every turn, summary, trace step and finished pending call whose text
    ///   contains the memory's text (case of ASCII letters ignored; in trace and call
    ///   arguments also in its JSON-escaped form). A turn is deleted whole: it states what was
    ///   forgotten. Calls still waiting for an answer are left to the conversation holding them;
    /// - a summary: only itself (its turns become uncovered).
    ///
    /// - Parameters:
    ///   - kind: the item's kind.
    ///   - id: the item's id in its table.
    ///   - dryRun: compute the report inside the transaction, then roll it back.
    @discardableResult
    public func forgetReporting(kind: ItemKind, id: Int64, dryRun: Bool = false) async throws -> ForgetReport?
    {
      try open.check()
      let report: ForgetReport?
      do {
        report = try await vectors.writeTrackedOffPool { connection -> ForgetReport? in
          guard let report = try connection.forgetItem(kind: kind, id: id) else { return nil }
          if dryRun { throw ForgetDryRun(report: report) }
          return report
        }
      } catch let preview as ForgetDryRun {
        return preview.report
      }
      guard let report else { return nil }
      vectors.remove(
        ids: [VectorKey.make(kind, id)] + report.turns.map { VectorKey.make(.message, $0) }
          + report.summaries.map { VectorKey.make(.summary, $0) })
      if kind == .message || !report.turns.isEmpty { speakers.invalidate() }
      return report
    }

    /// Carries a dry run's report out of the transaction it rolls back.
    private struct ForgetDryRun: Error {
      var report: ForgetReport
    }

    /// Forgets the items matching a query (keyword and vector, fused) that the query actually
    /// names (`Fusion.names`: both retrievers agree, or the text contains it); with `dryRun`
    /// nothing is deleted. Returns what matched.
    public func forget(
      matching query: String, kinds: Set<ItemKind> = [.memory], limit: Int = 10, dryRun: Bool
    ) async throws -> [SearchHit] {
      let hits = try await retriever.search(
        query, k: limit, mode: .hybrid, filters: SearchFilters(kinds: kinds), recordAccess: true, exact: false
      )
      // Only items the query actually names (the rule lives with the ranking, in `Fusion`).
      let matched = hits.filter { Fusion.names($0, query: query) }
      if !dryRun {
        for hit in matched { try await forget(kind: hit.kind, id: hit.id) }
      }
      return matched
    }
  }
}
