import EngramStore

/// A value bound to a statement's parameter (`$1`, `$2`, ...).
///
/// Texts, integers, doubles and booleans are sent in PostgreSQL's text format, bytes as
/// binary `bytea`; `.null` is SQL NULL. A `.text` parameter's type is left for the server to
/// infer from the statement (so it also fills `jsonb`, `tsvector` or `timestamptz` columns).

public enum PostgresValue: Sendable, Hashable {
  /// SQL NULL.
  case null
  /// A 64-bit integer (`int8`).
  case int(Int64)
  /// A double (`float8`); NaN and the infinities are sent as PostgreSQL spells them.
  case double(Double)
  /// A boolean.
  case bool(Bool)
  /// A UTF-8 text (must not contain NUL, which PostgreSQL cannot store in a text).
  case text(String)
  /// Raw bytes (`bytea`).
  case bytes([UInt8])
}

extension PostgresValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
  ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
  public init(stringLiteral value: String) { self = .text(value) }
  public init(integerLiteral value: Int64) { self = .int(value) }
  public init(floatLiteral value: Double) { self = .double(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(nilLiteral: ()) { self = .null }
}

extension PostgresValue {
  /// `int8`, `float8`, `bool` and `bytea` type OIDs; 0 lets the server infer the type.
  var typeOID: UInt32 {
    switch self {
    case .null, .text: return 0
    case .int: return 20
    case .double: return 701
    case .bool: return 16
    case .bytes: return 17
    }
  }

  /// The bytes libpq sends (without a terminating NUL) and whether they are binary.
  func wireBytes(sql: String) throws(PostgresError) -> (bytes: [UInt8], binary: Bool)? {
    switch self {
    case .null: return nil
    case .int(let value): return (Array(String(value).utf8), false)
    case .double(let value):
      if value.isNaN { return (Array("NaN".utf8), false) }
      if value.isInfinite { return (Array((value > 0 ? "Infinity" : "-Infinity").utf8), false) }
      return (Array("\(value)".utf8), false)
    case .bool(let value): return (Array((value ? "t" : "f").utf8), false)
    case .text(let value):
      let bytes = Array(value.utf8)
      if bytes.contains(0) {
        throw PostgresError(
          kind: .conversion,
          message: "a text parameter contains a NUL character, which PostgreSQL cannot store",
          sql: sql)
      }
      return (bytes, false)
    case .bytes(let value): return (value, true)
    }
  }
}

extension SQLValue {
  /// The value as a PostgreSQL parameter: numbers as untyped text, so that the server reads
  /// each as its column's type (an integer 0 or 1 as a boolean, too).
  var postgres: PostgresValue {
    switch self {
    case .null: .null
    case .integer(let value): .text(String(value))
    case .real(let value): .double(value)
    case .text(let value): .text(value)
    case .blob(let value): .bytes(value)
    }
  }
}
