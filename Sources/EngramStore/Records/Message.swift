import Foundation

/// Who wrote a message.
public enum MessageRole: String, Sendable, Hashable, CaseIterable, Codable {
  /// Instructions to the model.
  case system
  /// The person.
  case user
  /// The assistant.
  case assistant
  /// A tool's output.
  case tool
}

/// One turn of the conversation log (`messages`).
public struct Message: StoredRecord, Hashable {
  /// The row id; nil before insertion.
  public var id: Int64?
  /// The session, if any.
  public var sessionID: Int64?
  /// Who wrote it.
  public var role: MessageRole
  /// A speaker name (for multi-party logs).
  public var speaker: String?
  /// The text (any length; NUL bytes are kept).
  public var content: String
  /// When it was written.
  public var createdAt: Date
  /// Tokens, as counted by the engine (0 when unknown).
  public var tokenCount: Int
  /// A JSON object (text).
  public var metadata: String
  /// The summary covering this turn, set by compaction.
  public var summaryID: Int64?
  /// The key of a turn read from a file (`ingest`), unique per user; nil for turns stored
  /// otherwise.
  public var sourceKey: Int64?

  /// Creates a message.
  public init(
    id: Int64? = nil, sessionID: Int64? = nil, role: MessageRole, speaker: String? = nil,
    content: String, createdAt: Date, tokenCount: Int = 0, metadata: String = "{}", summaryID: Int64? = nil,
    sourceKey: Int64? = nil
  ) {
    self.id = id
    self.sessionID = sessionID
    self.role = role
    self.speaker = speaker
    self.content = content
    self.createdAt = createdAt
    self.tokenCount = tokenCount
    self.metadata = metadata
    self.summaryID = summaryID
    self.sourceKey = sourceKey
  }

  /// The table.
  public static let tableName = "messages"
  /// The non-id columns, in binding order.
  public static let columns = [
    "session_id", "role", "speaker", "content", "created_at", "token_count", "metadata", "summary_id",
    "source_key",
  ]
  /// The column time filters apply to.
  public static var timeColumn: String? { "created_at" }
  /// The column session filters apply to.
  public static var sessionColumn: String? { "session_id" }

  /// Appends the non-id columns.
  public func encode(to row: inout [SQLValue]) throws {
    row += [
      SQLValue(sessionID), SQLValue(role), SQLValue(speaker), SQLValue(content), SQLValue(createdAt),
      SQLValue(tokenCount), SQLValue(metadata), SQLValue(summaryID), SQLValue(sourceKey),
    ]
  }

  /// Reads a row (id first).
  public init(row: some Row) throws {
    id = row.int64(at: 0)
    sessionID = row.optionalInt64(at: 1)
    role = try row.enumValue(MessageRole.self, at: 2, table: "messages", column: "role")
    speaker = row.optionalString(at: 3)
    content = row.string(at: 4)
    createdAt = row.date(at: 5)
    tokenCount = row.int(at: 6)
    metadata = row.string(at: 7)
    summaryID = row.optionalInt64(at: 8)
    sourceKey = row.optionalInt64(at: 9)
  }
}

extension Connection {
  /// The last `limit` messages (of `sessionID` when given), oldest first.
  public func recentMessages(limit: Int, sessionID: Int64? = nil) throws -> [Message] {
    let statement = try cachedStatement(
      """
      SELECT * FROM (SELECT \(Message.selectList) FROM messages
      WHERE user_id = ?3 AND (?1 IS NULL OR session_id = ?1) ORDER BY created_at DESC, id DESC LIMIT ?2)
      ORDER BY created_at, id
      """)
    try statement.bind(sessionID, at: 1)
    try statement.bind(max(0, limit), at: 2)
    try statement.bind(user, at: 3)
    return try statement.map { try Message(row: $0) }
  }

  /// The text of the turn before a turn of session `sessionID` said at `time` (see
  /// `ItemQueries.previousTurnContent`).
  public func previousTurnContent(sessionID: Int64, time: Date, id: Int64?) throws -> String? {
    let statement = try cachedStatement(
      """
      SELECT content FROM messages
      WHERE user_id = ?4 AND session_id = ?1
        AND (created_at < ?2 OR (created_at = ?2 AND (?3 IS NULL OR id < ?3)))
      ORDER BY created_at DESC, id DESC LIMIT 1
      """)
    try statement.bind(sessionID, at: 1)
    try statement.bind(time, at: 2)
    try statement.bind(id, at: 3)
    try statement.bind(user, at: 4)
    return try statement.map { $0.string(at: 0) }.first
  }

  /// Marks messages `ids` as covered by summary `summaryID` (nil clears the mark).
  public func setSummary(_ summaryID: Int64?, forMessages ids: [Int64]) throws {
    let statement = try cachedStatement("UPDATE messages SET summary_id = ?1 WHERE id = ?2 AND user_id = ?3")
    for id in ids {
      try statement.bind(summaryID, at: 1)
      try statement.bind(id, at: 2)
      try statement.bind(user, at: 3)
      try statement.execute()
    }
  }
}

extension RecordQueries {
  /// The turns of session `sessionID` in time order.
  public func messages(inSession sessionID: Int64) throws -> [Message] {
    try select(
      RecordQuery<Message>(
        [.init("session_id", .integer(sessionID))], order: [.init("created_at"), .init("id")]))
  }
}
