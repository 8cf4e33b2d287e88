import EngramCore
import Foundation

// Named queries of maintenance written once for every store: compaction, statistics,
// reindex (the store-specific ones are in `Connection+Maintenance.swift` and the PostgreSQL
// session's).
extension MaintenanceQueries {
  // MARK: Compaction

  /// Sessions with turns not yet covered by a summary and no turn at or after `cutoff`
  /// (ms), oldest first.
  public func compactionCandidates(before cutoff: Int64) throws -> [CompactionCandidate] {
    let sql = dialect
    return try rows(
      scoped: """
        SELECT s.id, coalesce(s.external_id, 'session ' || s.id) FROM sessions s
        WHERE s.\(sql.user) = $1
          AND EXISTS (SELECT 1 FROM messages m
                      WHERE \(sql.sameUser("m")) AND m.session_id = s.id AND m.summary_id IS NULL)
          AND NOT EXISTS (SELECT 1 FROM messages m
                          WHERE \(sql.sameUser("m")) AND m.session_id = s.id AND m.created_at >= $2)
        ORDER BY s.started_at, s.id
        """, [.integer(cutoff)]
    ) { CompactionCandidate(id: $0.int64(at: 0), name: $0.string(at: 1)) }
  }

  /// Calls `body` with the content of every turn of session `sessionID` (in no order).
  public func forEachMessageContent(inSession sessionID: Int64, _ body: (String) throws -> Void) throws {
    try forEachRow(
      scoped: "SELECT content FROM messages WHERE \(dialect.user) = $1 AND session_id = $2",
      [.integer(sessionID)]
    ) { try body($0.string(at: 0)) }
  }

  /// Marks every turn of `sessionID` not yet covered as covered by summary `summaryID`.
  public func coverUncoveredMessages(inSession sessionID: Int64, bySummary summaryID: Int64) throws {
    try execute(
      scoped: """
        UPDATE messages SET summary_id = $2 WHERE \(dialect.user) = $1 AND session_id = $3 AND summary_id IS NULL
        """, [.integer(summaryID), .integer(sessionID)])
  }

  /// Live (not superseded) memories' ids and kinds, oldest first.
  public func liveMemoryKinds() throws -> [(id: Int64, kind: String)] {
    try rows(
      scoped: """
        SELECT id, kind FROM memories WHERE \(dialect.user) = $1 AND superseded_by IS NULL ORDER BY created_at, id
        """
    ) { (id: $0.int64(at: 0), kind: $0.string(at: 1)) }
  }

  // MARK: Statistics

  /// Memories per kind (kinds without memories are absent).
  public func memoryCountsByKind() throws -> [MemoryKind: Int] {
    var counts: [MemoryKind: Int] = [:]
    try forEachRow(scoped: "SELECT kind, count(*) FROM memories WHERE \(dialect.user) = $1 GROUP BY kind", [])
    {
      if let kind = MemoryKind(rawValue: $0.string(at: 0)) { counts[kind] = Int($0.int64(at: 1)) }
    }
    return counts
  }

  /// Turns and memories created per week, oldest first.
  public func weeklyActivity() throws -> [WeeklyActivity] {
    func counts(_ table: String) throws -> [Int64: Int] {
      // Integer division floors only for times after 1970-01-05; earlier ones are clamped to week 0.
      let week =
        "(created_at - \(WeeklyActivity.mondayOffsetMilliseconds)) / \(WeeklyActivity.weekMilliseconds)"
      var result: [Int64: Int] = [:]
      try forEachRow(
        scoped: """
          SELECT \(dialect.greatest("0", week)) AS week, count(*) FROM \(table)
          WHERE \(dialect.user) = $1 GROUP BY week
          """, []
      ) { result[$0.int64(at: 0)] = Int($0.int64(at: 1)) }
      return result
    }
    return WeeklyActivity.merge(turns: try counts("messages"), memories: try counts("memories"))
  }

  // MARK: Doctor and reindex

  /// Deletes every embedding of this user (a reindex replaces them all in the same
  /// transaction).
  public func deleteAllEmbeddings() throws {
    try execute(scoped: "DELETE FROM embeddings WHERE \(dialect.user) = $1", [])
  }

  /// Every message, memory and summary with what its embedding text is made from, by kind
  /// then id.
  public func embeddableItems() throws -> [EmbeddableItem] {
    var items: [EmbeddableItem] = []
    // The turn before each one in its session: the order of `previousTurnContent`.
    try forEachRow(
      scoped: """
        SELECT id, speaker, content, created_at, CASE WHEN session_id IS NULL THEN NULL
          ELSE lag(content) OVER (PARTITION BY session_id ORDER BY created_at, id) END
        FROM messages WHERE \(dialect.user) = $1 ORDER BY id
        """, []
    ) {
      items.append(
        EmbeddableItem(
          kind: .message, id: $0.int64(at: 0), content: $0.string(at: 2), speaker: $0.optionalString(at: 1),
          time: $0.date(at: 3), previous: $0.optionalString(at: 4)))
    }
    for (kind, table, time) in [
      (ItemKind.memory, "memories", "created_at"), (.summary, "summaries", "start_at"),
    ] {
      try forEachRow(
        scoped: "SELECT id, content, \(time) FROM \(table) WHERE \(dialect.user) = $1 ORDER BY id", []
      ) {
        items.append(
          EmbeddableItem(kind: kind, id: $0.int64(at: 0), content: $0.string(at: 1), time: $0.date(at: 2)))
      }
    }
    return items
  }
}

extension ExportImportQueries {
  /// Whether any of `reportedTables` holds a row of this user (an import needs an empty
  /// memory).
  public func holdsItems() throws -> Bool {
    for table in reportedTables
    where try integer(scoped: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(dialect.user) = $1)") ?? 0 != 0 {
      return true
    }
    return false
  }
}
