import Foundation

/// A structured summary of a span of the conversation log (`summaries`).
public struct Summary: StoredRecord, Hashable {
  /// The row id; nil before insertion.
  public var id: Int64?
  /// The session summarized, if any.
  public var sessionID: Int64?
  /// The first message covered.
  public var firstMessageID: Int64?
  /// The last message covered.
  public var lastMessageID: Int64?
  /// Start of the span.
  public var startAt: Date
  /// End of the span.
  public var endAt: Date
  /// The summary text (indexed for full-text search).
  public var content: String
  /// The structured summary, JSON text (see `schemas/structured-summary.schema.json`).
  public var structured: String
  /// What produced it ("extractive" or a model name).
  public var generator: String
  /// When it was written.
  public var createdAt: Date

  /// Creates a summary.
  public init(
    id: Int64? = nil, sessionID: Int64? = nil, firstMessageID: Int64? = nil, lastMessageID: Int64? = nil,
    startAt: Date, endAt: Date, content: String, structured: String = "{}",
    generator: String = "extractive",
    createdAt: Date
  ) {
    self.id = id
    self.sessionID = sessionID
    self.firstMessageID = firstMessageID
    self.lastMessageID = lastMessageID
    self.startAt = startAt
    self.endAt = endAt
    self.content = content
    self.structured = structured
    self.generator = generator
    self.createdAt = createdAt
  }

  /// The table.
  public static let tableName = "summaries"
  /// The non-id columns, in binding order.
  public static let columns = [
    "session_id", "first_message_id", "last_message_id", "start_at", "end_at", "content", "structured",
    "generator", "created_at",
  ]
  /// The column time filters apply to.
  public static var timeColumn: String? { "start_at" }
  /// The column session filters apply to.
  public static var sessionColumn: String? { "session_id" }

  /// Appends the non-id columns.
  public func encode(to row: inout [SQLValue]) throws {
    row += [
      SQLValue(sessionID), SQLValue(firstMessageID), SQLValue(lastMessageID), SQLValue(startAt),
      SQLValue(endAt), SQLValue(content), SQLValue(structured), SQLValue(generator), SQLValue(createdAt),
    ]
  }

  /// Reads a row (id first).
  public init(row: some Row) throws {
    id = row.int64(at: 0)
    sessionID = row.optionalInt64(at: 1)
    firstMessageID = row.optionalInt64(at: 2)
    lastMessageID = row.optionalInt64(at: 3)
    startAt = row.date(at: 4)
    endAt = row.date(at: 5)
    content = row.string(at: 6)
    structured = row.string(at: 7)
    generator = row.string(at: 8)
    createdAt = row.date(at: 9)
  }
}
