import Engram
import Foundation

/// The memory operations skills rely on; the `Engram` engine conforms to it at integration time.
///
/// Every call may suspend and throw; errors are the conforming engine's own typed errors.
public protocol AgentMemory: Sendable {
  /// Returns up to `k` memories most relevant to `query`, best first, as the engine's
  /// search returns them (kind, memory kind, date, scores).
  func search(query: String, k: Int) async throws -> [SearchHit]
  /// Stores a memory of `kind` and returns its id.
  func remember(content: String, kind: MemoryKind) async throws -> Int64
  /// Deletes the memory with `id`.
  func forget(id: Int64) async throws
  /// Stores a reminder due at `date`, kept with `condition` (checked when it comes due) when
  /// one is given, and returns its id.
  func storeReminder(title: String, date: Date, body: String?, condition: StepCondition?) async throws
    -> Int64
  /// Stores a calendar event starting at `date` and returns its id.
  func storeEvent(title: String, date: Date, body: String?) async throws -> Int64
  /// Stores a note (optionally dated) and returns its id.
  func storeNote(title: String, date: Date?, body: String) async throws -> Int64
  /// Reminders or events (`kind`) due in `from..<to` (either end open), soonest first.
  func agenda(kind: AgentItemKind, from: Date?, to: Date?) async throws -> [AgentItem]
  /// Changes a reminder's or event's title and/or time; returns it as it now is.
  func updateItem(id: Int64, title: String?, date: Date?) async throws -> AgentItem
  /// Deletes a reminder or event.
  func deleteItem(id: Int64) async throws
  /// Returns the preference stored under `key`, if any.
  func preference(key: String) async throws -> String?
  /// Stores `value` under the preference `key`, replacing any previous value.
  func setPreference(key: String, value: String) async throws
}

extension AgentMemory {
  /// Stores a reminder due at `date` without a condition and returns its id.
  public func storeReminder(title: String, date: Date, body: String?) async throws -> Int64 {
    try await storeReminder(title: title, date: date, body: body, condition: nil)
  }
}
