import EngramEmbeddings
import EngramStore
import EngramVectors
import Foundation

/// What `doctor` found, and what it repaired.
public struct DoctorReport: Sendable, Equatable {
  /// One check.
  public struct Check: Sendable, Equatable {
    public var name: String
    public var ok: Bool
    public var detail: String
  }

  public var checks: [Check]
  /// Repairs made (empty unless `repair` was asked and something was wrong).
  public var repairs: [String]
  /// Whether every check passed (after repairs, when asked).
  public var healthy: Bool { checks.allSatisfy(\.ok) }
}

extension MemoryEngine {
  /// Checks that store, full-text indexes and vector index agree: SQLite's integrity check,
  /// FTS row counts and FTS5's own check, every message, memory and summary having exactly
  /// one embedding of the configured model and dimension, and the vector index holding
  /// exactly the stored embeddings.
  ///
  /// - Parameter repair: rebuild what can be rebuilt: FTS indexes, orphan embeddings,
  ///   missing embeddings (embedded now) and the vector index with its snapshot.
  public func doctor(repair: Bool = false) async throws -> DoctorReport {
    try checkOpen()
    // Another process's writes are not disagreement: pick them up first.
    try refreshIndexIfStale()
    var report = try diagnose()
    guard repair, !report.healthy else { return report }
    var repairs: [String] = []
    let failed = Set(report.checks.filter { !$0.ok }.map(\.name))
    if failed.contains("integrity") {
      repairs.append(
        "integrity: SQLite reports damage; export what is readable and import it into a new file")
    }
    if failed.contains("fts") {
      try database.write { try $0.rebuildFTS() }
      repairs.append("fts: rebuilt the full-text indexes from the stored rows")
    }
    if failed.contains("embeddings") {
      let removed = try database.write { connection -> Int in
        try connection.run(
          """
          DELETE FROM embeddings WHERE
            (owner_kind = 'message' AND owner_id NOT IN (SELECT id FROM messages))
            OR (owner_kind = 'memory' AND owner_id NOT IN (SELECT id FROM memories))
            OR (owner_kind = 'summary' AND owner_id NOT IN (SELECT id FROM summaries))
          """)
        return connection.changes
      }
      let embedded = try await embedMissing()
      repairs.append("embeddings: removed \(removed) orphan(s), embedded \(embedded) missing")
    }
    if failed.contains("index") || failed.contains("embeddings") || failed.contains("snapshot") {
      try reloadIndex()
      try? FileManager.default.removeItem(at: snapshotURL)
      try saveSnapshot()
      repairs.append("index: rebuilt the vector index (\(index.count) rows) and its snapshot")
    }
    report = try diagnose()
    report.repairs = repairs
    return report
  }

  func diagnose() throws -> DoctorReport {
    var checks: [DoctorReport.Check] = []
    let integrity = try database.read { try $0.integrityCheck() }
    checks.append(
      DoctorReport.Check(
        name: "integrity", ok: integrity.isEmpty,
        detail: integrity.isEmpty ? "ok" : integrity.prefix(3).joined(separator: "; ")))

    // FTS5's integrity-check is a write command, so it runs on the writer (and changes
    // nothing); a read-only engine compares the counts only.
    let fts =
      configuration.readOnly
      ? try database.read { try $0.ftsConsistency(deep: false) }
      : try database.writeWithoutTransaction { try $0.ftsConsistency() }
    let badFTS = fts.filter { !$0.isConsistent }
    checks.append(
      DoctorReport.Check(
        name: "fts", ok: badFTS.isEmpty,
        detail: fts.map {
          "\($0.table) \($0.indexedRows)/\($0.sourceRows)\($0.indexIntact ? "" : " damaged")"
        }
        .joined(separator: ", ")))

    let model = embedder.modelID
    let dimension = embedder.dimension
    let (missing, orphans, foreign, stored) = try database.read { connection -> (Int, Int, Int, Int) in
      let missing =
        try connection.scalarInt(
          """
          SELECT (SELECT count(*) FROM messages t WHERE NOT EXISTS (SELECT 1 FROM embeddings e
                    WHERE e.owner_kind = 'message' AND e.owner_id = t.id))
               + (SELECT count(*) FROM memories t WHERE NOT EXISTS (SELECT 1 FROM embeddings e
                    WHERE e.owner_kind = 'memory' AND e.owner_id = t.id))
               + (SELECT count(*) FROM summaries t WHERE NOT EXISTS (SELECT 1 FROM embeddings e
                    WHERE e.owner_kind = 'summary' AND e.owner_id = t.id))
          """) ?? 0
      let orphans =
        try connection.scalarInt(
          """
          SELECT count(*) FROM embeddings WHERE
            (owner_kind = 'message' AND owner_id NOT IN (SELECT id FROM messages))
            OR (owner_kind = 'memory' AND owner_id NOT IN (SELECT id FROM memories))
            OR (owner_kind = 'summary' AND owner_id NOT IN (SELECT id FROM summaries))
          """) ?? 0
      let foreign =
        try connection.scalarInt(
          "SELECT count(*) FROM embeddings WHERE model IS NOT ?1 OR dimension IS NOT ?2",
          [.text(model), .integer(Int64(dimension))]) ?? 0
      let stored = try connection.scalarInt("SELECT count(*) FROM embeddings") ?? 0
      return (Int(missing), Int(orphans), Int(foreign), Int(stored))
    }
    checks.append(
      DoctorReport.Check(
        name: "embeddings", ok: missing == 0 && orphans == 0 && foreign == 0,
        detail: "\(stored) stored, \(missing) missing, \(orphans) orphaned, \(foreign) of another model"))

    var indexed = 0
    var absent = 0
    var differing = 0
    let index = self.index
    try database.read { connection in
      try connection.forEachEmbedding { entry, vector in
        indexed += 1
        let key = VectorKey.make(entry.ownerKind.itemKind, entry.ownerID)
        guard vector.count == dimension, let held = index.entry(for: key) else {
          absent += 1
          return
        }
        // The index holds unit vectors: the stored one must point the same way.
        var dot: Float = 0
        var norm: Float = 0
        for component in 0..<dimension {
          dot += vector[component] * held.vector[component]
          norm += vector[component] * vector[component]
        }
        if !(dot >= 0.999 * norm.squareRoot()) { differing += 1 }
      }
    }
    let live = index.count
    let differs = differing > 0 ? ", \(differing) with another vector" : ""
    checks.append(
      DoctorReport.Check(
        name: "index", ok: absent == 0 && differing == 0 && live == indexed,
        detail:
          "\(live) rows in the vector index for \(indexed) stored embeddings, \(absent) absent\(differs)"))
    checks.append(try snapshotCheck())
    return DoctorReport(checks: checks, repairs: [])
  }

