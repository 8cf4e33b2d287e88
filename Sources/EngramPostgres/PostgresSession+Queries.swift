import EngramCore
import EngramStore
import Foundation

// The named queries of the SQLite store (Queries/ and the records' own), for one user.
extension PostgresSession {
  // MARK: Retrieval

  /// Ranking metadata of the user's items `ids` (missing ones are left out).
  public func candidateRows(_ ids: [ItemKind: [Int64]]) throws -> [CandidateRow] {
    var rows: [CandidateRow] = []
    if let messages = ids[.message], !messages.isEmpty {
      for row in try connection.execute(
        """
        SELECT m.id, m.session_id, coalesce(m.speaker, m.role), m.created_at,
          (SELECT p.id FROM messages p WHERE p.user_scope = $1 AND p.session_id = m.session_id
             AND (p.created_at, p.id) < (m.created_at, m.id) ORDER BY p.created_at DESC, p.id DESC LIMIT 1),
          (SELECT n.id FROM messages n WHERE n.user_scope = $1 AND n.session_id = m.session_id
             AND (n.created_at, n.id) > (m.created_at, m.id) ORDER BY n.created_at, n.id LIMIT 1)
        FROM messages m WHERE m.user_scope = $1 AND m.id = ANY($2::bigint[])
        """, [scope, Self.idArray(messages)]
      ).rows {
        rows.append(
          CandidateRow(
            kind: .message, id: try row.int64(0) ?? 0, sessionID: try row.int64(1), speaker: row.string(2),
            timestamp: Timestamp.date(try row.int64(3) ?? 0), previous: try row.int64(4),
            next: try row.int64(5)))
      }
    }
    if let memories = ids[.memory], !memories.isEmpty {
      for row in try connection.execute(
        """
        SELECT id, session_id, created_at, superseded_by IS NOT NULL, scope_user, importance
        FROM memories WHERE user_scope = $1 AND id = ANY($2::bigint[])
        """, [scope, Self.idArray(memories)]
      ).rows {
        rows.append(
          CandidateRow(
            kind: .memory, id: try row.int64(0) ?? 0, sessionID: try row.int64(1),
            timestamp: Timestamp.date(try row.int64(2) ?? 0), superseded: try row.bool(3) ?? false,
            scopeUser: row.string(4), importance: try row.double(5)))
      }
    }
    if let summaries = ids[.summary], !summaries.isEmpty {
      for row in try connection.execute(
        "SELECT id, session_id, start_at FROM summaries WHERE user_scope = $1 AND id = ANY($2::bigint[])",
        [scope, Self.idArray(summaries)]
      ).rows {
        rows.append(
          CandidateRow(
            kind: .summary, id: try row.int64(0) ?? 0, sessionID: try row.int64(1),
            timestamp: Timestamp.date(try row.int64(2) ?? 0)))
      }
    }
    return rows
  }

  /// The texts of the user's items `ids`.
  public func itemTexts(_ ids: [ItemKind: [Int64]]) throws -> [ItemKind: [Int64: ItemText]] {
    var texts: [ItemKind: [Int64: ItemText]] = [:]
    if let messages = ids[.message], !messages.isEmpty {
      var found: [Int64: ItemText] = [:]
      for row in try connection.execute(
        "SELECT id, content, metadata FROM messages WHERE user_scope = $1 AND id = ANY($2::bigint[])",
        [scope, Self.idArray(messages)]
      ).rows {
        found[try row.int64(0) ?? 0] = ItemText(
          text: row.string(1) ?? "", metadataJSON: row.string(2) ?? "{}")
      }
      texts[.message] = found
    }
    if let memories = ids[.memory], !memories.isEmpty {
      var found: [Int64: ItemText] = [:]
      for row in try connection.execute(
        "SELECT id, content, metadata, kind FROM memories WHERE user_scope = $1 AND id = ANY($2::bigint[])",
        [scope, Self.idArray(memories)]
      ).rows {
        found[try row.int64(0) ?? 0] = ItemText(
          text: row.string(1) ?? "", metadataJSON: row.string(2) ?? "{}",
          memoryKind: row.string(3).flatMap(MemoryKind.init(rawValue:)))
      }
      texts[.memory] = found
    }
    if let summaries = ids[.summary], !summaries.isEmpty {
      var found: [Int64: ItemText] = [:]
      for row in try connection.execute(
        """
        SELECT id, content, first_message_id, last_message_id FROM summaries
        WHERE user_scope = $1 AND id = ANY($2::bigint[])
        """, [scope, Self.idArray(summaries)]
      ).rows {
        found[try row.int64(0) ?? 0] = ItemText(
          text: row.string(1) ?? "", coveredTurns: (try row.int64(2), try row.int64(3)))
      }
      texts[.summary] = found
    }
    return texts
  }

