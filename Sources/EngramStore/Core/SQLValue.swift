/// A value bound to or read from SQLite, for the generic paths (typed `bind` overloads
/// are the fast path).
public enum SQLValue: Sendable, Hashable {
  /// An INTEGER.
  case integer(Int64)
  /// A REAL.
  case real(Double)
  /// TEXT (stored with its exact UTF-8 byte length, so NUL bytes survive).
  case text(String)
  /// A BLOB.
  case blob([UInt8])
  /// NULL.
  case null
}

extension SQLValue {
  /// `.integer`, or `.null` for nil.
  public init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
  /// `.text`, or `.null` for nil.
  public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
  /// `.real`, or `.null` for nil.
  public init(_ value: Double?) { self = value.map { .real($0) } ?? .null }
}
