import EngramStore
import Foundation

extension MemoryEngine {
  /// Key-value preferences of a memory (`engine.userPreferences`); pinned ones go into every
  /// prompt context.
  ///
  /// Every method is async and runs its SQLite work off the cooperative thread pool.
  public struct UserPreferences: Sendable {
    let open: OpenState
    /// The store's preference queries: all this type reads and writes.
    let store: StoreRole<any AgentRecordQueries>

    /// Sets a key-value preference (pinned ones go into every prompt context).
    public func set(_ key: String, _ value: String, pinned: Bool = false) async throws {
      let preference = Preference(key: key, value: value, pinned: pinned, updatedAt: Date())
      try await store.writeOffPool(open) { try $0.setPreference(preference) }
    }

    /// A preference's value, or nil.
    public func get(_ key: String) async throws -> String? {
      try await store.readOffPool(open) { try $0.preference(key: key)?.value }
    }

    /// All preferences as (key, value, pinned), by key.
    public func all() async throws -> [(key: String, value: String, pinned: Bool)] {
      try await store.readOffPool(open) { try $0.preferences(pinnedOnly: false, page: .all) }
        .map { ($0.key, $0.value, $0.pinned) }
        .sorted { $0.key < $1.key }
    }
  }
}
