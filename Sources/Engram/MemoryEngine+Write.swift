import EngramStore
import EngramVectors
import Foundation

/// The kinds of memory a person or an agent can store.
public enum MemoryKind: String, Sendable, CaseIterable, Codable {
  case fact
  case preference
  case note
  case summary
  case event

  var stored: EngramStore.MemoryKind { EngramStore.MemoryKind(rawValue: rawValue)! }
}

/// A memory as the engine returns it.
public struct MemoryItem: Sendable, Equatable {
  public var id: Int64
  public var kind: MemoryKind
  public var content: String
  public var importance: Double
  public var createdAt: Date
  public var updatedAt: Date
  public var accessCount: Int
  public var lastAccessedAt: Date?
  public var validFrom: Date?
  public var validUntil: Date?
  /// The newer memory that replaced this one, if any (this one stays queryable).
  public var supersededBy: Int64?
  public var scopeUser: String?
  public var tags: [String]

  init(_ memory: Memory) {
    id = memory.id ?? 0
    kind = MemoryKind(rawValue: memory.kind.rawValue) ?? .note
    content = memory.content
    importance = memory.importance
    createdAt = Timestamp.date(memory.createdAt)
    updatedAt = Timestamp.date(memory.updatedAt)
    accessCount = memory.accessCount
    lastAccessedAt = memory.lastAccessedAt.map(Timestamp.date)
    validFrom = memory.validFrom.map(Timestamp.date)
    validUntil = memory.validUntil.map(Timestamp.date)
    supersededBy = memory.supersededBy
    scopeUser = memory.scopeUser
    tags = memory.tags
  }
}

extension MemoryEngine {
  // MARK: - Sessions and turns

  /// Starts a session; returns its id. An existing session with the same name is reused.
  public func startSession(name: String? = nil, title: String? = nil, at date: Date = Date()) throws -> Int64
  {
    try checkOpen()
    return try database.write { connection in
      if let name, let existing = try connection.session(externalID: name), let id = existing.id {
        return id
      }
      return try connection.insert(
        Session(externalID: name, title: title, startedAt: Timestamp.milliseconds(date)))
    }
  }

  /// Marks a session ended.
  public func endSession(_ id: Int64, at date: Date = Date()) throws {
    try checkOpen()
    try database.write { connection in
      guard var session = try connection.fetch(Session.self, id: id) else {
        throw StoreError.notFound(table: "sessions", id: id)
      }
      session.endedAt = Timestamp.milliseconds(date)
      try connection.update(session)
    }
  }

