import EngramStore
import Foundation

/// Key-value preferences (pinned ones go into every prompt context).
struct PreferenceRecords: Sendable {
  let open: OpenState
  let store: StoreRole<any AgentRecordQueries>

  /// Sets a key-value preference (pinned ones go into every prompt context).
  func setPreference(_ key: String, _ value: String, pinned: Bool = false) throws {
    try open.check()
    try store.writeTransaction {
      try $0.setPreference(Preference(key: key, value: value, pinned: pinned, updatedAt: Date()))
    }
  }

  /// A preference's value, or nil.
  func preference(_ key: String) throws -> String? {
    try open.check()
    return try store.readTransaction { try $0.preference(key: key)?.value }
  }

  /// All preferences as (key, value, pinned), by key.
  func preferences() throws -> [(key: String, value: String, pinned: Bool)] {
    try open.check()
    return try store.readTransaction { try $0.preferences(pinnedOnly: false, page: .all) }
      .map { ($0.key, $0.value, $0.pinned) }
      .sorted { $0.key < $1.key }
  }
}
