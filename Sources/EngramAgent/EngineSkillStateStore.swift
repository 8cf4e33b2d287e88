import Engram

/// A `SkillStateStore` kept in the memory's `skill_state` table, so enabled flags survive
/// restarts and are shared by every tool that opens the same memory.
public struct EngineSkillStateStore: SkillStateStore {
  /// The memory holding the flags.
  public let engine: MemoryEngine

  /// Creates a store over `engine`'s skill-state table.
  public init(engine: MemoryEngine) {
    self.engine = engine
  }

  /// The stored flag, or nil when never set.
  public func isEnabled(skillID: String) throws -> Bool? {
    try engine.agentRecords.skillEnabled(id: skillID)
  }

  /// Stores the flag.
  public func setEnabled(_ enabled: Bool, skillID: String) throws {
    try engine.agentRecords.setSkillEnabled(enabled, id: skillID)
  }
}
