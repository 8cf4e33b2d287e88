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

extension Connection {
  /// Inserts or replaces the state of `state.skillID`.
  public func setSkillState(_ state: SkillState) throws {
    let statement = try cachedStatement(
      """
      INSERT INTO skill_state (skill_id, enabled, updated_at, user_id) VALUES (?1, ?2, ?3, ?4)
      ON CONFLICT (user_id, skill_id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at
      """)
    try statement.bind(state.skillID, at: 1)
    try statement.bind(state.enabled, at: 2)
    try statement.bind(state.updatedAt, at: 3)
    try statement.bind(user, at: 4)
    try statement.execute()
  }

  /// The state of skill `skillID`, or nil when never set.
  public func skillState(skillID: String) throws -> SkillState? {
    let statement = try cachedStatement(
      "SELECT skill_id, enabled, updated_at FROM skill_state WHERE user_id = ?2 AND skill_id = ?1")
    try statement.bind(skillID, at: 1)
    try statement.bind(user, at: 2)
    return try statement.first { SkillState(row: $0) }
  }

  /// Every skill state, in id order.
  public func skillStates(page: Page = .all) throws -> [SkillState] {
    let statement = try cachedStatement(
      "SELECT skill_id, enabled, updated_at FROM skill_state WHERE user_id = ?3 ORDER BY skill_id LIMIT ?1 OFFSET ?2"
    )
    try statement.bind(user, at: 3)
    try statement.bind(page.limit, at: 1)
    try statement.bind(page.offset, at: 2)
    return try statement.map { SkillState(row: $0) }
  }

  /// The number of skill states.
  public func skillStateCount() throws -> Int {
    Int(try scalarInt("SELECT count(*) FROM skill_state WHERE user_id = ?1", [.text(user)]) ?? 0)
  }

  /// Deletes the state of `skillID`; returns whether it existed.
  @discardableResult
  public func deleteSkillState(skillID: String) throws -> Bool {
    try run("DELETE FROM skill_state WHERE user_id = ?2 AND skill_id = ?1", [.text(skillID), .text(user)])
    return changes > 0
  }
}
