import EngramCore
import Foundation

/// A session compaction may summarize.
public struct CompactionCandidate: Sendable, Equatable {
  /// The session's id.
  public var id: Int64
  /// Its external name, or `session <id>`.
  public var name: String

  package init(id: Int64, name: String) {
    self.id = id
    self.name = name
  }
}

/// How many turns and memories were created in one week (`MaintenanceQueries.weeklyActivity`).
public struct WeeklyActivity: Sendable, Equatable {
  /// The week's first instant: a Monday, 00:00 UTC.
  public var weekStart: Date
  /// Turns created that week.
  public var turns: Int
  /// Memories created that week (superseded ones included).
  public var memories: Int

  /// Creates a week's counts.
  public init(weekStart: Date, turns: Int, memories: Int) {
    self.weekStart = weekStart
    self.turns = turns
    self.memories = memories
  }

  /// Milliseconds from the Unix epoch (a Thursday) to the first Monday, 1970-01-05.
  package static let mondayOffsetMilliseconds: Int64 = 4 * 86_400_000
  /// Milliseconds in a week.
  package static let weekMilliseconds: Int64 = 7 * 86_400_000

  /// Merges per-week counts of turns and of memories (keys: week numbers from 1970-01-05).
  package static func merge(turns: [Int64: Int], memories: [Int64: Int]) -> [WeeklyActivity] {
    Set(turns.keys).union(memories.keys).sorted().map { week in
      WeeklyActivity(
        weekStart: Date(
          timeIntervalSince1970: Double(week * weekMilliseconds + mondayOffsetMilliseconds) / 1000),
        turns: turns[week] ?? 0, memories: memories[week] ?? 0)
    }
  }
}

/// What `doctor` counts of the embeddings table against the items.
public struct EmbeddingCensus: Sendable, Equatable {
  /// Items (messages, memories, summaries) without an embedding.
  public var missing: Int
  /// Embeddings whose item no longer exists.
  public var orphaned: Int
  /// Embeddings of another model or dimension than the configured one.
  public var foreign: Int
  /// All embeddings.
  public var stored: Int

  package init(missing: Int, orphaned: Int, foreign: Int, stored: Int) {
    self.missing = missing
    self.orphaned = orphaned
    self.foreign = foreign
    self.stored = stored
  }
}

/// The text of an item as its embedding is made from: a turn's or summary's content with
/// its time and speaker (the caller formats them), a memory's content.
public struct EmbeddableItem: Sendable, Equatable {
  /// The item's kind.
  public var kind: ItemKind
  /// Its id.
  public var id: Int64
  /// Its content.
  public var content: String
  /// The speaker of a turn.
  public var speaker: String?
  /// When it happened (turn time, summary start, memory creation).
  public var time: Date
  /// For a turn, the text of the turn before it in its session (nil for the first).
  public var previous: String?

  /// An item to embed.
  public init(
    kind: ItemKind, id: Int64, content: String, speaker: String? = nil, time: Date, previous: String? = nil
  ) {
    self.kind = kind
    self.id = id
    self.content = content
    self.speaker = speaker
    self.time = time
    self.previous = previous
  }
}

/// The tables whose row counts `stats` and compaction report.
public let reportedTables = ["sessions", "messages", "summaries", "memories", "embeddings"]

// Named queries of maintenance: compaction, doctor, reindex, statistics.
extension Connection {
  // MARK: Compaction

  /// Sessions with turns not yet covered by a summary and no turn at or after `cutoff`
  /// (ms), oldest first.
  public func compactionCandidates(before cutoff: Int64) throws -> [CompactionCandidate] {
    try prepare(
      """
      SELECT s.id, coalesce(s.external_id, 'session ' || s.id) FROM sessions s
      WHERE s.user_id = ?2
        AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.summary_id IS NULL)
        AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.created_at >= ?1)
      ORDER BY s.started_at, s.id
      """
    ).bindingAndMap([.integer(cutoff), .text(user)]) {
      CompactionCandidate(id: $0.int64(at: 0), name: $0.string(at: 1))
    }
  }

