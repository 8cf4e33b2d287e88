import Foundation

/// Whether a skill is enabled (`skill_state`).
public struct SkillState: Sendable, Hashable {
  /// The skill's id.
  public var skillID: String
  /// Whether it may run.
  public var enabled: Bool
  /// Last change.
  public var updatedAt: Date

  /// Creates a skill state.
  public init(skillID: String, enabled: Bool, updatedAt: Date) {
    self.skillID = skillID
    self.enabled = enabled
    self.updatedAt = updatedAt
  }

  package init(row: some Row) {
    skillID = row.string(at: 0)
    enabled = row.bool(at: 1)
    updatedAt = row.date(at: 2)
  }
}
