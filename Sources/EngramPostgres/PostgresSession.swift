import EngramCore
import EngramStore
import Foundation

/// One user's view of a PostgreSQL database: the operations the SQLite store offers on
/// `Connection`, every statement scoped to ``userScope`` (a row of another user can be
/// neither read, written nor pointed at: the schema's keys include the scope too).
///
/// Not `Sendable`: one connection, used by one thread or task at a time.
public final class PostgresSession {
  /// The connection.
  public let connection: PostgresConnection
  /// The user whose rows this session reads and writes.
  public let userScope: String

  /// A session of `userScope` on `connection` (whose database is migrated).
  /// - Throws: `StoreError.invalidUserScope` for an empty scope or one over 256 bytes.
  public init(connection: PostgresConnection, userScope: String) throws {
    guard Self.isValidScope(userScope) else { throw PostgresStoreError.invalidUserScope(userScope) }
    self.connection = connection
    self.userScope = userScope
  }

  /// Whether `scope` can name a user: 1 to 256 characters, no NUL.
  public static func isValidScope(_ scope: String) -> Bool {
    !scope.isEmpty && scope.count <= 256 && !scope.utf8.contains(0)
  }

  var scope: PostgresValue { .text(userScope) }

  /// Runs `body` in a transaction (a savepoint when one is open): all of it or nothing.
  public func transaction<T>(_ body: () throws -> T) throws -> T {
    try connection.transaction(body)
  }

  // MARK: Meta

  /// The user's `meta` value of `key`.
  public func meta(_ key: String) throws -> String? {
    try connection.execute("SELECT value FROM meta WHERE user_scope = $1 AND key = $2", [scope, .text(key)])
      .rows.first?.string(0)
  }

  /// Sets the user's `meta` value of `key`.
  public func setMeta(_ key: String, _ value: String) throws {
    try connection.execute(
      """
      INSERT INTO meta (user_scope, key, value) VALUES ($1, $2, $3)
      ON CONFLICT (user_scope, key) DO UPDATE SET value = excluded.value
      """, [scope, .text(key), .text(value)])
  }

  /// Deletes the user's `meta` value of `key`; returns whether it existed.
  @discardableResult
  public func deleteMeta(_ key: String) throws -> Bool {
    try connection.execute("DELETE FROM meta WHERE user_scope = $1 AND key = $2", [scope, .text(key)])
      .rowsAffected > 0
  }

  // MARK: Records

  /// The indexed terms of a row of `table` (nil for tables without a keyword index).
  static func ftsText(table: String, columns: [String], values: [SQLValue]) -> String? {
    func value(_ name: String) -> SQLValue? { columns.firstIndex(of: name).map { values[$0] } }
    func text(_ name: String) -> String? {
      if case .text(let text)? = value(name) { return text }
      return nil
    }
    switch table {
    case Message.tableName:
      var time: Int64 = 0
      if case .integer(let t)? = value("created_at") { time = t }
      return PostgresFullText.indexText(
        ofMessage: text("content") ?? "", speaker: text("speaker"), time: time)
    case Memory.tableName, Summary.tableName:
      return PostgresFullText.indexText(of: text("content") ?? "")
    default:
      return nil
    }
  }

  /// The columns written for `R` (with `fts_text` where the table has a keyword index) and
  /// their values.
  func writeColumns<R: StoredRecord>(_ record: R) throws -> (names: [String], values: [PostgresValue]) {
    let values = try record.encoded()
    var names = R.columns
    var parameters = values.map(\.postgres)
    if let fts = Self.ftsText(table: R.tableName, columns: R.columns, values: values) {
      names.append("fts_text")
      parameters.append(.text(fts))
    }
    return (names, parameters)
  }

  /// Inserts `record` for this user (its `id` is used when set, else a new one is drawn;
  /// ids are never reused) and returns the row id.
  @discardableResult
  public func insert<R: StoredRecord>(_ record: R) throws -> Int64 {
    try record.validate(embeddingModel: embeddingModel)
    var (names, parameters) = try writeColumns(record)
    names.insert("user_scope", at: 0)
    parameters.insert(scope, at: 0)
    if let id = record.id {
      names.append("id")
      parameters.append(.int(id))
    }
    let placeholders = (1...names.count).map { "$\($0)" }.joined(separator: ", ")
    let inserted =
      try connection.execute(
        "INSERT INTO \(R.tableName) (\(names.joined(separator: ", "))) VALUES (\(placeholders)) RETURNING id",
        parameters)[0].int64(0) ?? 0
    if record.id != nil { try advanceSequence(R.tableName, past: inserted) }
    return inserted
  }

