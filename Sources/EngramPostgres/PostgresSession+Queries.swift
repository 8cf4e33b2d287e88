import EngramCore
import EngramStore
import Foundation

// The named queries of the SQLite store (Queries/ and the records' own), for one user.
extension PostgresSession {
  // MARK: Retrieval

  /// The ids of the user's turns in the sessions `ids` (see
  /// `Connection.messageIDs(inSessions:)`).
  public func messageIDs(inSessions ids: Set<Int64>) throws -> Set<Int64> {
    guard !ids.isEmpty else { return [] }
    var found = Set<Int64>()
    for row in try connection.execute(
      "SELECT id FROM messages WHERE user_scope = $1 AND session_id = ANY($2::bigint[])",
      [scope, Self.idArray(ids)]
    ).rows {
      if let id = try row.int64(0) { found.insert(id) }
    }
    return found
  }

  /// The user's distinct speakers, in binary order (one index seek per name).
  public func distinctSpeakers() throws -> [String] {
    try connection.execute(
      """
      WITH RECURSIVE names(name) AS (
        SELECT (SELECT speaker FROM messages WHERE user_scope = $1 AND speaker IS NOT NULL
                ORDER BY speaker COLLATE "C" LIMIT 1)
        UNION ALL
        SELECT (SELECT speaker FROM messages WHERE user_scope = $1 AND speaker COLLATE "C" > names.name
                ORDER BY speaker COLLATE "C" LIMIT 1)
        FROM names WHERE names.name IS NOT NULL
      )
      SELECT name FROM names WHERE name IS NOT NULL
      """, [scope]
    ).rows.compactMap { $0.string(0) }
  }

  // MARK: Maintenance

  /// The user's row counts of the reported tables.
  public func rowCounts() throws -> [String: Int] {
    var counts: [String: Int] = [:]
    for table in reportedTables {
      counts[table] = Int(try scalarInt("SELECT count(*) FROM \(table) WHERE user_scope = $1") ?? 0)
    }
    return counts
  }

  private static let orphanCondition = """
    (owner_kind = 'message' AND NOT EXISTS (SELECT 1 FROM messages t WHERE t.user_scope = e.user_scope AND t.id = e.owner_id))
      OR (owner_kind = 'memory' AND NOT EXISTS (SELECT 1 FROM memories t WHERE t.user_scope = e.user_scope AND t.id = e.owner_id))
      OR (owner_kind = 'summary' AND NOT EXISTS (SELECT 1 FROM summaries t WHERE t.user_scope = e.user_scope AND t.id = e.owner_id))
    """

  /// The user's embeddings against their owners and `model`.
  public func embeddingCensus(model: String, dimension: Int) throws -> EmbeddingCensus {
    var missing: Int64 = 0
    for kind in ItemKind.allCases {
      missing +=
        try scalarInt(
          """
          SELECT count(*) FROM \(kind.sourceTable) t WHERE t.user_scope = $1 AND NOT EXISTS
          (SELECT 1 FROM embeddings e WHERE e.user_scope = $1 AND e.owner_kind = $2 AND e.owner_id = t.id)
          """, [.text(kind.rawValue)]) ?? 0
    }
    let orphaned =
      try scalarInt("SELECT count(*) FROM embeddings e WHERE e.user_scope = $1 AND (\(Self.orphanCondition))")
      ?? 0
    let foreign =
      try scalarInt(
        "SELECT count(*) FROM embeddings WHERE user_scope = $1 AND (model <> $2 OR dimension <> $3)",
        [.text(model), .int(Int64(dimension))]) ?? 0
    let stored = try scalarInt("SELECT count(*) FROM embeddings WHERE user_scope = $1") ?? 0
    return EmbeddingCensus(
      missing: Int(missing), orphaned: Int(orphaned), foreign: Int(foreign), stored: Int(stored))
  }

  /// Deletes the user's embeddings whose owner is gone; returns how many.
  public func deleteOrphanEmbeddings() throws -> Int {
    try run("DELETE FROM embeddings e WHERE e.user_scope = $1 AND (\(Self.orphanCondition))")
  }

  // MARK: Agent records

  /// The user's items of `kind` due in `from..<to`, soonest first.
  public func agentItems(
    kind: AgentItemKind, dueFrom from: Date?, to: Date?, undeliveredOnly: Bool, limit: Int
  ) throws -> [AgentItem] {
    try records(
      """
      SELECT \(Self.selectList(AgentItem.self)) FROM agent_items
      WHERE user_scope = $1 AND kind = $2 AND due_at IS NOT NULL
        AND ($3::bigint IS NULL OR due_at >= $3) AND ($4::bigint IS NULL OR due_at < $4)
        AND (NOT $5::boolean OR delivered_at IS NULL)
      ORDER BY due_at, id LIMIT $6
      """,
      [
        .text(kind.rawValue), from.map { .int(Timestamp.milliseconds($0)) } ?? .null,
        to.map { .int(Timestamp.milliseconds($0)) } ?? .null, .bool(undeliveredOnly),
        .int(Int64(max(0, limit))),
      ]
    ) { try AgentItem(row: $0) }
  }

