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

// Named queries of the read path (search).
extension Connection {
  /// The rows of the candidates `ids` (by kind), and for turns their neighbours in the same
  /// session; ids that no longer exist are left out.
  /// - Complexity: one indexed lookup per id (two more per turn, for its neighbours).
  public func candidateRows(_ ids: [ItemKind: [Int64]]) throws -> [CandidateRow] {
    var rows: [CandidateRow] = []
    rows.reserveCapacity(ids.values.reduce(0) { $0 + $1.count })
    if let messages = ids[.message], !messages.isEmpty {
      try forEachRow(
        """
        SELECT m.id, m.session_id, coalesce(m.speaker, m.role), m.created_at,
          (SELECT p.id FROM messages p WHERE p.session_id = m.session_id
             AND (p.created_at, p.id) < (m.created_at, m.id) ORDER BY p.created_at DESC, p.id DESC LIMIT 1),
          (SELECT n.id FROM messages n WHERE n.session_id = m.session_id
             AND (n.created_at, n.id) > (m.created_at, m.id) ORDER BY n.created_at, n.id LIMIT 1)
        FROM messages m WHERE m.id IN (SELECT value FROM json_each(?1)) AND m.user_id = ?2
        """, ids: messages
      ) { row in
        rows.append(
          CandidateRow(
            kind: .message, id: row.int64(at: 0), sessionID: row.optionalInt64(at: 1),
            speaker: row.optionalString(at: 2), timestamp: Timestamp.date(row.int64(at: 3)),
            previous: row.optionalInt64(at: 4), next: row.optionalInt64(at: 5)))
      }
    }
    if let memories = ids[.memory], !memories.isEmpty {
      try forEachRow(
        """
        SELECT id, session_id, created_at, superseded_by IS NOT NULL, scope_user, importance
        FROM memories WHERE id IN (SELECT value FROM json_each(?1)) AND user_id = ?2
        """, ids: memories
      ) { row in
        rows.append(
          CandidateRow(
            kind: .memory, id: row.int64(at: 0), sessionID: row.optionalInt64(at: 1),
            timestamp: Timestamp.date(row.int64(at: 2)), superseded: row.bool(at: 3),
            scopeUser: row.optionalString(at: 4), importance: row.double(at: 5)))
      }
    }
    if let summaries = ids[.summary], !summaries.isEmpty {
      try forEachRow(
        "SELECT id, session_id, start_at FROM summaries WHERE id IN (SELECT value FROM json_each(?1)) AND user_id = ?2",
        ids: summaries
      ) { row in
        rows.append(
          CandidateRow(
            kind: .summary, id: row.int64(at: 0), sessionID: row.optionalInt64(at: 1),
            timestamp: Timestamp.date(row.int64(at: 2))))
      }
    }
    return rows
  }

  /// The texts of the items `ids` (by kind), keyed by kind and id.
  public func itemTexts(_ ids: [ItemKind: [Int64]]) throws -> [ItemKind: [Int64: ItemText]] {
    var texts: [ItemKind: [Int64: ItemText]] = [:]
    if let messages = ids[.message], !messages.isEmpty {
      var found: [Int64: ItemText] = [:]
      try forEachRow(
        "SELECT id, content, metadata FROM messages WHERE id IN (SELECT value FROM json_each(?1)) AND user_id = ?2",
        ids: messages
      ) { row in
        found[row.int64(at: 0)] = ItemText(text: row.string(at: 1), metadataJSON: row.string(at: 2))
      }
      texts[.message] = found
    }
    if let memories = ids[.memory], !memories.isEmpty {
      var found: [Int64: ItemText] = [:]
      try forEachRow(
        "SELECT id, content, metadata, kind FROM memories WHERE id IN (SELECT value FROM json_each(?1)) AND user_id = ?2",
        ids: memories
      ) { row in
        found[row.int64(at: 0)] = ItemText(
          text: row.string(at: 1), metadataJSON: row.string(at: 2),
          memoryKind: MemoryKind(rawValue: row.string(at: 3)))
      }
      texts[.memory] = found
    }
    if let summaries = ids[.summary], !summaries.isEmpty {
      var found: [Int64: ItemText] = [:]
      try forEachRow(
        """
        SELECT id, content, first_message_id, last_message_id
        FROM summaries WHERE id IN (SELECT value FROM json_each(?1)) AND user_id = ?2
        """, ids: summaries
      ) { row in
        found[row.int64(at: 0)] = ItemText(
          text: row.string(at: 1), coveredTurns: (row.optionalInt64(at: 2), row.optionalInt64(at: 3)))
      }
      texts[.summary] = found
    }
    return texts
  }

  /// A session's id from its external name or its numeric id, or nil.
  public func sessionID(named name: String) throws -> Int64? {
    if let session = try session(externalID: name) { return session.id }
    if let id = Int64(name), try fetch(Session.self, id: id) != nil { return id }
    return nil
  }

  /// Runs `sql`, whose `?1` is `ids` as a JSON array (for `json_each`) and `?2` the user,
  /// calling `body` per row.
  func forEachRow(_ sql: String, ids: [Int64], _ body: (Statement) throws -> Void) throws {
    let statement = try cachedStatement(sql)
    try statement.bind(Self.jsonIDList(ids), at: 1)
    try statement.bind(user, at: 2)
    try statement.forEachRow(body)
  }

  /// Ids as a JSON array for `json_each` (built directly: this runs on every search).
  static func jsonIDList(_ ids: [Int64]) -> String {
    var text = "["
    text.reserveCapacity(ids.count * 8 + 2)
    for (position, id) in ids.enumerated() {
      if position > 0 { text += "," }
      text += String(id)
    }
    text += "]"
    return text
  }
}

// Named queries of memories as lists.
extension Connection {
  /// Memories (of `kind` when given), newest first.
  public func memories(kind: MemoryKind?, limit: Int, includeSuperseded: Bool) throws -> [Memory] {
    let statement = try cachedStatement(
      """
      SELECT \(Memory.selectList) FROM memories
      WHERE user_id = ?4 AND (?1 IS NULL OR kind = ?1) AND (?2 OR superseded_by IS NULL)
      ORDER BY created_at DESC, id DESC LIMIT ?3
      """)
    try statement.bind(kind?.rawValue, at: 1)
    try statement.bind(includeSuperseded, at: 2)
    try statement.bind(limit, at: 3)
    try statement.bind(user, at: 4)
    return try statement.map { try Memory(row: $0) }
  }
}
