import EngramCore
import Foundation

/// What ranking needs of one search candidate (texts are read for the final hits only).
public struct CandidateRow: Sendable, Equatable {
  /// The item's kind.
  public var kind: ItemKind
  /// The item's id in its table.
  public var id: Int64
  /// Its session, if any.
  public var sessionID: Int64?
  /// The speaker (or role) of a turn.
  public var speaker: String?
  /// When it happened: turn time, memory creation, summary start.
  public var timestamp: Date
  /// The previous turn of the same session (turns only).
  public var previous: Int64?
  /// The next turn of the same session (turns only).
  public var next: Int64?
  /// Whether a newer memory replaced it (memories only).
  public var superseded: Bool
  /// The memory's user scope (memories only).
  public var scopeUser: String?
  /// The memory's importance, 0...1 (memories only).
  public var importance: Double?

  /// Creates a candidate row.
  public init(
    kind: ItemKind, id: Int64, sessionID: Int64? = nil, speaker: String? = nil, timestamp: Date,
    previous: Int64? = nil, next: Int64? = nil, superseded: Bool = false, scopeUser: String? = nil,
    importance: Double? = nil
  ) {
    self.kind = kind
    self.id = id
    self.sessionID = sessionID
    self.speaker = speaker
    self.timestamp = timestamp
    self.previous = previous
    self.next = next
    self.superseded = superseded
    self.scopeUser = scopeUser
    self.importance = importance
  }
}

/// A hit's text and what it carries beside it.
public struct ItemText: Sendable, Equatable {
  /// The text.
  public var text: String
  /// The stored metadata, as JSON object text (`{}` when none).
  public var metadataJSON: String
  /// The memory's kind (memories only).
  public var memoryKind: MemoryKind?
  /// The first and last turns a summary covers (summaries only).
  public var coveredTurns: (first: Int64?, last: Int64?)?

  /// Creates a text.
  public init(
    text: String, metadataJSON: String = "{}", memoryKind: MemoryKind? = nil,
    coveredTurns: (first: Int64?, last: Int64?)? = nil
  ) {
    self.text = text
    self.metadataJSON = metadataJSON
    self.memoryKind = memoryKind
    self.coveredTurns = coveredTurns
  }

  public static func == (lhs: ItemText, rhs: ItemText) -> Bool {
    lhs.text == rhs.text && lhs.metadataJSON == rhs.metadataJSON && lhs.memoryKind == rhs.memoryKind
      && lhs.coveredTurns?.first == rhs.coveredTurns?.first
      && lhs.coveredTurns?.last == rhs.coveredTurns?.last
  }
}

// Named queries of the read path (search), written once for every store.
extension SearchQueries {
  /// The rows of the candidates `ids` (by kind), and for turns their neighbours in the same
  /// session; ids that no longer exist are left out.
  /// - Complexity: one indexed lookup per id (two more per turn, for its neighbours).
  public func candidateRows(_ ids: [ItemKind: [Int64]]) throws -> [CandidateRow] {
    let sql = dialect
    var rows: [CandidateRow] = []
    rows.reserveCapacity(ids.values.reduce(0) { $0 + $1.count })
    if let messages = ids[.message], !messages.isEmpty {
      try forEachRow(
        scoped: """
          SELECT m.id, m.session_id, coalesce(m.speaker, m.role), m.created_at,
            (SELECT p.id FROM messages p WHERE \(sql.sameUser("p")) AND p.session_id = m.session_id
               AND (p.created_at, p.id) < (m.created_at, m.id) ORDER BY p.created_at DESC, p.id DESC LIMIT 1),
            (SELECT n.id FROM messages n WHERE \(sql.sameUser("n")) AND n.session_id = m.session_id
               AND (n.created_at, n.id) > (m.created_at, m.id) ORDER BY n.created_at, n.id LIMIT 1)
          FROM messages m WHERE m.\(sql.user) = $1 AND \(sql.column("m.id", inIDList: "$2"))
          """, [sql.idList(messages)]
      ) { row in
        rows.append(
          CandidateRow(
            kind: .message, id: row.int64(at: 0), sessionID: row.optionalInt64(at: 1),
            speaker: row.optionalString(at: 2), timestamp: row.date(at: 3),
            previous: row.optionalInt64(at: 4), next: row.optionalInt64(at: 5)))
      }
    }
    try forEachRow(
      of: "memories", "session_id, created_at, superseded_by IS NOT NULL, scope_user, importance",
      ids[.memory]
    ) { row in
      rows.append(
        CandidateRow(
          kind: .memory, id: row.int64(at: 0), sessionID: row.optionalInt64(at: 1),
          timestamp: row.date(at: 2),
          superseded: row.bool(at: 3), scopeUser: row.optionalString(at: 4), importance: row.double(at: 5)))
    }
    try forEachRow(of: "summaries", "session_id, start_at", ids[.summary]) { row in
      rows.append(
        CandidateRow(
          kind: .summary, id: row.int64(at: 0), sessionID: row.optionalInt64(at: 1),
          timestamp: row.date(at: 2)))
    }
    return rows
  }