  /// Moves `table`'s id sequence past `id` (an explicit id), so no later row reuses it.
  func advanceSequence(_ table: String, past id: Int64) throws {
    try connection.execute(
      """
      SELECT setval(s.name, $2) FROM (SELECT pg_get_serial_sequence($1, 'id')::regclass AS name) s
      WHERE $2 > coalesce(pg_sequence_last_value(s.name), 0)
      """,
      [.text(table), .int(id)])
  }

  /// Inserts `records` in one transaction; returns their ids in order.
  @discardableResult
  public func insert<R: StoredRecord>(contentsOf records: [R]) throws -> [Int64] {
    try R.validate(records, embeddingModel: embeddingModel)
    // Rows with ids of their own keep the one-by-one path (it moves the sequence past them).
    if records.count > 1 && records.allSatisfy({ $0.id == nil }) { return try insertBatch(records) }
    return try transaction { try records.map { try insert($0) } }
  }

  /// Writes every column of `record` over this user's row with its id.
  /// - Throws: `StoreError.missingID`, `StoreError.notFound`, validation errors, `PostgresError`.
  public func update<R: StoredRecord>(_ record: R) throws {
    guard let id = record.id else { throw StoreError.missingID(table: R.tableName) }
    try record.validate(embeddingModel: embeddingModel)
    let (names, parameters) = try writeColumns(record)
    let assignments = names.enumerated().map { "\($1) = $\($0 + 3)" }.joined(separator: ", ")
    let updated = try connection.execute(
      "UPDATE \(R.tableName) SET \(assignments) WHERE user_scope = $1 AND id = $2",
      [scope, .int(id)] + parameters)
    guard updated.rowsAffected > 0 else { throw StoreError.notFound(table: R.tableName, id: id) }
  }

  /// Runs `sql` (its `$1` is this user's scope) and reads each row as `R`.
  func records<R>(_ sql: String, _ arguments: [PostgresValue] = [], _ read: (ValueRow) throws -> R) throws
    -> [R]
  {
    try Self.rows(of: try connection.execute(sql, [scope] + arguments), read)
  }

  /// Reads every row of `result` with `read`, its values as the SQLite store holds them (so
  /// a record refuses the same malformed values in both stores).
  static func rows<R>(of result: PostgresResult, _ read: (ValueRow) throws -> R) throws -> [R] {
    try result.rows.map { try read(try $0.valueRow()) }
  }

  /// Runs `sql` with this user's scope as `$1`; returns the rows affected.
  @discardableResult
  func run(_ sql: String, _ arguments: [PostgresValue] = []) throws -> Int {
    try connection.execute(sql, [scope] + arguments).rowsAffected
  }

  /// The first column of the first row of `sql` (scope as `$1`) as an integer.
  func scalarInt(_ sql: String, _ arguments: [PostgresValue] = []) throws -> Int64? {
    try connection.execute(sql, [scope] + arguments).rows.first?.int64(0)
  }

  /// `ids` as a `bigint[]` parameter.
  static func idArray(_ ids: some Collection<Int64>) -> PostgresValue {
    .text("{" + ids.map(String.init).joined(separator: ",") + "}")
  }
}

/// Errors of the PostgreSQL store's own rules.
public enum PostgresStoreError: Error, Sendable, Hashable {
  /// A user scope that is empty, longer than 256 characters or holds a NUL character.
  case invalidUserScope(String)
  /// Every connection of a shared pool stayed in use longer than its wait timeout.
  case poolExhausted(size: Int)
}

/// A PostgreSQL session runs the queries written once for every store, its scope as `$1`.
extension PostgresSession: SQLSession {
  /// PostgreSQL.
  public var dialect: SQLDialect { .postgresql }

  /// Runs `sql` with the scope as `$1`; returns the rows affected.
  @discardableResult
  public func execute(scoped sql: String, _ arguments: [SQLValue]) throws -> Int {
    try run(sql, arguments.map(\.postgres))
  }

  /// Runs `sql` with the scope as `$1`; each row as the SQLite store holds its values.
  public func forEachRow(scoped sql: String, _ arguments: [SQLValue], _ body: (any Row) throws -> Void) throws
  {
    for row in try connection.execute(sql, [scope] + arguments.map(\.postgres)).rows {
      try body(try row.valueRow())
    }
  }

  /// `transaction` (a savepoint inside an open one).
  public func atomically<T>(_ body: () throws -> T) throws -> T {
    try transaction(body)
  }
}
