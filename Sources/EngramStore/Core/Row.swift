import EngramCore
import Foundation

/// One row of a query's result, read by column index (0-based), as every backend delivers
/// it: SQLite's ``Statement`` (its current row), PostgreSQL's result rows (as ``ValueRow``s).
/// A record reads itself from any row (``StoredRecord/init(row:)``), so one reader serves
/// every store and refuses the same malformed values in each.
///
/// Values convert as SQLite converts them: NULL reads 0, "" or no bytes; an integer read as
/// text reads its digits; text read as a number reads its leading number. A backend whose
/// values are ``SQLValue``s implements ``columnCount`` and ``value(at:)`` alone; SQLite's
/// statement reads each type straight from the C API.
public protocol Row {
  /// The number of columns.
  var columnCount: Int { get }
  /// Column `index` as a generic value.
  func value(at index: Int) -> SQLValue
  /// The storage class of column `index` (no conversion).
  func columnType(at index: Int) -> Statement.ColumnType
  /// Whether column `index` is NULL.
  func isNull(at index: Int) -> Bool
  /// Column `index` as an integer (NULL reads 0).
  func int64(at index: Int) -> Int64
  /// Column `index` as a double (NULL reads 0).
  func double(at index: Int) -> Double
  /// Column `index` as text; invalid UTF-8 is repaired with U+FFFD, NULL reads "".
  func string(at index: Int) -> String
  /// The UTF-8 bytes of column `index` read as text (valid during the call).
  func withUTF8Bytes<R>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
  /// The bytes of column `index` read as a blob (valid during the call; NULL reads none).
  func withBlob<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

// The conversions of a row of `SQLValue`s, as SQLite's `sqlite3_column_*` make them.
extension Row {
  /// The storage class of the value.
  public func columnType(at index: Int) -> Statement.ColumnType {
    switch value(at: index) {
    case .integer: .integer
    case .real: .real
    case .text: .text
    case .blob: .blob
    case .null: .null
    }
  }

  /// Whether the value is `.null`.
  public func isNull(at index: Int) -> Bool { value(at: index) == .null }

  /// The value as an integer: a real truncated toward zero (clamped), text's leading digits.
  public func int64(at index: Int) -> Int64 { number(at: index).integer }

  /// The value as a double: text's leading number, else 0.
  public func double(at index: Int) -> Double { number(at: index).real }

  /// The value as SQLite reads it as an integer and as a real.
  private func number(at index: Int) -> (integer: Int64, real: Double) {
    switch value(at: index) {
    case .integer(let value): (value, Double(value))
    case .real(let value): (SQLValue.integer(fromReal: value), value)
    case .text(let text): SQLValue.leadingNumber(Array(text.utf8))
    case .blob(let bytes): SQLValue.leadingNumber(bytes)
    case .null: (0, 0)
    }
  }

  /// The value as text: numbers in decimal, a blob's bytes decoded as UTF-8.
  public func string(at index: Int) -> String {
    switch value(at: index) {
    case .integer(let value): String(value)
    case .real(let value): String(value)
    case .text(let text): text
    case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
    case .null: ""
    }
  }

  /// The UTF-8 bytes of `string(at:)` (a blob's own bytes).
  public func withUTF8Bytes<R>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
  {
    if case .blob(let bytes) = value(at: index) { return try bytes.withUnsafeBufferPointer(body) }
    var text = string(at: index)
    return try text.withUTF8(body)
  }

  /// The bytes of a blob, or of the value as text.
  public func withBlob<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    switch value(at: index) {
    case .blob(let bytes): return try bytes.withUnsafeBytes(body)
    case .null: return try body(UnsafeRawBufferPointer(start: nil, count: 0))
    default: return try withUTF8Bytes(at: index) { try body(UnsafeRawBufferPointer($0)) }
    }
  }
}

// Typed reads every row has, built on the requirements.
extension Row {
  /// Column `index` as an Int (NULL reads 0).
  public func int(at index: Int) -> Int { Int(truncatingIfNeeded: int64(at: index)) }
  /// Column `index` as a Bool (non-zero is true).
  public func bool(at index: Int) -> Bool { int64(at: index) != 0 }
  /// Column `index` as an optional integer.
  public func optionalInt64(at index: Int) -> Int64? { isNull(at: index) ? nil : int64(at: index) }
  /// Column `index` as an optional double.
  public func optionalDouble(at index: Int) -> Double? { isNull(at: index) ? nil : double(at: index) }
  /// Column `index` as optional text (see `string(at:)`).
  public func optionalString(at index: Int) -> String? { isNull(at: index) ? nil : string(at: index) }