  /// Calls `body` with the content of every turn of session `sessionID` (in no order).
  public func forEachMessageContent(inSession sessionID: Int64, _ body: (String) throws -> Void) throws {
    let statement = try cachedStatement("SELECT content FROM messages WHERE session_id = ?1 AND user_id = ?2")
    try statement.bind([.integer(sessionID), .text(user)])
    try statement.forEachRow { try body($0.string(at: 0)) }
  }

  /// Marks every turn of `sessionID` not yet covered as covered by summary `summaryID`.
  public func coverUncoveredMessages(inSession sessionID: Int64, bySummary summaryID: Int64) throws {
    try run(
      "UPDATE messages SET summary_id = ?1 WHERE session_id = ?2 AND user_id = ?3 AND summary_id IS NULL",
      [.integer(summaryID), .integer(sessionID), .text(user)])
  }

  /// Live (not superseded) memories' ids and kinds, oldest first.
  public func liveMemoryKinds() throws -> [(id: Int64, kind: String)] {
    try prepare(
      "SELECT id, kind FROM memories WHERE user_id = ?1 AND superseded_by IS NULL ORDER BY created_at, id"
    ).bindingAndMap([.text(user)]) { (id: $0.int64(at: 0), kind: $0.string(at: 1)) }
  }

  /// Merges each full-text index's segments (`optimize`); run outside a transaction.
  public func optimizeFullTextIndexes() throws {
    for table in ["messages_fts", "memories_fts", "summaries_fts"] {
      try run("INSERT INTO \(table)(\(table)) VALUES ('optimize')")
    }
  }

  /// Rebuilds the file without free pages (`VACUUM`); run outside a transaction.
  public func vacuum() throws {
    try execute("VACUUM")
  }

  /// Moves the WAL's pages into the database file and truncates the WAL.
  public func checkpointTruncatingWAL() throws {
    try execute("PRAGMA wal_checkpoint(TRUNCATE)")
  }

  // MARK: Statistics

  /// Rows per table of `reportedTables`.
  public func rowCounts() throws -> [String: Int] {
    var counts: [String: Int] = [:]
    for table in reportedTables {
      // A table that holds only this user's rows (two seeks) is counted whole, which SQLite
      // does page by page without decoding a row (at 1,000,000 turns 42 ms of CPU for
      // messages and embeddings instead of 79 ms for the per-user index range).
      let count =
        try holdsOnlyThisUser(table)
        ? try scalarInt("SELECT count(*) FROM \(table)")
        : try scalarInt("SELECT count(*) FROM \(table) WHERE user_id = ?1", [.text(user)])
      counts[table] = Int(count ?? 0)
    }
    return counts
  }

  /// Memories per kind (kinds without memories are absent).
  public func memoryCountsByKind() throws -> [MemoryKind: Int] {
    var counts: [MemoryKind: Int] = [:]
    let statement = try prepare("SELECT kind, count(*) FROM memories WHERE user_id = ?1 GROUP BY kind")
    try statement.bind([.text(user)])
    try statement.forEachRow { row in
      if let kind = MemoryKind(rawValue: row.string(at: 0)) { counts[kind] = Int(row.int64(at: 1)) }
    }
    return counts
  }

  /// Turns and memories created per week, oldest first.
  public func weeklyActivity() throws -> [WeeklyActivity] {
    func counts(_ table: String) throws -> [Int64: Int] {
      // Integer division floors only for times after 1970-01-05; earlier ones are clamped to week 0.
      let statement = try prepare(
        "SELECT max(0, (created_at - \(WeeklyActivity.mondayOffsetMilliseconds)) / \(WeeklyActivity.weekMilliseconds)) AS week, "
          + "count(*) FROM \(table) WHERE user_id = ?1 GROUP BY week")
      try statement.bind([.text(user)])
      var result: [Int64: Int] = [:]
      try statement.forEachRow { row in result[row.int64(at: 0)] = Int(row.int64(at: 1)) }
      return result
    }
    return WeeklyActivity.merge(turns: try counts("messages"), memories: try counts("memories"))
  }

  // MARK: Doctor and reindex