  /// Appends one conversation turn (stored and embedded in one transaction); returns its id.
  ///
  /// - Throws: `EngramError.emptyText` for blank text; embedder and store errors. Nothing is
  ///   stored when any step fails.
  @discardableResult
  ///
  /// With `embedNow: false` the turn is stored at once (searchable by keyword) and embedded
  /// later by `embedPendingTurns()`, off the caller's critical path.
  public func appendTurn(
    role: String, content: String, speaker: String? = nil, session: Int64? = nil, at date: Date = Date(),
    metadata: [String: JSONValue] = [:], embedNow: Bool = true
  ) async throws -> Int64 {
    try checkOpen()
    guard let role = MessageRole(rawValue: role) else {
      throw EngramError.invalidConfiguration(
        field: "role", reason: "'\(role)' is not system, user, assistant or tool")
    }
    guard !content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw EngramError.emptyText
    }
    let message = Message(
      sessionID: session, role: role, speaker: speaker, content: content,
      createdAt: Timestamp.milliseconds(date), tokenCount: TokenEstimator.estimate(content),
      metadata: JSONValue.object(metadata).jsonText)
    guard embedNow else {
      let id = try database.write { try $0.insert(message) }
      deferredTurns.withLock { $0.append(id) }
      if speaker != nil { speakers.withLock { $0 = nil } }
      return id
    }
    let vector = try await embed([Self.documentText(speaker: speaker, content: content, date: date)])[0]
    let model = embedder.modelID
    let id = try writeTracked { connection in
      let id = try connection.insert(message)
      try connection.upsertEmbedding(
        EmbeddingRow(
          ownerKind: .message, ownerID: id, model: model, vector: vector,
          createdAt: message.createdAt))
      return id
    }
    if speaker != nil { speakers.withLock { $0 = nil } }
    try indexVectors([
      (
        .message, id,
        VectorMetadata(kind: .message, session: session ?? 0, scope: 0, timestamp: message.createdAt), vector
      )
    ])
    return id
  }

  /// Embeds the turns this engine stored with `embedNow: false` (up to `limit` of them);
  /// returns how many. Only those turns are read, so the cost does not grow with the memory;
  /// turns left unembedded by a process that stopped first are found by `doctor(repair:)`.
  @discardableResult
  public func embedPendingTurns(limit: Int = 1024) async throws -> Int {
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
    let pending = try database.read { connection in
      try ids.compactMap { try connection.fetch(Message.self, id: $0) }
    }
    guard !pending.isEmpty else { return 0 }
    let vectors = try await embed(
      pending.map {
        Self.documentText(speaker: $0.speaker, content: $0.content, date: Timestamp.date($0.createdAt))
      })
    let model = embedder.modelID
    let stored = try writeTracked { connection -> [Int] in
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
            kind: .message, session: message.sessionID ?? 0, scope: 0, timestamp: message.createdAt),
          vectors[position]
        )
      })
    return stored.count
  }

  /// The most recent turns, oldest first.
  public func recentTurns(limit: Int, session: Int64? = nil) throws -> [SearchHit] {
    try checkOpen()
    return try database.read { connection in
      let statement = try connection.cachedStatement(
        """
        SELECT id, session_id, speaker, content, created_at, metadata, role FROM messages
        WHERE (?2 IS NULL OR session_id = ?2) ORDER BY created_at DESC, id DESC LIMIT ?1
        """)
      try statement.bind(max(0, limit), at: 1)
      try statement.bind(session, at: 2)
      let rows = try statement.map { row in
        SearchHit(
          kind: .message, id: row.int64(at: 0), text: row.string(at: 3), sessionID: row.optionalInt64(at: 1),
          speaker: row.optionalString(at: 2) ?? row.string(at: 6),
          timestamp: Timestamp.date(row.int64(at: 4)),
          bm25: nil, cosine: nil, score: 0, provenance: ["recent"],
          metadata: (try? JSONValue.parse(row.string(at: 5)))?.objectValue ?? [:])
      }
      return rows.reversed()
    }
  }

  // MARK: - Memories

  /// Stores a memory and its embedding; returns its id.
  ///
  /// - Throws: `EngramError.emptyText`; `StoreError.invalidImportance` outside 0...1.
  @discardableResult
  public func remember(
    _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
    scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
    session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
  ) async throws -> Int64 {
    try checkOpen()
    guard !content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw EngramError.emptyText
    }
    guard importance >= 0, importance <= 1 else { throw StoreError.invalidImportance(importance) }
    let vector = try await embed([content])[0]
    let now = Timestamp.milliseconds(date)
    let memory = Memory(
      kind: kind.stored, content: content, importance: importance, createdAt: now, updatedAt: now,
      validFrom: validFrom.map(Timestamp.milliseconds), validUntil: validUntil.map(Timestamp.milliseconds),
      sourceMessageIDs: sourceMessageIDs, scopeUser: scopeUser, scopeAgent: scopeAgent, sessionID: session,
      tags: tags)
    let model = embedder.modelID
    let id = try writeTracked { connection in
      let id = try connection.insert(memory)
      try connection.upsertEmbedding(
        EmbeddingRow(
          ownerKind: .memory, ownerID: id, model: model, vector: vector, createdAt: now))
      return id
    }
    try indexVectors([
      (
        .memory, id,
        VectorMetadata(kind: .memory, session: session ?? 0, scope: ScopeKey.make(scopeUser), timestamp: now),
        vector
      )
    ])
    return id
  }

  /// Replaces a memory's content with history kept: a new memory is stored and the old one
  /// is marked superseded by it (still readable and searchable with `includeSuperseded`).
  /// Returns the new memory's id.
  @discardableResult
  public func updateMemory(_ id: Int64, content: String, importance: Double? = nil, at date: Date = Date())
    async throws -> Int64
  {
    try checkOpen()
    guard let old = try memory(id) else { throw EngramError.notFound(kind: .memory, id: id) }
    let newID = try await remember(
      content, kind: old.kind, importance: importance ?? old.importance, scopeUser: old.scopeUser,
      tags: old.tags, validFrom: date, at: date)
    try database.write { connection in
      try connection.supersedeMemory(id, by: newID, at: Timestamp.milliseconds(date))
    }
    return newID
  }

  /// The memory with this id, or nil.
  public func memory(_ id: Int64) throws -> MemoryItem? {
    try checkOpen()
    return try database.read { try $0.fetch(Memory.self, id: id) }.map(MemoryItem.init)
  }

  /// Memories, newest first.
  public func memories(kind: MemoryKind? = nil, limit: Int = 100, includeSuperseded: Bool = false) throws
    -> [MemoryItem]
  {
    try checkOpen()
    return try database.read { connection in
      let statement = try connection.cachedStatement(
        """
        SELECT id FROM memories WHERE (?1 IS NULL OR kind = ?1) AND (?2 OR superseded_by IS NULL)
        ORDER BY created_at DESC, id DESC LIMIT ?3
        """)
      try statement.bind(kind?.rawValue, at: 1)
      try statement.bind(includeSuperseded, at: 2)
      try statement.bind(max(0, limit), at: 3)
      let ids = try statement.map { $0.int64(at: 0) }
      return try ids.compactMap { try connection.fetch(Memory.self, id: $0) }.map(MemoryItem.init)
    }
  }

  // MARK: - Forgetting

  /// Deletes an item and every copy of it (see ``forgetReporting(kind:id:dryRun:)``);
  /// returns whether it existed.
  @discardableResult
  public func forget(kind: ItemKind = .memory, id: Int64) throws -> Bool {
    try forgetReporting(kind: kind, id: id) != nil
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
  /// - Parameter dryRun: compute the report inside the transaction, then roll it back.
  @discardableResult
  public func forgetReporting(kind: ItemKind, id: Int64, dryRun: Bool = false) throws -> ForgetReport? {
    try checkOpen()
    let report: ForgetReport?
    do {
      report = try writeTracked { connection -> ForgetReport? in
        guard let report = try Self.forgetInTransaction(connection, kind: kind, id: id) else { return nil }
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
    if kind == .message || !report.turns.isEmpty { speakers.withLock { $0 = nil } }
    return report
  }

  private struct ForgetDryRun: Error {
    var report: ForgetReport
  }

  private static func forgetInTransaction(_ connection: Connection, kind: ItemKind, id: Int64) throws
    -> ForgetReport?
  {
    var report = ForgetReport(kind: kind, id: id)
    var deletedTurns: [Int64] = []
    var needle: String?
    switch kind {
    case .memory:
      guard let memory = try connection.fetch(Memory.self, id: id) else { return nil }
      needle = memory.content.trimmingCharacters(in: .whitespacesAndNewlines)
      _ = try connection.delete(Memory.self, id: id)
    case .message:
      guard try connection.fetch(Message.self, id: id) != nil else { return nil }
      deletedTurns.append(id)
    case .summary:
      guard try connection.delete(Summary.self, id: id) else { return nil }
    }
    var summaries = Set<Int64>()
    if let needle, !needle.isEmpty {
      let escaped = String(JSONValue.string(needle).jsonText.dropFirst().dropLast())
      let arguments: [SQLValue] = [.text(needle), .text(escaped)]
      let turns = try connection.prepare("SELECT id FROM messages WHERE instr(lower(content), lower(?1)) > 0")
        .bindingAndMap([.text(needle)]) { $0.int64(at: 0) }
      deletedTurns.append(contentsOf: turns)
      report.turns = turns
      summaries.formUnion(
        try connection.prepare("SELECT id FROM summaries WHERE instr(lower(content), lower(?1)) > 0")
          .bindingAndMap([.text(needle)]) { $0.int64(at: 0) })
      try connection.run(
        """
        DELETE FROM traces WHERE instr(lower(arguments), lower(?1)) > 0 OR instr(lower(arguments), lower(?2)) > 0
          OR instr(lower(coalesce(result, '')), lower(?1)) > 0 OR instr(lower(coalesce(error, '')), lower(?1)) > 0
        """, arguments)
      report.traces = connection.changes
      try connection.run(
        """
        DELETE FROM pending_calls WHERE status NOT IN ('pending', 'confirmed') AND (
          instr(lower(arguments), lower(?1)) > 0 OR instr(lower(arguments), lower(?2)) > 0
          OR instr(lower(summary), lower(?1)) > 0 OR instr(lower(coalesce(error, '')), lower(?1)) > 0)
        """, arguments)
      report.pendingCalls = connection.changes
    }
    // Summaries derived from a deleted turn: the one covering it and any quoting it.
    for turn in deletedTurns {
      summaries.formUnion(
        try connection.prepare(
          """
          SELECT summary_id FROM messages WHERE id = ?1 AND summary_id IS NOT NULL
          UNION SELECT s.id FROM summaries s, json_each(s.structured, '$.quoted_message_ids') q
            WHERE q.value = ?1
          UNION SELECT id FROM summaries WHERE first_message_id = ?1 OR last_message_id = ?1
          """
        ).bindingAndMap([.integer(turn)]) { $0.int64(at: 0) })
    }
    for turn in deletedTurns { _ = try connection.delete(Message.self, id: turn) }
    report.summaries = summaries.sorted()
    for summary in report.summaries { _ = try connection.delete(Summary.self, id: summary) }
    return report
  }

  /// Forgets the memories matching a query (keyword and vector, fused) whose fused score is
  /// at least `minimumScore`; with `dryRun` nothing is deleted. Returns what matched.
  public func forget(matching query: String, kinds: Set<ItemKind> = [.memory], limit: Int = 10, dryRun: Bool)
    async throws -> [SearchHit]
  {
    let hits = try await search(query, k: limit, mode: .hybrid, filters: SearchFilters(kinds: kinds))
    // Only items the query actually names: both retrievers agree, or the text contains it.
    let needle = query.lowercased()
    let matched = hits.filter { hit in
      (hit.bm25 != nil && (hit.cosine ?? 0) >= 0.5) || hit.text.lowercased().contains(needle)
    }
    if !dryRun {
      for hit in matched { try forget(kind: hit.kind, id: hit.id) }
    }
    return matched
  }

  // MARK: - Preferences

  /// Sets a key-value preference (pinned ones go into every prompt context).
  public func setPreference(_ key: String, _ value: String, pinned: Bool = false) throws {
    try checkOpen()
    try database.write {
      try $0.setPreference(Preference(key: key, value: value, pinned: pinned, updatedAt: Timestamp.now()))
    }
  }

  /// A preference's value, or nil.
  public func preference(_ key: String) throws -> String? {
    try checkOpen()
    return try database.read { try $0.preference(key: key)?.value }
  }

  /// All preferences as (key, value, pinned), by key.
  public func preferences() throws -> [(key: String, value: String, pinned: Bool)] {
    try checkOpen()
    return try database.read { try $0.preferences() }
      .map { ($0.key, $0.value, $0.pinned) }
      .sorted { $0.key < $1.key }
  }
}

/// Rough token counts for budgets: about four bytes of Latin text per token, one token
/// per CJK character (what BPE and WordPiece tokenizers produce on average).
public enum TokenEstimator {
  /// The estimated token count of `text`.
  public static func estimate(_ text: String) -> Int {
    var cjk = 0
    var otherBytes = 0
    for scalar in text.unicodeScalars {
      if FTSText.isCJK(scalar.value) {
        cjk += 1
      } else {
        otherBytes += scalar.utf8.count
      }
    }
    return cjk + (otherBytes + 3) / 4
  }
}

/// What forgetting removed: the item and every copy of it (see
/// `MemoryEngine.forgetReporting(kind:id:dryRun:)`).
public struct ForgetReport: Sendable, Equatable {
  /// The kind of the item forgotten.
  public var kind: ItemKind
  /// Its id.
  public var id: Int64
  /// Turns deleted because they contain a forgotten memory's text.
  public var turns: [Int64] = []
  /// Summaries deleted because they covered, quoted or contained what was forgotten.
  public var summaries: [Int64] = []
  /// Trace steps deleted because their arguments, result or error held the text.
  public var traces = 0
  /// Finished pending calls deleted because their arguments, summary or error held the text.
  public var pendingCalls = 0

  /// Creates an empty report for an item.
  public init(kind: ItemKind, id: Int64) {
    self.kind = kind
    self.id = id
  }

  /// Whether copies were removed besides the item itself.
  public var removedCopies: Bool { !turns.isEmpty || !summaries.isEmpty || traces > 0 || pendingCalls > 0 }
}
