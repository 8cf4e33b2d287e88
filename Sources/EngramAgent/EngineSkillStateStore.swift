import Engram
import Synchronization

/// A `SkillStateStore` kept in the memory's `skill_state` table, so enabled flags survive
/// restarts and are shared by every tool that opens the same memory.
///
/// The flags are read once, off the cooperative thread pool, when the store is made: a
/// registry then reads them while it registers its skills without waiting on the database.
/// A flag set through the store is written off the pool too.
public final class EngineSkillStateStore: SkillStateStore {
  /// The memory holding the flags.
  public let engine: MemoryEngine
  private let flags: Mutex<[String: Bool]>

  /// Creates a store over `engine`'s skill-state table, reading its flags.
  /// - Throws: `EngramError.closed`; store errors.
  public init(engine: MemoryEngine) async throws {
    self.engine = engine
    flags = Mutex(try await engine.agentRecords.skillFlags())
  }

  /// The flag as stored when the store was made or set through it since, or nil when never set.
  public func isEnabled(skillID: String) -> Bool? { flags.withLock { $0[skillID] } }

  /// Stores the flag.
  public func setEnabled(_ enabled: Bool, skillID: String) async throws {
    try await engine.agentRecords.setSkillEnabled(enabled, id: skillID)
    flags.withLock { $0[skillID] = enabled }
  }
}