  /// Claims reminder `id` when due and undelivered (an UPDATE ... RETURNING: a row is claimed once).
  public func claimReminder(_ id: Int64, at now: Date) throws -> AgentItem? {
    try records(
      """
      UPDATE agent_items SET delivered_at = $2
      WHERE user_scope = $1 AND id = $3 AND kind = 'reminder' AND delivered_at IS NULL
        AND due_at IS NOT NULL AND due_at <= $2
      RETURNING \(Self.selectList(AgentItem.self))
      """, [.int(Timestamp.milliseconds(now)), .int(id)]
    ) { try AgentItem(row: $0) }.first
  }

  /// Undoes the claim of reminder `id` made at `claimedAt`: it is due again.
  public func releaseReminder(_ id: Int64, claimedAt: Date) throws {
    try run(
      """
      UPDATE agent_items SET delivered_at = NULL, condition_outcome = NULL
      WHERE user_scope = $1 AND id = $2 AND delivered_at = $3
      """,
      [.int(id), .int(Timestamp.milliseconds(claimedAt))])
  }

  /// The user's stored turns among `keys` (ingest `source_key`s), by key.
  public func ingestedTurns(sourceKeys keys: [Int64]) throws -> [Int64: IngestedTurn] {
    guard !keys.isEmpty else { return [:] }
    var found: [Int64: IngestedTurn] = [:]
    for row in try connection.execute(
      """
      SELECT m.source_key, m.id, EXISTS (
        SELECT 1 FROM embeddings e WHERE e.user_scope = $1 AND e.owner_kind = 'message' AND e.owner_id = m.id)
      FROM messages m WHERE m.user_scope = $1 AND m.source_key = ANY($2::bigint[])
      """, [scope, Self.idArray(keys)]
    ).rows {
      found[try row.int64(0) ?? 0] = IngestedTurn(
        id: try row.int64(1) ?? 0, embedded: try row.bool(2) ?? false)
    }
    return found
  }

  /// The user's current memory of `kind` with exactly `content` (same `scopeUser`), if any.
  public func identicalMemory(content: String, kind: MemoryKind, scopeUser: String?) throws -> Int64? {
    try connection.execute(
      """
      SELECT id FROM memories WHERE user_scope = $1 AND left(content, 64) = left($3, 64) AND kind = $2
        AND content = $3 AND superseded_by IS NULL
        AND scope_user IS NOT DISTINCT FROM $4 ORDER BY id LIMIT 1
      """, [scope, .text(kind.rawValue), .text(content), scopeUser.map(PostgresValue.text) ?? .null]
    ).rows.first.flatMap { try $0.int64(0) }
  }

  /// Sets a pending call's status (and error).
  public func setPendingCallStatus(
    _ id: Int64, to status: PendingCallStatus, error: String? = nil, at time: Date
  )
    throws
  {
    let changed = try run(
      "UPDATE pending_calls SET status = $2, error = $3, updated_at = $4 WHERE user_scope = $1 AND id = $5",
      [
        .text(status.rawValue), error.map(PostgresValue.text) ?? .null, .int(Timestamp.milliseconds(time)),
        .int(id),
      ])
    guard changed > 0 else { throw StoreError.notFound(table: "pending_calls", id: id) }
  }

  /// Cancels the user's pending and confirmed calls; returns them, in id order.
  public func markUnfinishedPendingCallsCancelled(at time: Date = Date()) throws -> [PendingCall] {
    try records(
      """
      UPDATE pending_calls SET status = 'cancelled', updated_at = $2
      WHERE user_scope = $1 AND status IN ('pending', 'confirmed') RETURNING \(Self.selectList(PendingCall.self))
      """, [.int(Timestamp.milliseconds(time))]
    ) { try PendingCall(row: $0) }.sorted { ($0.id ?? 0) < ($1.id ?? 0) }
  }

  /// Moves a pending call to `status` when its status is one of `allowed`.
  public func transitionPendingCall(
    _ id: Int64, from allowed: Set<PendingCallStatus>, to status: PendingCallStatus, at time: Date
  ) throws -> Bool {
    try run(
      """
      UPDATE pending_calls SET status = $2, updated_at = $3
      WHERE user_scope = $1 AND id = $4 AND status = ANY($5::text[])
      """,
      [
        .text(status.rawValue), .int(Timestamp.milliseconds(time)), .int(id),
        .text("{" + allowed.map(\.rawValue).sorted().joined(separator: ",") + "}"),
      ]) > 0
  }

  // MARK: Preferences and skills

