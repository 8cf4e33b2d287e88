import EngramCore
import Foundation

/// A row type of a rowid table, with generic insert / update / delete / fetch / list /
/// count on `Connection`.
///
/// Every record table has a `user_id` column (migration 6) that the record itself does not
/// carry: the generic operations write the connection's `user` and read, change and count
/// only that user's rows.
///
/// Times are `Int64` milliseconds since the Unix epoch (UTC) everywhere in the store, as
/// in the database; `Timestamp` converts.
public protocol StoredRecord: Sendable {
  /// The table's name.
  static var tableName: String { get }
  /// The columns other than `id`, in the order `encode(to:)` writes and `init(row:)` reads
  /// them (after `id`, at column 0).
  static var columns: [String] { get }
  /// The time column filtered by `RecordFilter.timeRange`, if the table has one.
  static var timeColumn: String? { get }
  /// The session column filtered by `RecordFilter.sessionID`, if the table has one.
  static var sessionColumn: String? { get }
  /// The row id; nil before insertion.
  var id: Int64? { get set }
  /// Appends the values of the non-id columns, in `columns` order: what every backend binds.
  func encode(to row: inout [SQLValue]) throws
  /// Appends the values as SQLite keeps them: `encode(to:)`, unless the table keeps a smaller
  /// form there (see `EmbeddingRow`).
  func encodeStored(to row: inout [SQLValue]) throws
  /// The columns SQLite reads for `init(row:)`, `id` first (`columns`, unless the table
  /// keeps a smaller form).
  static var selectList: String { get }
  /// Reads a row of any backend whose column 0 is `id`, followed by `columns`.
  /// - Throws: `StoreError.invalidColumnValue` for a value the record's type refuses.
  init(row: some Row) throws
  /// Refuses invalid values in Swift before any SQL runs. `embeddingModel` reads the
  /// store's configured embedding model, for records checked against it (`EmbeddingRow`);
  /// no other record calls it.
  func validate(embeddingModel: () throws -> EmbeddingModel?) throws
}

extension StoredRecord {
  /// No validation beyond the schema's constraints.
  public func validate(embeddingModel: () throws -> EmbeddingModel?) throws {}
  /// No time filter.
  public static var timeColumn: String? { nil }
  /// No session filter.
  public static var sessionColumn: String? { nil }
  /// The columns themselves.
  public static var selectList: String { (["id"] + columns).joined(separator: ", ") }
  /// The values themselves.
  public func encodeStored(to row: inout [SQLValue]) throws { try encode(to: &row) }

  /// The values as SQLite keeps them (`encodeStored(to:)`).
  func storedValues() throws -> [SQLValue] {
    var row: [SQLValue] = []
    row.reserveCapacity(Self.columns.count)
    try encodeStored(to: &row)
    return row
  }

  /// The values of the non-id columns, in `columns` order (`encode(to:)`).
  public func encoded() throws -> [SQLValue] {
    var row: [SQLValue] = []
    row.reserveCapacity(Self.columns.count)
    try encode(to: &row)
    return row
  }

  /// Validates `records` in order, reading the store's embedding model at most once.
  /// - Throws: the first invalid record's error.
  public static func validate(
    _ records: some Sequence<Self>, embeddingModel: () throws -> EmbeddingModel?
  ) throws {
    var model: EmbeddingModel??
    for record in records {
      try record.validate {
        if let model { return model }
        let configured = try embeddingModel()
        model = .some(configured)
        return configured
      }
    }
  }
}

/// Which page of a listing to return. Rows come in ascending id order.
public struct Page: Sendable, Hashable {
  /// The maximum number of rows.
  public var limit: Int
  /// Rows to skip (ignored when `afterID` is set).
  public var offset: Int
  /// Return rows with an id greater than this (keyset pagination: stable under inserts).
  public var afterID: Int64?

  /// A page of `limit` rows after skipping `offset`, or after id `afterID`.
  public init(limit: Int = 100, offset: Int = 0, afterID: Int64? = nil) {
    self.limit = limit
    self.offset = offset
    self.afterID = afterID
  }

  /// Every row.
  public static let all = Page(limit: Int(Int32.max))
}

/// Filters that apply to tables with a session and/or a time column.
public struct RecordFilter: Sendable, Hashable {
  /// Only rows of this session (ignored for tables without a session column).
  public var sessionID: Int64?
  /// Only rows whose time column lies in this half-open range of milliseconds (ignored
  /// for tables without a time column).
  public var timeRange: Range<Int64>?

  /// A filter; no arguments means no filtering.
  public init(sessionID: Int64? = nil, timeRange: Range<Int64>? = nil) {
    self.sessionID = sessionID
    self.timeRange = timeRange
  }

  /// No filtering.
  public static let none = RecordFilter()
}

extension Connection {
  /// Inserts `record` (its `id` is used when set, else assigned) and returns the row id.
  /// - Throws: the record's validation error, or `SQLiteError` (`.constraint`).
  @discardableResult
  public func insert<R: StoredRecord>(_ record: R) throws -> Int64 {
    try record.validate(embeddingModel: embeddingModel)
    let statement = try recordStatement(R.self, .insert) {
      let names = R.columns + ["id", "user_id"]
      let placeholders = (1...names.count).map { "?\($0)" }.joined(separator: ", ")
      return "INSERT INTO \(R.tableName) (\(names.joined(separator: ", "))) VALUES (\(placeholders))"
    }
    try statement.bind(try record.storedValues(), startingAt: 1)
    try statement.bind(record.id, at: R.columns.count + 1)
    try statement.bind(user, at: R.columns.count + 2)
    try statement.execute()
    return lastInsertRowID
  }

