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

extension Connection {
  /// Inserts or replaces the preference with `preference.key`.
  public func setPreference(_ preference: Preference) throws {
    let statement = try cachedStatement(
      """
      INSERT INTO preferences (key, value, pinned, updated_at, user_id) VALUES (?1, ?2, ?3, ?4, ?5)
      ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value, pinned = excluded.pinned,
        updated_at = excluded.updated_at
      """)
    try statement.bind(preference.key, at: 1)
    try statement.bind(preference.value, at: 2)
    try statement.bind(preference.pinned, at: 3)
    try statement.bind(preference.updatedAt, at: 4)
    try statement.bind(user, at: 5)
    try statement.execute()
  }

  /// The preference `key`, or nil.
  public func preference(key: String) throws -> Preference? {
    let statement = try cachedStatement(
      "SELECT key, value, pinned, updated_at FROM preferences WHERE user_id = ?2 AND key = ?1")
    try statement.bind(key, at: 1)
    try statement.bind(user, at: 2)
    return try statement.first { Preference(row: $0) }
  }

  /// Preferences in key order (only pinned ones when `pinnedOnly`).
  public func preferences(pinnedOnly: Bool = false, page: Page = .all) throws -> [Preference] {
    let statement = try cachedStatement(
      "SELECT key, value, pinned, updated_at FROM preferences WHERE user_id = ?4 AND (?1 = 0 OR pinned = 1) ORDER BY key LIMIT ?2 OFFSET ?3"
    )
    try statement.bind(user, at: 4)
    try statement.bind(pinnedOnly, at: 1)
    try statement.bind(page.limit, at: 2)
    try statement.bind(page.offset, at: 3)
    return try statement.map { Preference(row: $0) }
  }

  /// The number of preferences.
  public func preferenceCount() throws -> Int {
    Int(try scalarInt("SELECT count(*) FROM preferences WHERE user_id = ?1", [.text(user)]) ?? 0)
  }

  /// Deletes preference `key`; returns whether it existed.
  @discardableResult
  public func deletePreference(key: String) throws -> Bool {
    try run("DELETE FROM preferences WHERE user_id = ?2 AND key = ?1", [.text(key), .text(user)])
    return changes > 0
  }
}
