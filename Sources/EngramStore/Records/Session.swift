import Foundation

/// A conversation session (`sessions`).
public struct Session: StoredRecord, Hashable {
  /// The row id; nil before insertion.
  public var id: Int64?
  /// An id from the importing system (unique when set).
  public var externalID: String?
  /// A title for people.
  public var title: String?
  /// Start.
  public var startedAt: Date
  /// End.
  public var endedAt: Date?
  /// A JSON object (text).
  public var metadata: String

  /// Creates a session.
  public init(
    id: Int64? = nil, externalID: String? = nil, title: String? = nil, startedAt: Date,
    endedAt: Date? = nil, metadata: String = "{}"
  ) {
    self.id = id
    self.externalID = externalID
    self.title = title
    self.startedAt = startedAt
    self.endedAt = endedAt
    self.metadata = metadata
  }

  /// The table.
  public static let tableName = "sessions"
  /// The non-id columns, in binding order.
  public static let columns = ["external_id", "title", "started_at", "ended_at", "metadata"]
  /// The column time filters apply to.
  public static var timeColumn: String? { "started_at" }

  /// Appends the non-id columns.
  public func encode(to row: inout [SQLValue]) throws {
    row += [
      SQLValue(externalID), SQLValue(title), SQLValue(startedAt), SQLValue(endedAt), SQLValue(metadata),
    ]
  }

  /// Reads a row (id first).
  public init(row: some Row) throws {
    id = row.int64(at: 0)
    externalID = row.optionalString(at: 1)
    title = row.optionalString(at: 2)
    startedAt = row.date(at: 3)
    endedAt = row.optionalDate(at: 4)
    metadata = row.string(at: 5)
  }
}

extension RecordQueries {
  /// The session with `externalID`, or nil.
  public func session(externalID: String) throws -> Session? {
    try select(RecordQuery<Session>([.init("external_id", .text(externalID))])).first
  }
}
