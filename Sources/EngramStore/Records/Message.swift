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

extension RecordQueries {
  /// The turns of session `sessionID` in time order.
  public func messages(inSession sessionID: Int64) throws -> [Message] {
    try select(
      RecordQuery<Message>(
        [.init("session_id", .integer(sessionID))], order: [.init("created_at"), .init("id")]))
  }
}
