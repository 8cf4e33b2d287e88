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

/// Compacts old conversation into structured summaries and merges near-duplicate memories.
struct Compactor: Sendable {
  let open: OpenState
  let store: any MemoryStore
  /// Stores the summaries' embeddings and keeps the vector index in step.
  let vectors: VectorIndexKeeper
  let embedding: EmbeddingRunner
  /// Forgotten after compaction (turns may go).
  let speakers: SpeakerDirectory
  /// Counts, sizes and the store's own maintenance steps.
  let maintenance: Maintenance
  let policy: CompactionPolicy

  /// Most turns one compaction transaction covers (whole sessions; a longer session goes alone).
  static let turnsPerTransaction = 2_048
  /// Most sessions one compaction transaction covers.
  static let sessionsPerTransaction = 64

  /// Compacts old conversation and near-duplicate memories.
  func compact(
    olderThan: TimeInterval? = nil, now: Date = Date(), dryRun: Bool = false,
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> CompactionReport {
    try open.check()
    // Compaction reads vectors of the index (duplicates, summaries): read it when deferred.
    _ = try vectors.loaded()
    let cutoff = Timestamp.milliseconds(now.addingTimeInterval(-(olderThan ?? policy.olderThan)))
    let rowsBefore = try await maintenance.tableCounts()
    if !dryRun { try maintenance.maintainIfSupported(.checkpoint) }
    let bytesBefore = maintenance.databaseBytes()
    var report = CompactionReport(
      dryRun: dryRun, sessionsSummarized: 0, summariesCreated: 0, turnsDeleted: 0, embeddingsQuantized: 0,
      memoriesMerged: 0, indexRowsReclaimed: 0, rowsBefore: rowsBefore, rowsAfter: rowsBefore,
      bytesBefore: bytesBefore, bytesAfter: bytesBefore, plan: [])

    let plans = try compactionPlan(cutoff: cutoff)
    for plan in plans {
      report.sessionsSummarized += 1
      report.summariesCreated += 1
      report.turnsDeleted += plan.deletions
      report.embeddingsQuantized += plan.turns - plan.deletions + 1
      report.plan.append(
        "summarize \(plan.name): \(plan.turns) turns, quote \(plan.quotes), delete \(plan.deletions) low-information"
      )
    }
    if !dryRun {
      var start = 0
      while start < plans.count {
        if Task.isCancelled { throw EngramError.cancelled }
        progress?(EngramProgress(phase: "summarizing", done: start, total: plans.count))
        var end = start + 1
        var turns = plans[start].turns
        while end < plans.count, end - start < Self.sessionsPerTransaction,
          turns + plans[end].turns <= Self.turnsPerTransaction
        {
          turns += plans[end].turns
          end += 1
        }
        try await compactSessions(plans[start..<end], now: now)
        start = end
      }
    }

    // Near-duplicate memories: the older one is superseded by the newer one.
    let merges = try duplicateMemories(threshold: policy.duplicateThreshold)
    report.memoriesMerged = merges.count
    for merge in merges {
      report.plan.append("merge memory #\(merge.older) into #\(merge.newer) (cosine \(merge.cosine))")
    }
    if !dryRun {
      try store.writeTransaction { connection in
        for merge in merges {
          try connection.supersedeMemory(merge.older, by: merge.newer, at: now)
        }
        try connection.setMeta("last_compaction", String(Timestamp.milliseconds(now)))
      }
      report.indexRowsReclaimed = vectors.index.compact()
      try maintenance.maintainIfSupported(.optimizeFullText)
      try maintenance.maintainIfSupported(.checkpoint)
      try maintenance.maintainIfSupported(.vacuum)
      try maintenance.maintainIfSupported(.checkpoint)
      report.rowsAfter = try await maintenance.tableCounts()
      report.bytesAfter = maintenance.databaseBytes()
      try? vectors.writeSnapshot()
    }
    speakers.invalidate()
    progress?(EngramProgress(phase: "done", done: plans.count, total: plans.count))
    return report
  }

  /// What compaction does to one session.
  struct SessionPlan: Sendable {
    var id: Int64
    var name: String
    var turns: Int
    var quotes: Int
    var deletions: Int
  }

  /// How many turns a summary of `turns` turns quotes.
  static func quoteCount(turns: Int) -> Int {
    min(turns, max(1, min(8, Int((Double(turns) * 0.1).rounded(.up)))))
  }

  /// The sessions to compact (all turns older than `cutoff`, some not yet covered), oldest
  /// first, each with its turn count and how many low-information turns would go: one read
  /// transaction over the turn texts, nothing else.
  func compactionPlan(cutoff: Int64) throws -> [SessionPlan] {
    try store.readTransaction { connection in
      try connection.compactionCandidates(before: cutoff).compactMap { candidate -> SessionPlan? in
        let (id, name) = (candidate.id, candidate.name)
        var turns = 0
        var low = 0
        try connection.forEachMessageContent(inSession: id) { content in
          turns += 1
          if ExtractiveSummarizer.isLowInformation(content) { low += 1 }
        }
        guard turns > 0 else { return nil }
        // Quotes come from informative turns when there are any (see `ExtractiveSummarizer`).
        let quotes = min(Self.quoteCount(turns: turns), low < turns ? turns - low : turns)
        let deletions = low < turns ? low : low - quotes
        return SessionPlan(id: id, name: name, turns: turns, quotes: quotes, deletions: deletions)
      }
    }
  }

  /// Summarizes the given sessions in one transaction, then brings the index in step.
  func compactSessions(_ plans: ArraySlice<SessionPlan>, now: Date) async throws {
    let model = embedding.embedder.modelID
    struct Prepared {
      var sessionID: Int64
      var summary: StructuredSummary
      var deletable: [Int64]
      var kept: [Int64]
    }
    var prepared: [Prepared] = []
    for plan in plans {
      let turns = try sessionTurns(plan.id)
      let low = turns.map { ExtractiveSummarizer.isLowInformation($0.text) }
      guard
        let summary = ExtractiveSummarizer.summarize(
          turns, maxQuotes: Self.quoteCount(turns: turns.count), lowInformation: low)
      else { continue }
      let quoted = Set(summary.quotedMessageIDs)
      let deletable = Set(zip(turns, low).filter { !quoted.contains($0.0.id) && $0.1 }.map(\.0.id))
      prepared.append(
        Prepared(
          sessionID: plan.id, summary: summary, deletable: deletable.sorted(),
          kept: turns.map(\.id).filter { !deletable.contains($0) }))
    }
    guard !prepared.isEmpty else { return }
    let summaryVectors = try await embedding.embed(
      prepared.map { DocumentText.make(speaker: nil, content: $0.summary.text, date: $0.summary.start) })
    let batch = prepared
    let summaryIDs = try await vectors.writeTrackedOffPool { connection -> [Int64] in
      var ids: [Int64] = []
      for (item, vector) in zip(batch, summaryVectors) {
        let summary = item.summary
        let summaryID = try connection.insert(
          Summary(
            sessionID: item.sessionID, firstMessageID: summary.firstMessageID,
            lastMessageID: summary.lastMessageID,
            startAt: summary.start, endAt: summary.end,
            content: summary.text, structured: summary.json.jsonText, generator: "extractive",
            createdAt: now))
        try connection.upsertEmbedding(
          EmbeddingRow(
            ownerKind: .summary, ownerID: summaryID, model: model, vector: vector,
            createdAt: now))
        try connection.coverUncoveredMessages(inSession: item.sessionID, bySummary: summaryID)
        for id in item.deletable { _ = try connection.delete(Message.self, id: id) }
        try connection.quantizeEmbeddings(ownerKind: .message, ownerIDs: item.kept)
        try connection.quantizeEmbeddings(ownerKind: .summary, ownerIDs: [summaryID])
        ids.append(summaryID)
      }
      return ids
    }
    vectors.remove(ids: prepared.flatMap { $0.deletable.map { VectorKey.make(.message, $0) } })
    // The index holds what the store holds: the int8 vectors, decoded.
    let stored = try store.readTransaction { connection in
      var rows: [(kind: ItemKind, id: Int64, vector: [Float])] = []
      for item in prepared {
        for id in item.kept {
          if let row = try connection.embedding(ownerKind: .message, ownerID: id) {
            rows.append((.message, id, row.vector))
          }
        }
      }
      for id in summaryIDs {
        if let row = try connection.embedding(ownerKind: .summary, ownerID: id) {
          rows.append((.summary, id, row.vector))
        }
      }
      return rows
    }
    let summaryMetadata = Dictionary(
      uniqueKeysWithValues: zip(summaryIDs, prepared).map { id, item in
        (
          id,
          VectorMetadata(
            kind: ItemKind.summary.code, session: item.sessionID, scope: 0,
            timestamp: Timestamp.milliseconds(item.summary.start))
        )
      })
    try vectors.add(
      stored.compactMap { row in
        if row.kind == .summary, let metadata = summaryMetadata[row.id] {
          return (.summary, row.id, metadata, row.vector)
        }
        guard let metadata = vectors.index.metadata(for: VectorKey.make(.message, row.id)) else { return nil }
        return (.message, row.id, metadata, row.vector)
      })
  }

  struct MemoryMerge: Equatable {
    var older: Int64
    var newer: Int64
    var cosine: Float
  }

  /// Pairs of live memories of the same kind whose cosine is at least `threshold`.
  func duplicateMemories(threshold: Float) throws -> [MemoryMerge] {
    // Vectors read from a damaged snapshot would pair the wrong memories (or none).
    try vectors.rebuildIfSnapshotDamaged()
    let memories = try store.readTransaction { connection in
      try connection.liveMemoryKinds().map { ($0.id, $0.kind) }
    }
    let kinds = Dictionary(uniqueKeysWithValues: memories)
    let index = vectors.index
    var merged = Set<Int64>()
    var merges: [MemoryMerge] = []
    for (id, kind) in memories where !merged.contains(id) {
      guard let entry = index.entry(for: VectorKey.make(.memory, id)) else { continue }
      let hits = try index.search(entry.vector, k: 8, filter: VectorFilter(kinds: [ItemKind.memory.code]))
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
    let messages = try store.readTransaction { try $0.messages(inSession: sessionID) }
    let index = vectors.index
    return messages.map { message in
      let id = message.id ?? 0
      return ExtractiveSummarizer.Turn(
        id: id, speaker: message.speaker, text: message.content, date: message.createdAt,
        vector: index.entry(for: VectorKey.make(.message, id))?.vector ?? [])
    }
  }
}

extension Compactor {
  /// The turns a summary quotes verbatim (from its structured JSON).
  func quotedMessageIDs(ofSummary id: Int64) throws -> [Int64] {
    try open.check()
    guard let summary = try store.readTransaction({ try $0.fetch(Summary.self, id: id) }) else {
      throw EngramError.notFound(kind: .summary, id: id)
    }
    return (try? JSONValue.parse(summary.structured))?["quoted_message_ids"]?.arrayValue?.compactMap {
      $0.intValue.map(Int64.init)
    }
      ?? []
  }
}