  /// Verifies every byte of the snapshot file (an open checks its header, token and row
  /// table only). A stale snapshot, or a damaged one the open refused, is not a fault: it
  /// is not used, and the next writer replaces it. A damaged one in use is.
  func snapshotCheck() throws -> DoctorReport.Check {
    let inUse = indexState.withLock { $0.fromSnapshot }
    let url = snapshotURL
    guard FileManager.default.fileExists(atPath: url.path) else {
      return DoctorReport.Check(
        name: "snapshot", ok: true, detail: "none (the index is built from the database)")
    }
    // Current, or else the earlier state this database recorded (brought up to date on open).
    let (current, recorded) = try database.read {
      (try $0.currentSnapshotToken(), try $0.vectorSnapshotStamp())
    }
    var tokens: [(token: UInt64, state: String)] = []
    if let current { tokens.append((current, "current")) }
    if inUse, let recorded, recorded.token != current {
      tokens.append((recorded.token, "behind the database, brought up to date from it on open"))
    }
    for (token, state) in tokens {
      do {
        try VectorIndex.verifySnapshot(url, expectedToken: token, dimension: embedder.dimension)
        return DoctorReport.Check(name: "snapshot", ok: true, detail: "\(state), every byte verified")
      } catch .snapshotStale {
        continue
      } catch .snapshotCorrupt(_, let reason) {
        return DoctorReport.Check(
          name: "snapshot", ok: !inUse,
          detail: inUse
            ? "damaged (\(reason)) and in use; run `engram doctor --repair`" : "damaged (\(reason)), not used"
        )
      } catch {
        return DoctorReport.Check(name: "snapshot", ok: !inUse, detail: "unreadable (\(error))")
      }
    }
    return DoctorReport.Check(name: "snapshot", ok: true, detail: "not current (not used)")
  }

  /// Embeds every message, memory and summary that has no embedding; returns how many.
  func embedMissing() async throws -> Int {
    var total = 0
    let model = embedder.modelID
    for kind in [OwnerKind.message, .memory, .summary] {
      while true {
        let batch = try database.read { connection -> [(Int64, String)] in
          let ids = try connection.ownersWithoutEmbedding(kind, limit: 256)
          return try ids.compactMap { id in
            switch kind {
            case .message:
              return try connection.fetch(Message.self, id: id).map {
                (
                  id,
                  Self.documentText(
                    speaker: $0.speaker, content: $0.content, date: Timestamp.date($0.createdAt))
                )
              }
            case .memory: return try connection.fetch(Memory.self, id: id).map { (id, $0.content) }
            case .summary:
              return try connection.fetch(Summary.self, id: id).map {
                (id, Self.documentText(speaker: nil, content: $0.content, date: Timestamp.date($0.startAt)))
              }
            }
          }
        }
        if batch.isEmpty { break }
        let vectors = try await embed(batch.map(\.1))
        try database.write { connection in
          for (position, (id, _)) in batch.enumerated() {
            try connection.upsertEmbedding(
              EmbeddingRow(
                ownerKind: kind, ownerID: id, model: model, vector: vectors[position],
                createdAt: Timestamp.now()))
          }
        }
        total += batch.count
      }
    }
    return total
  }

