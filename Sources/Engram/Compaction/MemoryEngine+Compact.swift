import EngramStore
import EngramVectors
import Foundation

/// What compaction did (or, in a dry run, would do).
public struct CompactionReport: Sendable, Equatable {
  /// Whether this was a dry run (nothing changed).
  public var dryRun: Bool
  /// Sessions that got a structured summary.
  public var sessionsSummarized: Int
  /// Summaries written.
  public var summariesCreated: Int
  /// Low-information turns deleted (each covered by its session's summary).
  public var turnsDeleted: Int
  /// Turn embeddings re-stored as int8 (4x smaller; cosine error below 1e-3).
  public var embeddingsQuantized: Int
  /// Memories marked superseded by a near-duplicate newer memory.
  public var memoriesMerged: Int
  /// Tombstoned rows reclaimed in the vector index.
  public var indexRowsReclaimed: Int
  /// Row counts per table before and after.
  public var rowsBefore: [String: Int]
  public var rowsAfter: [String: Int]
  /// Database size in bytes (file plus WAL) before and after.
  public var bytesBefore: Int
  public var bytesAfter: Int
  /// What would change, one line per decision (sessions, merges), for dry runs and logs.
  public var plan: [String]
}

extension MemoryEngine {
  /// Compacts old conversation and near-duplicate memories.
  ///
  /// For every session whose turns are all older than `olderThan` and not yet summarized:
  /// an extractive structured summary is stored (embedded and searchable), the session's
  /// turns are marked covered by it, covered low-information turns (greetings, thanks)
  /// are deleted, and the remaining covered turns' embeddings are re-stored as int8.
  /// Memories whose embedding has cosine >= `duplicateThreshold` with a newer memory of
  /// the same kind are marked superseded by it (never deleted). Then the index drops its
  /// tombstones, FTS indexes are optimized, the WAL is checkpointed and the file vacuumed.
  ///
  /// Each session is summarized in its own transaction, so an interruption leaves every
  /// session either untouched or fully compacted.
  ///
  /// - Parameters:
  ///   - olderThan: only turns older than this are compacted (default: the policy's).
  ///   - dryRun: report the plan without changing anything.
  public func compact(
    olderThan: TimeInterval? = nil, now: Date = Date(), dryRun: Bool = false,
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> CompactionReport {
    try checkOpen()
    let policy = configuration.compaction
    let cutoff = Timestamp.milliseconds(now.addingTimeInterval(-(olderThan ?? policy.olderThan)))
    let rowsBefore = try tableCounts()
    if !dryRun { try checkpoint() }
    let bytesBefore = databaseBytes()
    var report = CompactionReport(
      dryRun: dryRun, sessionsSummarized: 0, summariesCreated: 0, turnsDeleted: 0, embeddingsQuantized: 0,
      memoriesMerged: 0, indexRowsReclaimed: 0, rowsBefore: rowsBefore, rowsAfter: rowsBefore,
      bytesBefore: bytesBefore, bytesAfter: bytesBefore, plan: [])

    // Sessions whose turns are all older than the cutoff and not yet covered.
    let sessions = try database.read { connection in
      try connection.prepare(
        """
        SELECT s.id, coalesce(s.external_id, 'session ' || s.id) FROM sessions s
        WHERE EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.summary_id IS NULL)
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.created_at >= ?1)
        ORDER BY s.started_at, s.id
        """
      ).bindingAndMap([.integer(cutoff)]) { ($0.int64(at: 0), $0.string(at: 1)) }
    }
    let model = embedder.modelID
    for (position, (sessionID, name)) in sessions.enumerated() {
      if Task.isCancelled { throw EngramError.cancelled }
      progress?(EngramProgress(phase: "summarizing", done: position, total: sessions.count))
      let turns = try sessionTurns(sessionID)
      guard !turns.isEmpty else { continue }
      let quotes = max(1, min(8, Int((Double(turns.count) * 0.1).rounded(.up))))
      guard let summary = ExtractiveSummarizer.summarize(turns, maxQuotes: quotes) else { continue }
      let quoted = Set(summary.quotedMessageIDs)
      let deletable = turns.filter {
        !quoted.contains($0.id) && ExtractiveSummarizer.isLowInformation($0.text)
      }
      .map(\.id)
      report.sessionsSummarized += 1
      report.summariesCreated += 1
      report.turnsDeleted += deletable.count
      report.embeddingsQuantized += turns.count - deletable.count + 1
      report.plan.append(
        "summarize \(name): \(turns.count) turns, quote \(quoted.count), delete \(deletable.count) low-information"
      )
      guard !dryRun else { continue }

      let text = summary.text
      let vector = try await embed([Self.documentText(speaker: nil, content: text, date: summary.start)])[0]
      let keptIDs = turns.map(\.id).filter { !deletable.contains($0) }
      let summaryID = try writeTracked { connection -> Int64 in
        let summaryID = try connection.insert(
          Summary(
            sessionID: sessionID, firstMessageID: summary.firstMessageID,
            lastMessageID: summary.lastMessageID,
            startAt: Timestamp.milliseconds(summary.start), endAt: Timestamp.milliseconds(summary.end),
            content: text, structured: summary.json.jsonText, generator: "extractive",
            createdAt: Timestamp.milliseconds(now)))
        try connection.upsertEmbedding(
          EmbeddingRow(
            ownerKind: .summary, ownerID: summaryID, model: model, vector: vector,
            createdAt: Timestamp.milliseconds(now)))
        try connection.run(
          "UPDATE messages SET summary_id = ?1 WHERE session_id = ?2 AND summary_id IS NULL",
          [.integer(summaryID), .integer(sessionID)])
        for id in deletable { _ = try connection.delete(Message.self, id: id) }
        try connection.quantizeEmbeddings(ownerKind: .message, ownerIDs: keptIDs)
        try connection.quantizeEmbeddings(ownerKind: .summary, ownerIDs: [summaryID])
        return summaryID
      }
      for id in deletable { _ = index.remove(id: VectorKey.make(.message, id)) }
      // The index holds what the store holds: the int8 vectors, decoded.
      let requantized = try database.read { connection in
        try keptIDs.compactMap { id in
          try connection.embedding(ownerKind: .message, ownerID: id).map { (id, $0.vector) }
        }
      }
      try indexVectors(
        requantized.compactMap { id, vector in
          guard let entry = index.entry(for: VectorKey.make(.message, id)) else { return nil }
          return (.message, id, entry.metadata, vector)
        })
      let storedSummaryVector =
        try database.read { try $0.embedding(ownerKind: .summary, ownerID: summaryID)?.vector } ?? vector
      try indexVectors([
        (
          .summary, summaryID,
          VectorMetadata(
            kind: .summary, session: sessionID, scope: 0, timestamp: Timestamp.milliseconds(summary.start)),
          storedSummaryVector
        )
      ])
    }

    // Near-duplicate memories: the older one is superseded by the newer one.
    let merges = try duplicateMemories(threshold: policy.duplicateThreshold)
    report.memoriesMerged = merges.count
    for merge in merges {
      report.plan.append("merge memory #\(merge.older) into #\(merge.newer) (cosine \(merge.cosine))")
    }
    if !dryRun {
      try database.write { connection in
        for merge in merges {
          try connection.supersedeMemory(merge.older, by: merge.newer, at: Timestamp.milliseconds(now))
        }
        try connection.setMeta("last_compaction", String(Timestamp.milliseconds(now)))
      }
      report.indexRowsReclaimed = index.compact()
      try database.writeWithoutTransaction { connection in
        for table in ["messages_fts", "memories_fts", "summaries_fts"] {
          try connection.run("INSERT INTO \(table)(\(table)) VALUES ('optimize')")
        }
      }
      try checkpoint()
      try database.writeWithoutTransaction { try $0.execute("VACUUM") }
      try checkpoint()
      report.rowsAfter = try tableCounts()
      report.bytesAfter = databaseBytes()
      try? saveSnapshot()
    }
    speakers.withLock { $0 = nil }
    progress?(EngramProgress(phase: "done", done: sessions.count, total: sessions.count))
    return report
  }

  struct MemoryMerge: Equatable {
    var older: Int64
    var newer: Int64
    var cosine: Float
  }

  /// Pairs of live memories of the same kind whose cosine is at least `threshold`.
  func duplicateMemories(threshold: Float) throws -> [MemoryMerge] {
    let memories = try database.read { connection in
      try connection.prepare(
        "SELECT id, kind FROM memories WHERE superseded_by IS NULL ORDER BY created_at, id"
      ).map { ($0.int64(at: 0), $0.string(at: 1)) }
    }
    let kinds = Dictionary(uniqueKeysWithValues: memories)
    var merged = Set<Int64>()
    var merges: [MemoryMerge] = []
    for (id, kind) in memories where !merged.contains(id) {
      guard let entry = index.entry(for: VectorKey.make(.memory, id)) else { continue }
      let hits = try index.search(entry.vector, k: 8, filter: VectorFilter(kinds: [.memory]))
      for hit in hits where hit.score >= threshold {
        let (_, other) = VectorKey.split(hit.id)
        guard other > id, !merged.contains(other), kinds[other] == kind else { continue }
        merges.append(MemoryMerge(older: id, newer: other, cosine: hit.score))
        merged.insert(id)
        break
      }
    }
    return merges
  }

  func sessionTurns(_ sessionID: Int64) throws -> [ExtractiveSummarizer.Turn] {
    let rows = try database.read { connection in
      try connection.prepare(
        "SELECT id, speaker, content, created_at FROM messages WHERE session_id = ?1 ORDER BY created_at, id"
      ).bindingAndMap([.integer(sessionID)]) {
        ($0.int64(at: 0), $0.optionalString(at: 1), $0.string(at: 2), $0.int64(at: 3))
      }
    }
    return rows.map { row in
      ExtractiveSummarizer.Turn(
        id: row.0, speaker: row.1, text: row.2, date: Timestamp.date(row.3),
        vector: index.entry(for: VectorKey.make(.message, row.0))?.vector ?? [])
    }
  }

  /// Rows per table.
  public func tableCounts() throws -> [String: Int] {
    try database.read { connection in
      var counts: [String: Int] = [:]
      for table in ["sessions", "messages", "summaries", "memories", "embeddings"] {
        counts[table] = Int(try connection.scalarInt("SELECT count(*) FROM \(table)") ?? 0)
      }
      return counts
    }
  }

  /// The database's size on disk: the file and its WAL.
  public func databaseBytes() -> Int {
    var total = 0
    for suffix in ["", "-wal"] {
      if let size = try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int {
        total += size
      }
    }
    return total
  }

  /// Moves the WAL's pages into the database file and truncates the WAL.
  public func checkpoint() throws {
    try checkOpen()
    try database.writeWithoutTransaction { try $0.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
  }
}

extension Statement {
  /// Binds `arguments` and maps every row.
  func bindingAndMap<T>(_ arguments: [SQLValue], _ transform: (Statement) throws -> T) throws -> [T] {
    try bind(arguments)
    return try map(transform)
  }
}

extension MemoryEngine {
  /// The turns a summary quotes verbatim (from its structured JSON).
  public func quotedMessageIDs(ofSummary id: Int64) throws -> [Int64] {
    try checkOpen()
    guard let summary = try database.read({ try $0.fetch(Summary.self, id: id) }) else {
      throw EngramError.notFound(kind: .summary, id: id)
    }
    return (try? JSONValue.parse(summary.structured))?["quoted_message_ids"]?.arrayValue?.compactMap {
      $0.intValue.map(Int64.init)
    }
      ?? []
  }
}