  /// Column `index` as text, refusing invalid UTF-8.
  /// - Throws: `StoreError.invalidUTF8(column:)`.
  public func validatedString(at index: Int) throws -> String {
    try withUTF8Bytes(at: index) { bytes in
      guard let text = String(validating: bytes, as: UTF8.self) else {
        throw StoreError.invalidUTF8(column: index)
      }
      return text
    }
  }

  /// Column `index` as bytes (NULL reads empty).
  public func bytes(at index: Int) -> [UInt8] { withBlob(at: index) { Array($0) } }
  /// Column `index` as Data (NULL reads empty).
  public func data(at index: Int) -> Data { withBlob(at: index) { Data($0) } }
  /// Column `index` as float32 values in the host's byte order (a trailing partial value is
  /// dropped).
  public func floats(at index: Int) -> [Float] {
    withBlob(at: index) { raw in
      let count = raw.count / MemoryLayout<Float>.size
      return [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
        if count > 0 {
          UnsafeMutableRawBufferPointer(buffer).copyMemory(
            from: UnsafeRawBufferPointer(rebasing: raw[0..<count * 4]))
        }
        initialized = count
      }
    }
  }

  /// The time in column `index` (milliseconds since the epoch).
  public func date(at index: Int) -> Date { Timestamp.date(int64(at: index)) }
  /// The time in column `index`, or nil for NULL.
  public func optionalDate(at index: Int) -> Date? { optionalInt64(at: index).map(Timestamp.date) }

  /// Column `index` as an enum, refusing raw values the type does not know.
  /// - Throws: `StoreError.invalidColumnValue`.
  public func enumValue<E: RawRepresentable>(
    _ type: E.Type, at index: Int, table: String, column: String
  ) throws -> E where E.RawValue == String {
    let raw = string(at: index)
    guard let value = E(rawValue: raw) else {
      throw StoreError.invalidColumnValue(table: table, column: column, value: raw)
    }
    return value
  }

}

/// A row of values held in memory: a PostgreSQL result row as the SQLite store holds its
/// values, an export's row, a test's malformed row.
public struct ValueRow: Row, Sendable, Hashable {
  /// The values, by column.
  public var values: [SQLValue]

  /// A row of `values`.
  public init(_ values: [SQLValue]) { self.values = values }

  /// The number of values.
  public var columnCount: Int { values.count }
  /// Value `index`.
  public func value(at index: Int) -> SQLValue { values[index] }
}

extension SQLValue {
  /// A real as SQLite converts it to an integer: truncated toward zero, clamped, NaN as 0.
  static func integer(fromReal value: Double) -> Int64 {
    if value.isNaN { return 0 }
    if value <= -9.223_372_036_854_775_808e18 { return .min }
    if value >= 9.223_372_036_854_775_807e18 { return .max }
    return Int64(value)
  }

  /// The numbers text starts with (after spaces), as SQLite reads text as a number: as an
  /// integer, its leading digits (clamped; `sqlite3Atoi64`); as a real, its leading decimal
  /// number with fraction and exponent (`sqlite3AtoF`). 0 when there is none.
  static func leadingNumber(_ bytes: [UInt8]) -> (integer: Int64, real: Double) {
    var end = 0
    while end < bytes.count, bytes[end] == 0x20 || (0x09...0x0D).contains(bytes[end]) { end += 1 }
    let start = end
    func digits() -> Bool {
      let from = end
      while end < bytes.count, (0x30...0x39).contains(bytes[end]) { end += 1 }
      return end > from
    }
    let negative = end < bytes.count && bytes[end] == UInt8(ascii: "-")
    if end < bytes.count, negative || bytes[end] == UInt8(ascii: "+") { end += 1 }
    var whole = digits()
    let integerText = String(decoding: bytes[start..<end], as: UTF8.self)
    let integer = whole ? Int64(integerText) ?? (negative ? .min : .max) : 0
    if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
      end += 1
      whole = digits() || whole
    }
    guard whole else { return (integer, 0) }
    let mantissaEnd = end
    if end < bytes.count, bytes[end] | 0x20 == UInt8(ascii: "e") {
      end += 1
      if end < bytes.count, bytes[end] == UInt8(ascii: "+") || bytes[end] == UInt8(ascii: "-") { end += 1 }
      if !digits() { end = mantissaEnd }
    }
    return (integer, Double(String(decoding: bytes[start..<end], as: UTF8.self)) ?? 0)
  }
}