  /// Sets one of the user's preferences.
  public func setPreference(_ preference: Preference) throws {
    try run(
      """
      INSERT INTO preferences (user_scope, key, value, pinned, updated_at) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (user_scope, key) DO UPDATE SET value = excluded.value, pinned = excluded.pinned,
        updated_at = excluded.updated_at
      """,
      [
        .text(preference.key), .text(preference.value), .bool(preference.pinned),
        .int(Timestamp.milliseconds(preference.updatedAt)),
      ])
  }

  /// The user's preference `key`, or nil.
  public func preference(key: String) throws -> Preference? {
    try records(
      "SELECT key, value, pinned, updated_at FROM preferences WHERE user_scope = $1 AND key = $2",
      [.text(key)]
    ) { Preference(row: $0) }.first
  }

  /// The user's preferences in key order.
  public func preferences(pinnedOnly: Bool = false, page: Page = .all) throws -> [Preference] {
    try records(
      """
      SELECT key, value, pinned, updated_at FROM preferences WHERE user_scope = $1 AND (NOT $2 OR pinned)
      ORDER BY key COLLATE "C" LIMIT $3 OFFSET $4
      """, [.bool(pinnedOnly), .int(Int64(page.limit)), .int(Int64(page.offset))]
    ) { Preference(row: $0) }
  }

  /// How many preferences the user has.
  public func preferenceCount() throws -> Int {
    Int(try scalarInt("SELECT count(*) FROM preferences WHERE user_scope = $1") ?? 0)
  }

  /// Deletes the user's preference `key`; returns whether it existed.
  @discardableResult
  public func deletePreference(key: String) throws -> Bool {
    try run("DELETE FROM preferences WHERE user_scope = $1 AND key = $2", [.text(key)]) > 0
  }

  /// Sets whether one of the user's skills is enabled.
  public func setSkillState(_ state: SkillState) throws {
    try run(
      """
      INSERT INTO skill_state (user_scope, skill_id, enabled, updated_at) VALUES ($1, $2, $3, $4)
      ON CONFLICT (user_scope, skill_id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at
      """, [.text(state.skillID), .bool(state.enabled), .int(Timestamp.milliseconds(state.updatedAt))])
  }

  /// The user's state of skill `skillID`, or nil.
  public func skillState(skillID: String) throws -> SkillState? {
    try records(
      "SELECT skill_id, enabled, updated_at FROM skill_state WHERE user_scope = $1 AND skill_id = $2",
      [.text(skillID)]
    ) { SkillState(row: $0) }.first
  }

  /// The user's skill states in id order.
  public func skillStates(page: Page = .all) throws -> [SkillState] {
    try records(
      """
      SELECT skill_id, enabled, updated_at FROM skill_state WHERE user_scope = $1
      ORDER BY skill_id COLLATE "C" LIMIT $2 OFFSET $3
      """, [.int(Int64(page.limit)), .int(Int64(page.offset))]
    ) { SkillState(row: $0) }
  }

  /// How many skill states the user has.
  public func skillStateCount() throws -> Int {
    Int(try scalarInt("SELECT count(*) FROM skill_state WHERE user_scope = $1") ?? 0)
  }

  /// Deletes the user's state of `skillID`; returns whether it existed.
  @discardableResult
  public func deleteSkillState(skillID: String) throws -> Bool {
    try run("DELETE FROM skill_state WHERE user_scope = $1 AND skill_id = $2", [.text(skillID)]) > 0
  }

  /// Inserts the user's routine, or replaces the one with the same key (creation time kept).
  public func saveRoutine(_ routine: Routine) throws {
    try run(
      """
      INSERT INTO routines (user_scope, name_key, name, steps, enabled, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (user_scope, name_key) DO UPDATE SET name = excluded.name, steps = excluded.steps,
        enabled = excluded.enabled, updated_at = excluded.updated_at
      """,
      [
        .text(routine.key), .text(routine.name), .text(try routine.stepsJSON()), .bool(routine.enabled),
        .int(Timestamp.milliseconds(routine.createdAt)), .int(Timestamp.milliseconds(routine.updatedAt)),
      ])
  }

  /// The user's routines, by name.
  public func routines() throws -> [Routine] {
    try records(
      """
      SELECT name, steps, enabled, created_at, updated_at FROM routines WHERE user_scope = $1
      ORDER BY name_key COLLATE "C"
      """
    ) { try Routine(row: $0) }
  }

  /// The user's routine whose key is `key`, or nil.
  public func routine(key: String) throws -> Routine? {
    try records(
      "SELECT name, steps, enabled, created_at, updated_at FROM routines WHERE user_scope = $1 AND name_key = $2",
      [.text(key)]
    ) { try Routine(row: $0) }.first
  }

  /// Deletes the user's routine whose key is `key`; returns whether it existed.
  @discardableResult
  public func deleteRoutine(key: String) throws -> Bool {
    try run("DELETE FROM routines WHERE user_scope = $1 AND name_key = $2", [.text(key)]) > 0
  }
}