  /// The ids of this user's turns in the sessions `ids` (a search that leaves them out asks
  /// for that many more candidates and drops these, so they cannot crowd the others out).
  public func messageIDs(inSessions ids: Set<Int64>) throws -> Set<Int64> {
    guard !ids.isEmpty else { return [] }
    // One statement whatever the sessions: they are bound as one list.
    return Set(
      try rows(
        scoped:
          "SELECT id FROM messages WHERE \(dialect.user) = $1 AND \(dialect.column("session_id", inIDList: "$2"))",
        [dialect.idList(ids.sorted())]
      ) { $0.int64(at: 0) })
  }

  /// The texts of the items `ids` (by kind), keyed by kind and id.
  public func itemTexts(_ ids: [ItemKind: [Int64]]) throws -> [ItemKind: [Int64: ItemText]] {
    /// The texts of `table`'s rows among `ids` (nil for none asked), each read by `read`.
    func texts(_ table: String, _ columns: String, _ ids: [Int64]?, _ read: (any Row) -> ItemText) throws
      -> [Int64: ItemText]?
    {
      guard let ids, !ids.isEmpty else { return nil }
      var found: [Int64: ItemText] = [:]
      try forEachRow(of: table, columns, ids) { found[$0.int64(at: 0)] = read($0) }
      return found
    }
    var result: [ItemKind: [Int64: ItemText]] = [:]
    result[.message] = try texts("messages", "content, metadata", ids[.message]) {
      ItemText(text: $0.string(at: 1), metadataJSON: $0.string(at: 2))
    }
    result[.memory] = try texts("memories", "content, metadata, kind", ids[.memory]) {
      ItemText(
        text: $0.string(at: 1), metadataJSON: $0.string(at: 2),
        memoryKind: MemoryKind(rawValue: $0.string(at: 3)))
    }
    result[.summary] = try texts("summaries", "content, first_message_id, last_message_id", ids[.summary]) {
      ItemText(text: $0.string(at: 1), coveredTurns: ($0.optionalInt64(at: 2), $0.optionalInt64(at: 3)))
    }
    return result
  }

  /// Calls `body` with each of the user's rows of `table` among `ids` (none when nil or
  /// empty): `id`, then `columns`.
  private func forEachRow(
    of table: String, _ columns: String, _ ids: [Int64]?, _ body: (any Row) throws -> Void
  )
    throws
  {
    guard let ids, !ids.isEmpty else { return }
    try forEachRow(
      scoped:
        "SELECT id, \(columns) FROM \(table) WHERE \(dialect.user) = $1 AND \(dialect.column("id", inIDList: "$2"))",
      [dialect.idList(ids)], body)
  }
}

// Named queries of sessions, turns and memories as lists, written once for every store.
extension ItemQueries {
  /// A session's id from its external name or its numeric id, or nil.
  public func sessionID(named name: String) throws -> Int64? {
    if let session = try session(externalID: name) { return session.id }
    if let id = Int64(name), try fetch(Session.self, id: id) != nil { return id }
    return nil
  }

