import EngramCore
import Foundation

// Named queries of the agent's records, written once for every store.
extension AgentRecordQueries {
  // MARK: Agent items

  /// Agent items of `kind` whose due time lies in `due` (both ends optional: `from` inclusive,
  /// `to` exclusive), soonest first, at most `limit`; with `undeliveredOnly`, only those
  /// never delivered. Items without a due time are left out.
  public func agentItems(
    kind: AgentItemKind, dueFrom from: Date?, to: Date?, undeliveredOnly: Bool, limit: Int
  ) throws -> [AgentItem] {
    try rows(
      scoped: """
        SELECT \(AgentItem.selectList) FROM agent_items
        WHERE \(dialect.user) = $1 AND kind = $2 AND due_at IS NOT NULL
          AND (CAST($3 AS bigint) IS NULL OR due_at >= $3) AND (CAST($4 AS bigint) IS NULL OR due_at < $4)
          AND (CAST($5 AS integer) = 0 OR delivered_at IS NULL)
        ORDER BY due_at, id LIMIT $6
        """,
      [SQLValue(kind), SQLValue(from), SQLValue(to), SQLValue(undeliveredOnly), SQLValue(max(0, limit))]
    ) { try AgentItem(row: $0) }
  }

  /// Marks reminder `id` delivered at `now` if it is due by then and was never delivered;
  /// returns it as it now is, or nil (another process claimed it first). Its own UPDATE ...
  /// WHERE delivered_at IS NULL, so two processes never claim one reminder.
  public func claimReminder(_ id: Int64, at now: Date) throws -> AgentItem? {
    try rows(
      scoped: """
        UPDATE agent_items SET delivered_at = $2
        WHERE \(dialect.user) = $1 AND id = $3 AND kind = 'reminder' AND delivered_at IS NULL
          AND due_at IS NOT NULL AND due_at <= $2
        RETURNING \(AgentItem.selectList)
        """, [SQLValue(now), .integer(id)]
    ) { try AgentItem(row: $0) }.first
  }

  /// Undoes the claim of reminder `id` made at `claimedAt`: it is due again (and what its
  /// condition came to is forgotten).
  public func releaseReminder(_ id: Int64, claimedAt: Date) throws {
    try execute(
      scoped: """
        UPDATE agent_items SET delivered_at = NULL, condition_outcome = NULL
        WHERE \(dialect.user) = $1 AND id = $2 AND delivered_at = $3
        """, [.integer(id), SQLValue(claimedAt)])
  }

  // MARK: Pending calls

  /// Moves call `id` to `status` (with `error` when it failed).
  /// - Throws: `StoreError.notFound`.
  public func setPendingCallStatus(
    _ id: Int64, to status: PendingCallStatus, error: String? = nil, at time: Date
  ) throws {
    let changed = try execute(
      scoped: """
        UPDATE pending_calls SET status = $2, error = $3, updated_at = $4 WHERE \(dialect.user) = $1 AND id = $5
        """, [SQLValue(status), SQLValue(error), SQLValue(time), .integer(id)])
    guard changed > 0 else { throw StoreError.notFound(table: "pending_calls", id: id) }
  }

  /// At restart: cancels every call still `pending` or `confirmed` (a confirmed call that
  /// was not marked executed may or may not have run; it is never re-run blindly) and
  /// returns them as they are now, in id order.
  public func markUnfinishedPendingCallsCancelled(at time: Date = Date()) throws -> [PendingCall] {
    try rows(
      scoped: """
        UPDATE pending_calls SET status = 'cancelled', updated_at = $2
        WHERE \(dialect.user) = $1 AND status IN ('pending', 'confirmed') RETURNING \(PendingCall.selectList)
        """, [SQLValue(time)]
    ) { try PendingCall(row: $0) }.sorted { ($0.id ?? 0) < ($1.id ?? 0) }
  }

  /// Moves call `id` to `status` only while it is in one of `allowed`; returns whether it
  /// moved (false: it was already decided, for example cancelled by another process).
  public func transitionPendingCall(
    _ id: Int64, from allowed: Set<PendingCallStatus>, to status: PendingCallStatus, at time: Date
  ) throws -> Bool {
    // The statuses are the enum's own words, never user text.
    let list = allowed.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")
    return try execute(
      scoped: """
        UPDATE pending_calls SET status = $2, updated_at = $3
        WHERE \(dialect.user) = $1 AND id = $4 AND status IN (\(list.isEmpty ? "NULL" : list))
        """, [SQLValue(status), SQLValue(time), .integer(id)]) > 0
  }

  // MARK: Preferences

  /// Inserts or replaces the preference with `preference.key`.
  public func setPreference(_ preference: Preference) throws {
    try execute(
      scoped: """
        INSERT INTO preferences (\(dialect.user), key, value, pinned, updated_at) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (\(dialect.user), key) DO UPDATE SET value = excluded.value, pinned = excluded.pinned,
          updated_at = excluded.updated_at
        """,
      [
        SQLValue(preference.key), SQLValue(preference.value), SQLValue(preference.pinned),
        SQLValue(preference.updatedAt),
      ])
  }

