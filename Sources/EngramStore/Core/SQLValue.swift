import EngramCore
import Foundation

/// A value bound to or read from a store: what a record encodes (`StoredRecord.encode(to:)`)
/// and a `Row` holds, in SQLite's five storage classes.
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
  /// `.integer`.
  public init(_ value: Int) { self = .integer(Int64(value)) }
  /// `.integer` 1 or 0, as SQLite stores a boolean.
  public init(_ value: Bool) { self = .integer(value ? 1 : 0) }
  /// Milliseconds since the Unix epoch as `.integer` (the store's times), or `.null` for nil.
  public init(_ value: Date?) { self = value.map { .integer(Timestamp.milliseconds($0)) } ?? .null }
  /// An enum's raw value as `.text`.
  public init<E: RawRepresentable>(_ value: E) where E.RawValue == String { self = .text(value.rawValue) }
}
