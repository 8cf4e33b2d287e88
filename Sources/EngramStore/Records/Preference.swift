import Foundation

/// A key-value preference (`preferences`): time zone, language, pinned prompt preferences.
public struct Preference: Sendable, Hashable {
  /// The key.
  public var key: String
  /// The value.
  public var value: String
  /// Whether prompts always include it.
  public var pinned: Bool
  /// Last change.
  public var updatedAt: Date

  /// Creates a preference.
  public init(key: String, value: String, pinned: Bool = false, updatedAt: Date) {
    self.key = key
    self.value = value
    self.pinned = pinned
    self.updatedAt = updatedAt
  }

  package init(row: some Row) {
    key = row.string(at: 0)
    value = row.string(at: 1)
    pinned = row.bool(at: 2)
    updatedAt = row.date(at: 3)
  }
}
