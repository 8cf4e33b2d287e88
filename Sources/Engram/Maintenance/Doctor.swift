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

/// Checks that the store, its full-text indexes and the vector index agree, and repairs
/// what can be rebuilt.
struct Doctor: Sendable {
  let open: OpenState
  let store: any MemoryStore
  /// The vector index and its snapshot, checked against the store.
  let vectors: VectorIndexKeeper
  /// Embeds what has no embedding (and says which model the vectors must be).
  let embedding: EmbeddingRunner
  /// A read-only engine reports a missing snapshot as a fault it cannot repair.
  let readOnly: Bool

  var embedder: any Embedder { embedding.embedder }
  var index: VectorIndex { vectors.index }

  /// Checks that store, full-text indexes and vector index agree: SQLite's integrity check,
  func doctor(repair: Bool = false) async throws -> DoctorReport {
    try open.check()
    // The index is checked row by row: read it when its load was deferred.
    _ = try vectors.loaded()
    // Another process's writes are not disagreement: pick them up first.
    try vectors.refreshIfStale()
    var report = try diagnose()
    guard repair, !report.healthy else { return report }
    var repairs: [String] = []
    let failed = Set(report.checks.filter { !$0.ok }.map(\.name))
    if failed.contains("integrity") {
      repairs.append(
        "integrity: SQLite reports damage; export what is readable and import it into a new memory")
    }
    if failed.contains("fts") {
      try store.writeTransaction { try $0.rebuildFTS() }
      repairs.append("fts: rebuilt the full-text indexes from the stored rows")
    }
    if failed.contains("embeddings") {
      let removed = try store.writeTransaction { try $0.deleteOrphanEmbeddings() }
      let embedded = try await embedMissing()
      repairs.append("embeddings: removed \(removed) orphan(s), embedded \(embedded) missing")
    }
    if failed.contains("index") || failed.contains("embeddings") || failed.contains("snapshot") {
      try vectors.reload()
      if let snapshot = vectors.snapshotURL { try? FileManager.default.removeItem(at: snapshot) }
      try vectors.writeSnapshot()
      repairs.append("index: rebuilt the vector index (\(index.count) rows) and its snapshot")
    }
    if failed.contains("lists") { repairs.append(try repairLists()) }
    report = try diagnose()
    report.repairs = repairs
    return report
  }

  func diagnose() throws -> DoctorReport {
    var checks: [DoctorReport.Check] = []
    let integrity = try store.readTransaction { try $0.integrityCheck() }
    checks.append(
      DoctorReport.Check(
        name: "integrity", ok: integrity.isEmpty,
        detail: integrity.isEmpty ? "ok" : integrity.prefix(3).joined(separator: "; ")))

    // Every block of every index is read: FTS5's integrity-check runs on the writer (and
    // changes nothing), or for a read-only engine on a private copy of the index.
    let fts = try store.fullTextConsistency(deep: true)
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
    let census = try store.readTransaction { try $0.embeddingCensus(model: model, dimension: dimension) }
    let (missing, orphans, foreign, stored) = (census.missing, census.orphaned, census.foreign, census.stored)
    checks.append(
      DoctorReport.Check(
        name: "embeddings", ok: missing == 0 && orphans == 0 && foreign == 0,
        detail: "\(stored) stored, \(missing) missing, \(orphans) orphaned, \(foreign) of another model"))

    var indexed = 0
    var absent = 0
    var differing = 0
    let index = self.index
    try store.readTransaction { connection in
      try connection.forEachEmbedding { entry, vector in
        indexed += 1
        let key = VectorKey.make(entry.ownerKind, entry.ownerID)
        // As held: a row of a snapshot of codes is checked against its codes, not re-read.
        guard vector.count == dimension, let held = index.heldVector(for: key) else {
          absent += 1
          return
        }
        // The stored vector must point the way the index's does (a unit row, or int8 codes
        // within their error bound of it).
        var dot: Float = 0
        var norm: Float = 0
        var heldNorm: Float = 0
        for component in 0..<dimension {
          dot += vector[component] * held[component]
          norm += vector[component] * vector[component]
          heldNorm += held[component] * held[component]
        }
        if !(dot >= 0.999 * (norm * heldNorm).squareRoot()) { differing += 1 }
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
    checks.append(try listsCheck())
    return DoctorReport(checks: checks, repairs: [])
  }

  /// Verifies every byte of the snapshot file (an open checks its header, token and row
  /// table only). A stale snapshot, or a damaged one the open refused, is not a fault: it
  /// is not used, and the next writer replaces it. A damaged one in use is.
  func snapshotCheck() throws -> DoctorReport.Check {
    let inUse = vectors.isFromSnapshot
    guard let url = vectors.snapshotURL, FileManager.default.fileExists(atPath: url.path) else {
      let rows = vectors.rowCount
      if readOnly, vectors.snapshotURL != nil, vectors.keepsSnapshot(rows: rows) {
        // Every open then reads every vector from the table (seconds on a large memory),
        // and read-only commands never write one (a writable engine saves it as it closes).
        return DoctorReport.Check(
          name: "snapshot", ok: false,
          detail:
            "missing: every open reads the \(rows) vectors from the database; a repair (or any write) saves one"
        )
      }
      return DoctorReport.Check(
        name: "snapshot", ok: true, detail: "none (the index is built from the database)")
    }
    // Current, or else the earlier state this database recorded (brought up to date on open).
    let (current, recorded) = try store.readTransaction {
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
            ? "damaged (\(reason)) and in use; a repair rebuilds it" : "damaged (\(reason)), not used")
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
    for kind in [ItemKind.message, .memory, .summary] {
      while true {
        let batch = try store.readTransaction { connection -> [(Int64, String)] in
          try connection.ownersWithoutEmbedding(kind, limit: 256).compactMap { id in
            try connection.embeddableItem(kind, id: id).map { (id, DocumentText.make($0)) }
          }
        }
        if batch.isEmpty { break }
        let vectors = try await embedding.embed(batch.map(\.1))
        try store.writeTransaction { connection in
          for (position, (id, _)) in batch.enumerated() {
            try connection.upsertEmbedding(
              EmbeddingRow(
                ownerKind: kind, ownerID: id, model: model, vector: vectors[position],
                createdAt: Date()))
          }
        }
        total += batch.count
      }
    }
    return total
  }
}