  /// The user's session named `name` (its external id, else its numeric id), or nil.
  public func sessionID(named name: String) throws -> Int64? {
    if let session = try session(externalID: name) { return session.id }
    if let id = Int64(name), try fetch(Session.self, id: id) != nil { return id }
    return nil
  }

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

  /// The user's newest memories (of `kind`), newest first.
  public func memories(kind: MemoryKind?, limit: Int, includeSuperseded: Bool) throws -> [Memory] {
    try records(
      """
      SELECT \(Self.selectList(Memory.self)) FROM memories
      WHERE user_scope = $1 AND ($2::text IS NULL OR kind = $2) AND ($3 OR superseded_by IS NULL)
      ORDER BY created_at DESC, id DESC LIMIT $4
      """, [kind.map { .text($0.rawValue) } ?? .null, .bool(includeSuperseded), .int(Int64(max(0, limit)))]
    ) { try Memory(row: $0) }
  }

  /// The user's last `limit` messages (of `sessionID`), oldest first.
  public func recentMessages(limit: Int, sessionID: Int64? = nil) throws -> [Message] {
    try records(
      """
      SELECT * FROM (SELECT \(Self.selectList(Message.self)) FROM messages
      WHERE user_scope = $1 AND ($2::bigint IS NULL OR session_id = $2) ORDER BY created_at DESC, id DESC LIMIT $3) r
      ORDER BY created_at, id
      """, [sessionID.map(PostgresValue.int) ?? .null, .int(Int64(max(0, limit)))]
    ) { try Message(row: $0) }
  }

  /// The text of the turn before a turn of session `sessionID` said at `time` (see
  /// `ItemQueries.previousTurnContent`).
  public func previousTurnContent(sessionID: Int64, time: Date, id: Int64?) throws -> String? {
    let rows = try connection.execute(
      """
      SELECT content FROM messages
      WHERE user_scope = $1 AND session_id = $2
        AND (created_at < $3 OR (created_at = $3 AND ($4::bigint IS NULL OR id < $4)))
      ORDER BY created_at DESC, id DESC LIMIT 1
      """, [scope, .int(sessionID), .int(Timestamp.milliseconds(time)), id.map(PostgresValue.int) ?? .null]
    ).rows
    return rows.first?.string(0)
  }

  /// Marks the user's messages `ids` as covered by summary `summaryID` (nil clears it).
  public func setSummary(_ summaryID: Int64?, forMessages ids: [Int64]) throws {
    try run(
      "UPDATE messages SET summary_id = $2 WHERE user_scope = $1 AND id = ANY($3::bigint[])",
      [summaryID.map(PostgresValue.int) ?? .null, Self.idArray(ids)])
  }

  /// Records that memories `ids` were retrieved at `time`.
  public func recordMemoryAccess(ids: [Int64], at time: Date) throws {
    for id in ids {
      try run(
        "UPDATE memories SET access_count = access_count + 1, last_accessed_at = $2 WHERE user_scope = $1 AND id = $3",
        [.int(Timestamp.milliseconds(time)), .int(id)])
    }
  }

  /// Adds batched access statistics (a memory forgotten meanwhile is skipped).
  public func recordMemoryAccess(_ entries: [(id: Int64, count: Int, lastAccess: Int64)]) throws {
    for entry in entries {
      try run(
        """
        UPDATE memories SET access_count = access_count + $2,
          last_accessed_at = greatest(coalesce(last_accessed_at, 0), $3) WHERE user_scope = $1 AND id = $4
        """, [.int(Int64(entry.count)), .int(entry.lastAccess), .int(entry.id)])
    }
  }