  /// The preference `key`, or nil.
  public func preference(key: String) throws -> Preference? {
    try rows(
      scoped:
        "SELECT key, value, pinned, updated_at FROM preferences WHERE \(dialect.user) = $1 AND key = $2",
      [.text(key)]
    ) { Preference(row: $0) }.first
  }

  /// Preferences in key order (byte order: the same in every store), only pinned ones when
  /// `pinnedOnly`.
  public func preferences(pinnedOnly: Bool = false, page: Page = .all) throws -> [Preference] {
    try rows(
      scoped: """
        SELECT key, value, pinned, updated_at FROM preferences
        WHERE \(dialect.user) = $1 AND (CAST($2 AS integer) = 0 OR pinned)
        ORDER BY \(dialect.binaryOrder("key")) LIMIT $3 OFFSET $4
        """, [SQLValue(pinnedOnly), SQLValue(page.limit), SQLValue(page.offset)]
    ) { Preference(row: $0) }
  }

  /// The number of preferences.
  public func preferenceCount() throws -> Int {
    Int(try integer(scoped: "SELECT count(*) FROM preferences WHERE \(dialect.user) = $1") ?? 0)
  }

  /// Deletes preference `key`; returns whether it existed.
  @discardableResult
  public func deletePreference(key: String) throws -> Bool {
    try execute(scoped: "DELETE FROM preferences WHERE \(dialect.user) = $1 AND key = $2", [.text(key)]) > 0
  }

  // MARK: Skill state

  /// Inserts or replaces the state of `state.skillID`.
  public func setSkillState(_ state: SkillState) throws {
    try execute(
      scoped: """
        INSERT INTO skill_state (\(dialect.user), skill_id, enabled, updated_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (\(dialect.user), skill_id) DO UPDATE SET enabled = excluded.enabled,
          updated_at = excluded.updated_at
        """, [SQLValue(state.skillID), SQLValue(state.enabled), SQLValue(state.updatedAt)])
  }

  /// The state of skill `skillID`, or nil when never set.
  public func skillState(skillID: String) throws -> SkillState? {
    try rows(
      scoped:
        "SELECT skill_id, enabled, updated_at FROM skill_state WHERE \(dialect.user) = $1 AND skill_id = $2",
      [.text(skillID)]
    ) { SkillState(row: $0) }.first
  }

  /// Every skill state, in id order (byte order).
  public func skillStates(page: Page = .all) throws -> [SkillState] {
    try rows(
      scoped: """
        SELECT skill_id, enabled, updated_at FROM skill_state WHERE \(dialect.user) = $1
        ORDER BY \(dialect.binaryOrder("skill_id")) LIMIT $2 OFFSET $3
        """, [SQLValue(page.limit), SQLValue(page.offset)]
    ) { SkillState(row: $0) }
  }

  /// The number of skill states.
  public func skillStateCount() throws -> Int {
    Int(try integer(scoped: "SELECT count(*) FROM skill_state WHERE \(dialect.user) = $1") ?? 0)
  }

  /// Deletes the state of `skillID`; returns whether it existed.
  @discardableResult
  public func deleteSkillState(skillID: String) throws -> Bool {
    try execute(
      scoped: "DELETE FROM skill_state WHERE \(dialect.user) = $1 AND skill_id = $2", [.text(skillID)])
      > 0
  }

  // MARK: Routines

  /// Inserts `routine`, or replaces the one with the same key (its creation time kept).
  public func saveRoutine(_ routine: Routine) throws {
    try execute(
      scoped: """
        INSERT INTO routines (\(dialect.user), name_key, name, steps, enabled, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7)
        ON CONFLICT (\(dialect.user), name_key) DO UPDATE SET name = excluded.name, steps = excluded.steps,
          enabled = excluded.enabled, updated_at = excluded.updated_at
        """,
      [
        SQLValue(routine.key), SQLValue(routine.name), SQLValue(try routine.stepsJSON()),
        SQLValue(routine.enabled),
        SQLValue(routine.createdAt), SQLValue(routine.updatedAt),
      ])
  }

  /// Every routine of the user, by name (its key, in byte order).
  public func routines() throws -> [Routine] {
    try rows(
      scoped: """
        SELECT name, steps, enabled, created_at, updated_at FROM routines WHERE \(dialect.user) = $1
        ORDER BY \(dialect.binaryOrder("name_key"))
        """
    ) { try Routine(row: $0) }
  }

  /// The routine whose key is `key`, or nil.
  public func routine(key: String) throws -> Routine? {
    try rows(
      scoped: """
        SELECT name, steps, enabled, created_at, updated_at FROM routines WHERE \(dialect.user) = $1 AND name_key = $2
        """, [.text(key)]
    ) { try Routine(row: $0) }.first
  }

  /// Deletes the routine whose key is `key`; returns whether it existed.
  @discardableResult
  public func deleteRoutine(key: String) throws -> Bool {
    try execute(scoped: "DELETE FROM routines WHERE \(dialect.user) = $1 AND name_key = $2", [.text(key)]) > 0
  }
}
