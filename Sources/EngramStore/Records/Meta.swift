extension Connection {
  /// The value of `key` in `meta`, or nil.
  public func meta(_ key: String) throws -> String? {
    try scalarString("SELECT value FROM meta WHERE key = ?1", [.text(key)])
  }

  /// Sets `key` to `value` in `meta`.
  public func setMeta(_ key: String, _ value: String) throws {
    try run(
      "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [.text(key), .text(value)])
  }

  /// Removes `key` from `meta`; returns whether it existed.
  @discardableResult
  public func deleteMeta(_ key: String) throws -> Bool {
    try run("DELETE FROM meta WHERE key = ?1", [.text(key)])
    return changes > 0
  }
}
