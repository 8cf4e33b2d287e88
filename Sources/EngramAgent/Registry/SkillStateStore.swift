import Synchronization

/// Persists which skills are enabled; the engine backs it with its skill-state table.
public protocol SkillStateStore: Sendable {
  /// The stored enabled flag for `skillID`, or nil when never set: read while a registry
  /// registers a skill, so it must not wait on a database (a store backed by one reads its
  /// flags when it is made, as `EngineSkillStateStore` does).
  func isEnabled(skillID: String) throws -> Bool?
  /// Stores the enabled flag for `skillID`.
  func setEnabled(_ enabled: Bool, skillID: String) async throws
}

/// A `SkillStateStore` kept in memory, for tests and for sessions without a database.
public final class InMemorySkillStateStore: SkillStateStore {
  private let flags: Mutex<[String: Bool]>

  /// Creates a store, optionally pre-filled.
  public init(_ flags: [String: Bool] = [:]) { self.flags = Mutex(flags) }

  /// The stored flag, or nil.
  public func isEnabled(skillID: String) -> Bool? { flags.withLock { $0[skillID] } }

  /// Stores the flag.
  public func setEnabled(_ enabled: Bool, skillID: String) { flags.withLock { $0[skillID] = enabled } }
}