  /// Re-embeds everything in the memory at `path` with `configuration.embedder` and switches
  /// the database's model in one transaction (all or nothing), then opens it.
  ///
  /// The old model is not needed: texts are read from the store.
  ///
  /// - Parameter embedderSpec: when given, recorded as `meta.embedder_spec` in the same
  ///   transaction as the new vectors, so a crash can never leave vectors of one model with
  ///   the spec of the other (a tool reopening the file would then refuse it).
  /// - Throws: `EngramError.emptyText` for a blank `embedderSpec` (nothing changed); embedder
  ///   and store errors.
  public static func reindex(
    path: String, configuration: EngramConfiguration, embedderSpec: String? = nil,
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> MemoryEngine {
    try configuration.validate()
    if let embedderSpec, embedderSpec.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
      throw EngramError.emptyText
    }
    var storeConfiguration = Database.Configuration()
    storeConfiguration.busyTimeout = configuration.busyTimeout
    let database = try Database(path: path, configuration: storeConfiguration)
    defer { database.close() }
    let embedder = configuration.embedder
    // Texts already embedded with the new model, by owner. Another process may add, change
    // or delete items while the embedder runs: after embedding, the items are read again and
    // whatever is new or changed is embedded too, and the final transaction checks, holding
    // the write lock, that nothing moved since; otherwise it rolls back and catches up again.
    var embedded: [ReindexKey: (text: String, vector: [Float])] = [:]
    var total = 0
    for _ in 0..<Self.reindexCatchUpRounds {
      let items = try database.read { try reindexItems($0) }
      let missing = items.filter { embedded[ReindexKey($0.0, $0.1)]?.text != $0.2 }
      if !missing.isEmpty {
        total = max(total, items.count)
        var start = 0
        while start < missing.count {
          if Task.isCancelled { throw EngramError.cancelled }
          let end = min(start + configuration.embeddingBatchSize, missing.count)
          let part = try await embedder.embed(missing[start..<end].map(\.2))
          guard part.count == end - start else {
            throw EngramError.embedderContract(expected: end - start, actual: part.count)
          }
          try checkEmbeddings(part, dimension: embedder.dimension, offset: start)
          for (offset, vector) in part.enumerated() {
            let item = missing[start + offset]
            embedded[ReindexKey(item.0, item.1)] = (item.2, vector)
          }
          start = end
          progress?(
            EngramProgress(phase: "embedding", done: items.count - missing.count + start, total: items.count))
        }
      }
      let now = Timestamp.now()
      let written = try database.write { connection -> Int? in
        let current = try reindexItems(connection)
        guard current.allSatisfy({ embedded[ReindexKey($0.0, $0.1)]?.text == $0.2 }) else { return nil }
        try connection.configureEmbeddingModel(
          model: embedder.modelID, dimension: embedder.dimension, replace: true)
        try connection.run("DELETE FROM embeddings")
        if let embedderSpec { try connection.setMeta(Self.embedderSpecKey, embedderSpec) }
        for item in current {
          try connection.upsertEmbedding(
            EmbeddingRow(
              ownerKind: item.0, ownerID: item.1, model: embedder.modelID,
              vector: embedded[ReindexKey(item.0, item.1)]!.vector, createdAt: now))
        }
        return current.count
      }
      if let written {
        total = written
        try? FileManager.default.removeItem(atPath: path + ".vectors")
        database.close()
        progress?(EngramProgress(phase: "done", done: total, total: total))
        return try MemoryEngine(path: path, configuration: configuration)
      }
    }
    throw EngramError.changedDuringReindex(rounds: Self.reindexCatchUpRounds)
  }

  /// How many times a reindex catches up with other writers before it gives up.
  static let reindexCatchUpRounds = 16

  /// An owner of an embedding.
  struct ReindexKey: Hashable {
    var kind: OwnerKind
    var id: Int64
    init(_ kind: OwnerKind, _ id: Int64) {
      self.kind = kind
      self.id = id
    }
  }

  /// Every message, memory and summary with the text its embedding is made from.
  static func reindexItems(_ connection: Connection) throws -> [(OwnerKind, Int64, String)] {
    var items: [(OwnerKind, Int64, String)] = []
    try connection.prepare("SELECT id, speaker, content, created_at FROM messages ORDER BY id").forEachRow {
      items.append(
        (
          .message, $0.int64(at: 0),
          documentText(
            speaker: $0.optionalString(at: 1), content: $0.string(at: 2),
            date: Timestamp.date($0.int64(at: 3)))
        ))
    }
    try connection.prepare("SELECT id, content FROM memories ORDER BY id").forEachRow {
      items.append((.memory, $0.int64(at: 0), $0.string(at: 1)))
    }
    try connection.prepare("SELECT id, content, start_at FROM summaries ORDER BY id").forEachRow {
      items.append(
        (
          .summary, $0.int64(at: 0),
          documentText(speaker: nil, content: $0.string(at: 1), date: Timestamp.date($0.int64(at: 2)))
        ))
    }
    return items
  }
}
