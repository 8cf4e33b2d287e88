import CSQLite
import EngramCore
import Foundation

/// A prepared SQLite statement. It owns its `sqlite3_stmt` and finalizes it in `deinit`.
/// While stepping, it is the current ``Row`` (the typed reads beyond its own are ``Row``'s).
///
/// Bind indices are 1-based and column indices 0-based, as in SQLite. Not `Sendable`: a
/// statement belongs to its connection's thread of use.
public final class Statement {
  /// The raw handle, for code that needs the C API directly.
  public let handle: OpaquePointer
  /// The SQL this statement was prepared from.
  public let sql: String
  let db: OpaquePointer

  init(db: OpaquePointer, sql: String) throws {
    var statement: OpaquePointer?
    let code = sql.withCString { sqlite3_prepare_v3(db, $0, -1, 0, &statement, nil) }
    guard code == SQLITE_OK, let statement else {
      sqlite3_finalize(statement)
      throw SQLiteError.from(db, resultCode: code == SQLITE_OK ? SQLITE_MISUSE : code, sql: sql)
    }
    self.db = db
    self.handle = statement
    self.sql = sql
  }

  deinit { sqlite3_finalize(handle) }

  /// The number of parameters the statement takes.
  public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }
  /// The number of result columns.
  public var columnCount: Int { Int(sqlite3_column_count(handle)) }
  /// The name of result column `index`.
  public func columnName(at index: Int) -> String {
    sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? ""
  }

  func check(_ code: Int32) throws {
    guard code == SQLITE_OK else {
      throw SQLiteError.from(db, resultCode: code, sql: sql, argumentCount: parameterCount)
    }
  }

  // MARK: Binding

  @inline(__always) private func parameter(_ index: Int) -> Int32 {
    Int32(clamping: index)
  }

  /// Binds an integer at `index` (1-based).
  public func bind(_ value: Int64, at index: Int) throws {
    try check(sqlite3_bind_int64(handle, parameter(index), value))
  }
  /// Binds an integer at `index` (1-based).
  public func bind(_ value: Int, at index: Int) throws { try bind(Int64(value), at: index) }
  /// Binds a double at `index` (1-based).
  public func bind(_ value: Double, at index: Int) throws {
    try check(sqlite3_bind_double(handle, parameter(index), value))
  }
  /// Binds a Bool as the integer 0 or 1.
  public func bind(_ value: Bool, at index: Int) throws { try bind(Int64(value ? 1 : 0), at: index) }
  /// Binds text with its exact UTF-8 length, so NUL bytes inside it are kept.
  public func bind(_ value: String, at index: Int) throws {
    var value = value
    let code = value.withUTF8 { bytes -> Int32 in
      guard bytes.count <= Int32.max else { return SQLITE_TOOBIG }
      // A nil pointer would bind NULL; an empty string must stay an empty string.
      guard let base = bytes.baseAddress else {
        return engram_sqlite3_bind_text_transient(handle, parameter(index), "", 0)
      }
      return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
        engram_sqlite3_bind_text_transient(handle, parameter(index), $0, Int32(bytes.count))
      }
    }
    try check(code)
  }
  /// Binds raw bytes as a BLOB (an empty buffer binds a zero-length blob, not NULL).
  public func bind(bytes: UnsafeRawBufferPointer, at index: Int) throws {
    guard bytes.count <= Int32.max else { return try check(SQLITE_TOOBIG) }
    if let base = bytes.baseAddress {
      try check(engram_sqlite3_bind_blob_transient(handle, parameter(index), base, Int32(bytes.count)))
    } else {
      try check(sqlite3_bind_zeroblob(handle, parameter(index), 0))
    }
  }
  /// Binds bytes as a BLOB.
  public func bind(_ value: [UInt8], at index: Int) throws {
    try value.withUnsafeBytes { try bind(bytes: $0, at: index) }
  }
  /// Binds data as a BLOB.
  public func bind(_ value: Data, at index: Int) throws {
    try value.withUnsafeBytes { try bind(bytes: $0, at: index) }
  }
  /// Binds a float32 vector as a BLOB of its native (little-endian on supported hosts) bytes.
  public func bind(floats: [Float], at index: Int) throws {
    try floats.withUnsafeBytes { try bind(bytes: $0, at: index) }
  }
  /// Binds NULL.
  public func bindNull(at index: Int) throws { try check(sqlite3_bind_null(handle, parameter(index))) }
  /// Binds an optional integer (nil binds NULL).
  public func bind(_ value: Int64?, at index: Int) throws {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }
  /// Binds an optional double (nil binds NULL).
  public func bind(_ value: Double?, at index: Int) throws {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }
  /// Binds optional text (nil binds NULL).
  public func bind(_ value: String?, at index: Int) throws {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }
  /// Binds optional data (nil binds NULL).
  public func bind(_ value: Data?, at index: Int) throws {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }
  /// Binds a generic value.
  public func bind(_ value: SQLValue, at index: Int) throws {
    switch value {
    case .integer(let v): try bind(v, at: index)
    case .real(let v): try bind(v, at: index)
    case .text(let v): try bind(v, at: index)
    case .blob(let v): try bind(v, at: index)
    case .null: try bindNull(at: index)
    }
  }
  /// Binds `values` to parameters 1, 2, ... after clearing previous bindings.
  public func bind(_ values: [SQLValue]) throws {
    sqlite3_clear_bindings(handle)
    try bind(values, startingAt: 1)
  }
  /// Binds `values` to parameters `index`, `index + 1`, ... (other bindings are kept).
  public func bind(_ values: [SQLValue], startingAt index: Int) throws {
    for (offset, value) in values.enumerated() { try bind(value, at: index + offset) }
  }

  // MARK: Stepping

  /// Advances to the next row: true when a row is available, false when done.
  /// - Throws: `SQLiteError` (for example `.busy`, `.constraint`).
  @discardableResult
  public func step() throws -> Bool {
    let code = sqlite3_step(handle)
    switch code {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default:
      let error = SQLiteError.from(db, resultCode: code, sql: sql, argumentCount: parameterCount)
      sqlite3_reset(handle)
      throw error
    }
  }

  /// Resets the statement so it can run again; bindings are kept.
  public func reset() { sqlite3_reset(handle) }
  /// Resets the statement and clears its bindings.
  public func clear() {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
  }

  /// Runs the statement to completion, ignoring rows, then resets it.
  public func execute() throws {
    defer { sqlite3_reset(handle) }
    while try step() {}
  }

  /// Calls `body` for each row, then resets the statement.
  public func forEachRow(_ body: (Statement) throws -> Void) throws {
    defer { sqlite3_reset(handle) }
    while try step() { try body(self) }
  }

  /// Maps every row with `transform`, then resets the statement.
  public func map<T>(_ transform: (Statement) throws -> T) throws -> [T] {
    var rows: [T] = []
    try forEachRow { rows.append(try transform($0)) }
    return rows
  }

  /// Maps the first row with `transform` (nil when there is none), then resets the statement.
  public func first<T>(_ transform: (Statement) throws -> T) throws -> T? {
    defer { sqlite3_reset(handle) }
    guard try step() else { return nil }
    return try transform(self)
  }

  // MARK: Columns

  /// The storage class of a column's value in the current row.
  public enum ColumnType: Sendable, Hashable {
    case integer, real, text, blob, null
  }

  /// The storage class of column `index` in the current row (no conversion, no copy).
  public func columnType(at index: Int) -> ColumnType {
    switch sqlite3_column_type(handle, Int32(index)) {
    case SQLITE_INTEGER: return .integer
    case SQLITE_FLOAT: return .real
    case SQLITE_TEXT: return .text
    case SQLITE_BLOB: return .blob
    default: return .null
    }
  }

  /// Whether column `index` of the current row is NULL.
  public func isNull(at index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }
  /// Column `index` as an integer (NULL reads 0).
  public func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }
  /// Column `index` as a double (NULL reads 0).
  public func double(at index: Int) -> Double { sqlite3_column_double(handle, Int32(index)) }
  /// The raw UTF-8 bytes of text column `index` (valid until the next step or reset).
  public func withUTF8Bytes<R>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
  {
    let pointer = sqlite3_column_text(handle, Int32(index))
    let count = Int(sqlite3_column_bytes(handle, Int32(index)))
    return try body(UnsafeBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
  }

  /// Column `index` as text, read with its byte length (so NUL bytes survive). Invalid
  /// UTF-8 written by another tool is repaired with U+FFFD; NULL reads "".
  public func string(at index: Int) -> String {
    withUTF8Bytes(at: index) { String(decoding: $0, as: UTF8.self) }
  }
  /// The bytes of blob column `index` (valid until the next step or reset).
  public func withBlob<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    let pointer = sqlite3_column_blob(handle, Int32(index))
    let count = Int(sqlite3_column_bytes(handle, Int32(index)))
    return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
  }
  /// Column `index` as a generic value.
  public func value(at index: Int) -> SQLValue {
    switch sqlite3_column_type(handle, Int32(index)) {
    case SQLITE_INTEGER: return .integer(int64(at: index))
    case SQLITE_FLOAT: return .real(double(at: index))
    case SQLITE_TEXT: return .text(string(at: index))
    case SQLITE_BLOB: return .blob(bytes(at: index))
    default: return .null
    }
  }
}

extension Statement {
  /// Binds `arguments` and returns the statement (for chaining).
  func binding(_ arguments: [SQLValue]) throws -> Statement {
    try bind(arguments)
    return self
  }

  /// Binds `arguments` and maps every row.
  func bindingAndMap<T>(_ arguments: [SQLValue], _ transform: (Statement) throws -> T) throws -> [T] {
    try bind(arguments)
    return try map(transform)
  }
}

// Times: records carry `Date`, columns hold milliseconds since the Unix epoch (UTC).
extension Statement {
  /// Binds a time as milliseconds since the epoch.
  public func bind(_ value: Date, at index: Int) throws {
    try bind(Timestamp.milliseconds(value), at: index)
  }

  /// Binds a time as milliseconds since the epoch, or NULL.
  public func bind(_ value: Date?, at index: Int) throws {
    try bind(value.map(Timestamp.milliseconds), at: index)
  }
}

extension Statement: Row {}
