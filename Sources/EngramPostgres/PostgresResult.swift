import CPostgres
import EngramStore

/// The rows a statement returned, in PostgreSQL's text format, owned until released.
///
/// Owns its `PGresult`, clears it in `deinit`; not `Sendable` (read it where it was made).
public final class PostgresResult {
  let handle: OpaquePointer
  /// The statement, for errors about its values.
  let sql: String

  init(handle: OpaquePointer, sql: String) {
    self.handle = handle
    self.sql = sql
  }

  deinit { PQclear(handle) }

  /// The number of rows.
  public var count: Int { Int(PQntuples(handle)) }

  /// The number of columns.
  public var columnCount: Int { Int(PQnfields(handle)) }

  /// The column names, in order.
  public var columnNames: [String] {
    (0..<Int32(columnCount)).map { String(cString: PQfname(handle, $0)) }
  }

  /// Rows an INSERT, UPDATE, DELETE (or SELECT) touched, from the command tag.
  public var rowsAffected: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

  /// The row at `index` (0-based).
  public subscript(index: Int) -> PostgresRow {
    precondition(index >= 0 && index < count, "row \(index) out of range 0..<\(count)")
    return PostgresRow(result: self, index: Int32(index))
  }

  /// Every row, in order.
  public var rows: [PostgresRow] { (0..<count).map { self[$0] } }
}

/// One row of a ``PostgresResult``. Accessors return `nil` for SQL NULL and throw
/// ``PostgresError`` (kind `.conversion`) when the column's text is not of the asked type.
public struct PostgresRow {
  let result: PostgresResult
  let index: Int32

  private func raw(_ column: Int) -> UnsafeMutablePointer<CChar>? {
    precondition(column >= 0 && column < result.columnCount, "column \(column) out of range")
    if PQgetisnull(result.handle, index, Int32(column)) != 0 { return nil }
    return PQgetvalue(result.handle, index, Int32(column))
  }

  private func conversionError(_ column: Int, _ expected: String) -> PostgresError {
    let name = String(cString: PQfname(result.handle, Int32(column)))
    return PostgresError(
      kind: .conversion, message: "column \(column) (\(name)) is not \(expected)", sql: result.sql)
  }

  /// Whether the value is SQL NULL.
  public func isNull(_ column: Int) -> Bool { raw(column) == nil }

  /// The type OID of `column` (`16` bool, `20` int8, `701` float8, `17` bytea, ...).
  public func typeOID(_ column: Int) -> UInt32 { UInt32(PQftype(result.handle, Int32(column))) }

  /// The value as the SQLite store would hold it: integers (booleans as 0 and 1), doubles,
  /// bytes, and everything else as text.
  public func sqlValue(_ column: Int) throws(PostgresError) -> SQLValue {
    guard !isNull(column) else { return .null }
    switch typeOID(column) {
    case 16: return .integer(try bool(column) == true ? 1 : 0)
    case 20, 21, 23, 26: return .integer(try int64(column) ?? 0)
    case 700, 701, 1700: return .real(try double(column) ?? 0)
    case 17: return .blob(try bytes(column) ?? [])
    default: return .text(string(column) ?? "")
    }
  }

  /// Every value as the SQLite store would hold it (see `sqlValue(_:)`): the row a record
  /// reads itself from.
  public func valueRow() throws(PostgresError) -> ValueRow {
    var values: [SQLValue] = []
    values.reserveCapacity(result.columnCount)
    for column in 0..<result.columnCount { values.append(try sqlValue(column)) }
    return ValueRow(values)
  }

  /// The value as text.
  public func string(_ column: Int) -> String? {
    raw(column).map { String(cString: $0) }
  }

  /// The value as a 64-bit integer (`int2`, `int4`, `int8` columns).
  public func int64(_ column: Int) throws(PostgresError) -> Int64? {
    guard let text = string(column) else { return nil }
    guard let value = Int64(text) else { throw conversionError(column, "an integer") }
    return value
  }

  /// The value as a double (`float4`, `float8`, `numeric`, and integer columns).
  public func double(_ column: Int) throws(PostgresError) -> Double? {
    guard let text = string(column) else { return nil }
    switch text {
    case "NaN": return .nan
    case "Infinity": return .infinity
    case "-Infinity": return -.infinity
    default:
      guard let value = Double(text) else { throw conversionError(column, "a number") }
      return value
    }
  }

  /// The value as a boolean (`t` or `f`).
  public func bool(_ column: Int) throws(PostgresError) -> Bool? {
    guard let text = string(column) else { return nil }
    switch text {
    case "t": return true
    case "f": return false
    default: throw conversionError(column, "a boolean")
    }
  }

  /// The value of a `bytea` column (hex output format, `\x...`).
  public func bytes(_ column: Int) throws(PostgresError) -> [UInt8]? {
    guard let pointer = raw(column) else { return nil }
    let length = Int(PQgetlength(result.handle, index, Int32(column)))
    return try UnsafeRawBufferPointer(start: pointer, count: length).withMemoryRebound(to: UInt8.self) {
      (text) throws(PostgresError) -> [UInt8] in
      guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0
      else { throw conversionError(column, "bytea in hex format") }
      var bytes: [UInt8] = []
      bytes.reserveCapacity((text.count - 2) / 2)
      var offset = 2
      while offset < text.count {
        guard let high = Self.hexValue(text[offset]), let low = Self.hexValue(text[offset + 1]) else {
          throw conversionError(column, "bytea in hex format")
        }
        bytes.append(high << 4 | low)
        offset += 2
      }
      return bytes
    }
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
  }
}
