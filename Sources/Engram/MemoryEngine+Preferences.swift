extension MemoryEngine {
  /// The user's key-value preferences (see ``UserPreferences``).
  ///
  /// Named `userPreferences`, not `preferences`, while the deprecated method `preferences()`
  /// (all of them) still exists: a property and a method without arguments cannot share a
  /// name.
  public var userPreferences: UserPreferences { UserPreferences(records: preferenceRecords) }

  /// Key-value preferences of a memory (`engine.userPreferences`); pinned ones go into every
  /// prompt context.
  ///
  /// A view of the engine's parts that forwards each call (it holds no state of its own).
  public struct UserPreferences: Sendable {
    let records: PreferenceRecords

    /// Sets a key-value preference (pinned ones go into every prompt context).
    public func set(_ key: String, _ value: String, pinned: Bool = false) throws {
      try records.setPreference(key, value, pinned: pinned)
    }

    /// A preference's value, or nil.
    public func get(_ key: String) throws -> String? {
      try records.preference(key)
    }

    /// All preferences as (key, value, pinned), by key.
    public func all() throws -> [(key: String, value: String, pinned: Bool)] {
      try records.preferences()
    }
  }
}
