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

  private static let orphanCondition = """
    (owner_kind = 'message' AND owner_id NOT IN (SELECT id FROM messages))
      OR (owner_kind = 'memory' AND owner_id NOT IN (SELECT id FROM memories))
      OR (owner_kind = 'summary' AND owner_id NOT IN (SELECT id FROM summaries))
    """
}