  /// Writes every column of `record` over the row with its id.
  /// - Throws: `StoreError.missingID`, `StoreError.notFound`, validation errors, `SQLiteError`.
  public func update<R: StoredRecord>(_ record: R) throws {
    guard let id = record.id else { throw StoreError.missingID(table: R.tableName) }
    try record.validate(embeddingModel: embeddingModel)
    let statement = try recordStatement(R.self, .update) {
      let assignments = R.columns.enumerated().map { "\($1) = ?\($0 + 1)" }.joined(separator: ", ")
      return
        "UPDATE \(R.tableName) SET \(assignments) WHERE id = ?\(R.columns.count + 1) AND user_id = ?\(R.columns.count + 2)"
    }
    try statement.bind(try record.storedValues(), startingAt: 1)
    try statement.bind(id, at: R.columns.count + 1)
    try statement.bind(user, at: R.columns.count + 2)
    try statement.execute()
    guard changes > 0 else { throw StoreError.notFound(table: R.tableName, id: id) }
  }

  enum RecordOperation: Int {
    case insert, update, maxID
  }

  func recordStatement<R: StoredRecord>(
    _ type: R.Type, _ operation: RecordOperation, sql: () -> String
  ) throws -> Statement {
    let key = RecordStatementKey(type: ObjectIdentifier(R.self), operation: operation.rawValue)
    if let statement = recordStatements[key] {
      statement.clear()
      return statement
    }
    let statement = try prepare(sql())
    recordStatements[key] = statement
    return statement
  }
}

// The record reads and deletes, written once for every store.
extension RecordQueries {
  /// Deletes the row `id` of `type`; returns whether it existed.
  @discardableResult
  public func delete<R: StoredRecord>(_ type: R.Type, id: Int64) throws -> Bool {
    try execute(scoped: "DELETE FROM \(R.tableName) WHERE \(dialect.user) = $1 AND id = $2", [.integer(id)])
      > 0
  }

  /// The row `id` of `type`, or nil.
  public func fetch<R: StoredRecord>(_ type: R.Type, id: Int64) throws -> R? {
    try rows(
      scoped:
        "SELECT \(dialect.selectList(R.self)) FROM \(R.tableName) WHERE \(dialect.user) = $1 AND id = $2",
      [.integer(id)]
    ) { try R(row: $0) }.first
  }

  /// A page of `type`'s rows in id order, filtered by session and time where they apply.
  /// - Throws: `StoreError.invalidPage`, the backend's error.
  public func list<R: StoredRecord>(_ type: R.Type, filter: RecordFilter, page: Page) throws -> [R] {
    guard page.limit >= 0, page.offset >= 0 else {
      throw StoreError.invalidPage(limit: page.limit, offset: page.offset)
    }
    var (clause, arguments) = whereClause(R.self, filter)
    if let after = page.afterID {
      arguments.append(.integer(after))
      clause += " AND id > $\(arguments.count + 1)"
    }
    arguments.append(.integer(Int64(page.limit)))
    arguments.append(.integer(Int64(page.afterID == nil ? page.offset : 0)))
    return try rows(
      scoped: """
        SELECT \(dialect.selectList(R.self)) FROM \(R.tableName) WHERE \(clause)
        ORDER BY id LIMIT $\(arguments.count) OFFSET $\(arguments.count + 1)
        """, arguments
    ) { try R(row: $0) }
  }

  /// This user's rows of `R` that `query` selects.
  public func select<R: StoredRecord>(_ query: RecordQuery<R>) throws -> [R] {
    let (conditions, tail, arguments) = query.clauses { "$\($0)" }
    return try rows(
      scoped:
        "SELECT \(dialect.selectList(R.self)) FROM \(R.tableName) WHERE \(dialect.user) = $1\(conditions)\(tail)",
      arguments
    ) { try R(row: $0) }
  }

  /// The number of `type`'s rows matching `filter`.
  public func count<R: StoredRecord>(_ type: R.Type, filter: RecordFilter) throws -> Int {
    let (clause, arguments) = whereClause(R.self, filter)
    return Int(try integer(scoped: "SELECT count(*) FROM \(R.tableName) WHERE \(clause)", arguments) ?? 0)
  }

  /// Every row of `type` matching `filter` (default: all), in id order (first page of 100).
  public func list<R: StoredRecord>(_ type: R.Type, filter: RecordFilter = .none) throws -> [R] {
    try list(type, filter: filter, page: Page())
  }

  /// A page of `type`'s rows.
  public func list<R: StoredRecord>(_ type: R.Type, page: Page) throws -> [R] {
    try list(type, filter: .none, page: page)
  }

  /// The number of `type`'s rows.
  public func count<R: StoredRecord>(_ type: R.Type) throws -> Int {
    try count(type, filter: .none)
  }

  /// The user's condition and those of `filter` that apply to `R`, with their arguments
  /// (from `$2`).
  private func whereClause<R: StoredRecord>(_ type: R.Type, _ filter: RecordFilter) -> (String, [SQLValue]) {
    var clause = "\(dialect.user) = $1"
    var arguments: [SQLValue] = []
    if let session = filter.sessionID, let column = R.sessionColumn {
      arguments.append(.integer(session))
      clause += " AND \(column) = $\(arguments.count + 1)"
    }
    if let range = filter.timeRange, let column = R.timeColumn {
      arguments.append(.integer(range.lowerBound))
      clause += " AND \(column) >= $\(arguments.count + 1)"
      arguments.append(.integer(range.upperBound))
      clause += " AND \(column) < $\(arguments.count + 1)"
    }
    return (clause, arguments)
  }
}