  /// Memories (of `kind` when given), newest first.
  public func memories(kind: MemoryKind?, limit: Int, includeSuperseded: Bool) throws -> [Memory] {
    try rows(
      scoped: """
        SELECT \(Memory.selectList) FROM memories
        WHERE \(dialect.user) = $1 AND (CAST($2 AS text) IS NULL OR kind = $2) AND ($3 = 1 OR superseded_by IS NULL)
        ORDER BY created_at DESC, id DESC LIMIT $4
        """, [SQLValue(kind?.rawValue), SQLValue(includeSuperseded), SQLValue(max(0, limit))]
    ) { try Memory(row: $0) }
  }

  /// The last `limit` turns (of `sessionID` when given), oldest first.
  public func recentMessages(limit: Int, sessionID: Int64? = nil) throws -> [Message] {
    try rows(
      scoped: """
        SELECT * FROM (SELECT \(Message.selectList) FROM messages
        WHERE \(dialect.user) = $1 AND (CAST($2 AS bigint) IS NULL OR session_id = $2)
        ORDER BY created_at DESC, id DESC LIMIT $3) r
        ORDER BY created_at, id
        """, [SQLValue(sessionID), SQLValue(max(0, limit))]
    ) { try Message(row: $0) }
  }

  /// The text of the turn before a turn of session `sessionID` said at `time` (see
  /// `ItemQueries.previousTurnContent`).
  public func previousTurnContent(sessionID: Int64, time: Date, id: Int64?) throws -> String? {
    try rows(
      scoped: """
        SELECT content FROM messages
        WHERE \(dialect.user) = $1 AND session_id = $2
          AND (created_at < $3 OR (created_at = $3 AND (CAST($4 AS bigint) IS NULL OR id < $4)))
        ORDER BY created_at DESC, id DESC LIMIT 1
        """, [.integer(sessionID), SQLValue(time), SQLValue(id)]
    ) { $0.string(at: 0) }.first
  }

  /// Marks turns `ids` as covered by summary `summaryID` (nil clears the mark).
  public func setSummary(_ summaryID: Int64?, forMessages ids: [Int64]) throws {
    guard !ids.isEmpty else { return }
    try execute(
      scoped:
        "UPDATE messages SET summary_id = $2 WHERE \(dialect.user) = $1 AND \(dialect.column("id", inIDList: "$3"))",
      [SQLValue(summaryID), dialect.idList(ids)])
  }

  /// Records that memories `ids` were retrieved at `time` (access count and last access).
  public func recordMemoryAccess(ids: [Int64], at time: Date) throws {
    for id in ids {
      try execute(
        scoped: """
          UPDATE memories SET access_count = access_count + 1, last_accessed_at = $2
          WHERE \(dialect.user) = $1 AND id = $3
          """, [SQLValue(time), .integer(id)])
    }
  }

  /// Adds batched access statistics: `count` retrievals of memory `id`, the last at
  /// `lastAccess` (a memory forgotten meanwhile is skipped).
  public func recordMemoryAccess(_ entries: [(id: Int64, count: Int, lastAccess: Int64)]) throws {
    for entry in entries {
      try execute(
        scoped: """
          UPDATE memories SET access_count = access_count + $2,
            last_accessed_at = \(dialect.greatest("coalesce(last_accessed_at, 0)", "$3"))
          WHERE \(dialect.user) = $1 AND id = $4
          """, [SQLValue(entry.count), .integer(entry.lastAccess), .integer(entry.id)])
    }
  }

  /// Marks memory `id` as replaced by `newID` at `time`.
  /// - Throws: `StoreError.notFound` when the user has no memory `id`.
  public func supersedeMemory(_ id: Int64, by newID: Int64, at time: Date) throws {
    let changed = try execute(
      scoped:
        "UPDATE memories SET superseded_by = $2, updated_at = $3 WHERE \(dialect.user) = $1 AND id = $4",
      [.integer(newID), SQLValue(time), .integer(id)])
    guard changed > 0 else { throw StoreError.notFound(table: "memories", id: id) }
  }
}