  /// Marks memory `id` as replaced by `newID` at `time`.
  public func supersedeMemory(_ id: Int64, by newID: Int64, at time: Date) throws {
    let changed = try run(
      "UPDATE memories SET superseded_by = $2, updated_at = $3 WHERE user_scope = $1 AND id = $4",
      [.int(newID), .int(Timestamp.milliseconds(time)), .int(id)])
    guard changed > 0 else { throw StoreError.notFound(table: "memories", id: id) }
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

  /// The user's sessions with turns no summary covers and none at or after `cutoff`.
  public func compactionCandidates(before cutoff: Int64) throws -> [CompactionCandidate] {
    try connection.execute(
      """
      SELECT s.id, coalesce(s.external_id, 'session ' || s.id) FROM sessions s
      WHERE s.user_scope = $1
        AND EXISTS (SELECT 1 FROM messages m WHERE m.user_scope = $1 AND m.session_id = s.id AND m.summary_id IS NULL)
        AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.user_scope = $1 AND m.session_id = s.id AND m.created_at >= $2)
      ORDER BY s.started_at, s.id
      """, [scope, .int(cutoff)]
    ).rows.map { CompactionCandidate(id: try $0.int64(0) ?? 0, name: $0.string(1) ?? "") }
  }

  /// Calls `body` with the text of each of the session's turns.
  public func forEachMessageContent(inSession sessionID: Int64, _ body: (String) throws -> Void) throws {
    for row in try connection.execute(
      "SELECT content FROM messages WHERE user_scope = $1 AND session_id = $2", [scope, .int(sessionID)]
    ).rows {
      try body(row.string(0) ?? "")
    }
  }

  /// Marks the session's uncovered turns as covered by `summaryID`.
  public func coverUncoveredMessages(inSession sessionID: Int64, bySummary summaryID: Int64) throws {
    try run(
      "UPDATE messages SET summary_id = $2 WHERE user_scope = $1 AND session_id = $3 AND summary_id IS NULL",
      [.int(summaryID), .int(sessionID)])
  }

  /// The ids and kinds of the user's memories not superseded, oldest first.
  public func liveMemoryKinds() throws -> [(id: Int64, kind: String)] {
    try connection.execute(
      "SELECT id, kind FROM memories WHERE user_scope = $1 AND superseded_by IS NULL ORDER BY created_at, id",
      [scope]
    ).rows.map { (id: try $0.int64(0) ?? 0, kind: $0.string(1) ?? "") }
  }

  /// The user's row counts of the reported tables.
  public func rowCounts() throws -> [String: Int] {
    var counts: [String: Int] = [:]
    for table in reportedTables {
      counts[table] = Int(try scalarInt("SELECT count(*) FROM \(table) WHERE user_scope = $1") ?? 0)
    }
    return counts
  }

  /// The user's memories counted by kind.
  public func memoryCountsByKind() throws -> [MemoryKind: Int] {
    var counts: [MemoryKind: Int] = [:]
    for row in try connection.execute(
      "SELECT kind, count(*) FROM memories WHERE user_scope = $1 GROUP BY kind", [scope]
    ).rows {
      if let kind = row.string(0).flatMap(MemoryKind.init(rawValue:)) {
        counts[kind] = Int(try row.int64(1) ?? 0)
      }
    }
    return counts
  }

  /// The user's turns and memories created per week, oldest first.
  public func weeklyActivity() throws -> [WeeklyActivity] {
    func counts(_ table: String) throws -> [Int64: Int] {
      var result: [Int64: Int] = [:]
      for row in try connection.execute(
        "SELECT greatest(0, (created_at - \(WeeklyActivity.mondayOffsetMilliseconds)) / \(WeeklyActivity.weekMilliseconds)) AS week, "
          + "count(*) FROM \(table) WHERE user_scope = $1 GROUP BY week", [scope]
      ).rows {
        if let week = try row.int64(0) { result[week] = Int(try row.int64(1) ?? 0) }
      }
      return result
    }
    return WeeklyActivity.merge(turns: try counts("messages"), memories: try counts("memories"))
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

  /// Deletes all of the user's embeddings.
  public func deleteAllEmbeddings() throws {
    try run("DELETE FROM embeddings WHERE user_scope = $1")
  }

  /// Every item of the user that can be embedded, by kind then id.
  public func embeddableItems() throws -> [EmbeddableItem] {
    var items: [EmbeddableItem] = []
    // The turn before each one in its session: the order of `previousTurnContent`.
    for row in try connection.execute(
      """
      SELECT id, speaker, content, created_at, CASE WHEN session_id IS NULL THEN NULL
        ELSE lag(content) OVER (PARTITION BY session_id ORDER BY created_at, id) END
      FROM messages WHERE user_scope = $1 ORDER BY id
      """, [scope]
    ).rows {
      items.append(
        EmbeddableItem(
          kind: .message, id: try row.int64(0) ?? 0, content: row.string(2) ?? "", speaker: row.string(1),
          time: Timestamp.date(try row.int64(3) ?? 0), previous: row.string(4)))
    }
    for (kind, table, time) in [
      (ItemKind.memory, "memories", "created_at"), (.summary, "summaries", "start_at"),
    ] {
      for row in try connection.execute(
        "SELECT id, content, \(time) FROM \(table) WHERE user_scope = $1 ORDER BY id", [scope]
      ).rows {
        items.append(
          EmbeddableItem(
            kind: kind, id: try row.int64(0) ?? 0, content: row.string(1) ?? "",
            time: Timestamp.date(try row.int64(2) ?? 0)))
      }
    }
    return items
  }

  /// Whether the user holds any session, turn, summary, memory or embedding.
  public func holdsItems() throws -> Bool {
    for table in reportedTables
    where try connection.execute("SELECT EXISTS (SELECT 1 FROM \(table) WHERE user_scope = $1)", [scope])[0]
      .bool(0) == true
    {
      return true
    }
    return false
  }

  // MARK: Forgetting

  /// Forgets one item of the user and its copies, as the SQLite store does: a memory takes
  /// along the turns, summaries, finished traces and pending calls that quote it; a turn or
  /// summary the summaries derived from it. Nil when the item does not exist.
  public func forgetItem(kind: ItemKind, id: Int64) throws -> ForgetReport? {
    var report = ForgetReport(kind: kind, id: id)
    var deletedTurns: [Int64] = []
    var needle: String?
    switch kind {
    case .memory:
      guard let memory = try fetch(Memory.self, id: id) else { return nil }
      needle = memory.content.trimmingCharacters(in: .whitespacesAndNewlines)
      _ = try delete(Memory.self, id: id)
    case .message:
      guard try fetch(Message.self, id: id) != nil else { return nil }
      deletedTurns.append(id)
    case .summary:
      guard try delete(Summary.self, id: id) else { return nil }
    }
    var summaries = Set<Int64>()
    if let needle, !needle.isEmpty {
      let escaped = String(JSONValue.string(needle).jsonText.dropFirst().dropLast())
      let arguments: [PostgresValue] = [.text(needle), .text(escaped)]
      // strpos on lower(): a plain substring test, as SQLite's instr (no pattern characters).
      let turns = try connection.execute(
        "SELECT id FROM messages WHERE user_scope = $1 AND strpos(lower(content), lower($2)) > 0",
        [scope, .text(needle)]
      ).rows.map { try $0.int64(0) ?? 0 }
      deletedTurns.append(contentsOf: turns)
      report.turns = turns
      summaries.formUnion(
        try connection.execute(
          "SELECT id FROM summaries WHERE user_scope = $1 AND strpos(lower(content), lower($2)) > 0",
          [scope, .text(needle)]
        ).rows.map { try $0.int64(0) ?? 0 })
      report.traces = try run(
        """
        DELETE FROM traces WHERE user_scope = $1 AND (strpos(lower(arguments::text), lower($2)) > 0
          OR strpos(lower(arguments::text), lower($3)) > 0 OR strpos(lower(coalesce(result, '')), lower($2)) > 0
          OR strpos(lower(coalesce(error, '')), lower($2)) > 0)
        """, arguments)
      report.pendingCalls = try run(
        """
        DELETE FROM pending_calls WHERE user_scope = $1 AND status NOT IN ('pending', 'confirmed') AND (
          strpos(lower(arguments::text), lower($2)) > 0 OR strpos(lower(arguments::text), lower($3)) > 0
          OR strpos(lower(summary), lower($2)) > 0 OR strpos(lower(coalesce(error, '')), lower($2)) > 0)
        """, arguments)
    }
    for turn in deletedTurns {
      summaries.formUnion(
        try connection.execute(
          """
          SELECT summary_id FROM messages WHERE user_scope = $1 AND id = $2 AND summary_id IS NOT NULL
          UNION SELECT s.id FROM summaries s
            WHERE s.user_scope = $1 AND json_typeof(s.structured) = 'object'
              AND json_typeof(s.structured -> 'quoted_message_ids') = 'array'
              AND EXISTS (SELECT 1 FROM json_array_elements_text(s.structured -> 'quoted_message_ids') q
                          WHERE q = $2::text)
          UNION SELECT id FROM summaries
            WHERE user_scope = $1 AND (first_message_id = $2 OR last_message_id = $2)
          """, [scope, .int(turn)]
        ).rows.map { try $0.int64(0) ?? 0 })
    }
    for turn in deletedTurns { _ = try delete(Message.self, id: turn) }
    report.summaries = summaries.sorted()
    for summary in report.summaries { _ = try delete(Summary.self, id: summary) }
    return report
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