  /// Counts missing, orphaned and foreign embeddings against `model` and `dimension`.
  public func embeddingCensus(model: String, dimension: Int) throws -> EmbeddingCensus {
    let missing =
      try scalarInt(
        """
        SELECT (SELECT count(*) FROM messages t WHERE t.user_id = ?1 AND NOT EXISTS (SELECT 1 FROM embeddings e
                  WHERE e.owner_kind = 'message' AND e.owner_id = t.id))
             + (SELECT count(*) FROM memories t WHERE t.user_id = ?1 AND NOT EXISTS (SELECT 1 FROM embeddings e
                  WHERE e.owner_kind = 'memory' AND e.owner_id = t.id))
             + (SELECT count(*) FROM summaries t WHERE t.user_id = ?1 AND NOT EXISTS (SELECT 1 FROM embeddings e
                  WHERE e.owner_kind = 'summary' AND e.owner_id = t.id))
        """, [.text(user)]) ?? 0
    let orphaned =
      try scalarInt(
        "SELECT count(*) FROM embeddings WHERE user_id = ?1 AND (\(Self.orphanCondition))", [.text(user)])
      ?? 0
    let foreign =
      try scalarInt(
        "SELECT count(*) FROM embeddings WHERE user_id = ?3 AND (coalesce(model, (SELECT value FROM meta WHERE key = 'embedding_model')) IS NOT ?1 OR dimension IS NOT ?2)",
        [.text(model), .integer(Int64(dimension)), .text(user)]) ?? 0
    let stored = try scalarInt("SELECT count(*) FROM embeddings WHERE user_id = ?1", [.text(user)]) ?? 0
    return EmbeddingCensus(
      missing: Int(missing), orphaned: Int(orphaned), foreign: Int(foreign), stored: Int(stored))
  }

  /// Deletes embeddings whose item no longer exists; returns how many.
  public func deleteOrphanEmbeddings() throws -> Int {
    try run("DELETE FROM embeddings WHERE user_id = ?1 AND (\(Self.orphanCondition))", [.text(user)])
    return changes
  }

  /// Deletes every embedding of this user (a reindex replaces them all in the same
  /// transaction).
  public func deleteAllEmbeddings() throws {
    try run("DELETE FROM embeddings WHERE user_id = ?1", [.text(user)])
  }

  private static let orphanCondition = """
    (owner_kind = 'message' AND owner_id NOT IN (SELECT id FROM messages))
      OR (owner_kind = 'memory' AND owner_id NOT IN (SELECT id FROM memories))
      OR (owner_kind = 'summary' AND owner_id NOT IN (SELECT id FROM summaries))
    """

  /// Every message, memory and summary with what its embedding text is made from, by kind
  /// then id.
  public func embeddableItems() throws -> [EmbeddableItem] {
    var items: [EmbeddableItem] = []
    let byUser = [SQLValue.text(user)]
    // The turn before each one in its session: the order of `previousTurnContent`.
    try prepare(
      """
      SELECT id, speaker, content, created_at, CASE WHEN session_id IS NULL THEN NULL
        ELSE lag(content) OVER (PARTITION BY session_id ORDER BY created_at, id) END
      FROM messages WHERE user_id = ?1 ORDER BY id
      """
    )
    .binding(byUser).forEachRow {
      items.append(
        EmbeddableItem(
          kind: .message, id: $0.int64(at: 0), content: $0.string(at: 2), speaker: $0.optionalString(at: 1),
          time: $0.date(at: 3), previous: $0.optionalString(at: 4)))
    }
    try prepare("SELECT id, content, created_at FROM memories WHERE user_id = ?1 ORDER BY id").binding(byUser)
      .forEachRow {
        items.append(
          EmbeddableItem(kind: .memory, id: $0.int64(at: 0), content: $0.string(at: 1), time: $0.date(at: 2)))
      }
    try prepare("SELECT id, content, start_at FROM summaries WHERE user_id = ?1 ORDER BY id").binding(byUser)
      .forEachRow {
        items.append(
          EmbeddableItem(kind: .summary, id: $0.int64(at: 0), content: $0.string(at: 1), time: $0.date(at: 2))
        )
      }
    return items
  }

}
