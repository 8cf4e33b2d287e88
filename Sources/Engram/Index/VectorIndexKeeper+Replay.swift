import EngramCore
import EngramStore
import EngramVectors
import Foundation

extension VectorIndexKeeper {
  /// The vector index from the snapshot file, when the file holds exactly the current
  /// embeddings (its token is current) or an earlier state of this database that can be
  /// brought up to date; also returns the generation the index reflects.
  ///
  /// An earlier state is trusted only when this database recorded the file's token as its
  /// snapshot at that generation (`VectorSnapshotStamp`, written by the process that wrote
  /// the file), and the change log still holds every change since: then the rows added since
  /// (ids above the stamp's) and the rows the log names (deleted, updated, inserted below
  /// that id) are read from the embeddings table and applied, all in one read transaction.
  /// A copy of the database that changed differently, a file from another history, a log
  /// pruned past the stamp: nil, and the caller rebuilds from the table.
  /// - Complexity: O(n) over the snapshot's row table (the mapped open), plus
  ///   O(changes · dimension) for the replay (a replay into a mapped snapshot also copies
  ///   its rows, O(n · dimension)).
  static func openSnapshot(store: any MemoryStore, url: URL?, configuration: VectorIndex.Configuration) throws
    -> (index: VectorIndex, generation: Int64)?
  {
    guard let url, FileManager.default.fileExists(atPath: url.path) else { return nil }
    // A snapshot of int8 codes re-ranks with float32 rows read from the store.
    let rows = StoreFloatRowSource(store: StoreRole(store) { $0 })
    return try store.readTransaction { connection -> (VectorIndex, Int64)? in
      let (token, generation) = try snapshotToken(connection)
      if let token,
        let index = try? VectorIndex.open(
          snapshot: url, expectedToken: token, configuration: configuration, rowSource: rows)
      {
        return (index, generation)
      }
      guard let stamp = try connection.vectorSnapshotStamp(), stamp.generation <= generation,
        let changes = try connection.embeddingChanges(after: stamp.generation),
        let index = try? VectorIndex.open(
          snapshot: url, expectedToken: stamp.token, configuration: configuration, rowSource: rows)
      else { return nil }
      try replay(changes, above: stamp.maxEmbeddingID, into: index, connection: connection)
      return (index, generation)
    }
  }

  /// Applies to `index` the embeddings with an id above `maxEmbeddingID` and the rows
  /// `changes` names (current rows replace, owners without one are removed).
  static func replay(
    _ changes: EmbeddingChanges, above maxEmbeddingID: Int64, into index: VectorIndex,
    connection: any StoreSession
  ) throws {
    let dimension = index.dimension
    var ids: [Int64] = []
    var metadata: [VectorMetadata] = []
    var vectors: [Float] = []
    var present = Set<Int64>()
    let collect = { (entry: EmbeddingEntry, vector: UnsafeBufferPointer<Float>) in
      let key = VectorKey.make(entry.ownerKind, entry.ownerID)
      // Rows the index cannot hold stay out of it, as in a rebuild from the table.
      guard present.insert(key).inserted, Self.indexable(vector, dimension: dimension) else { return }
      ids.append(key)
      metadata.append(Self.vectorMetadata(entry))
      vectors.append(contentsOf: vector)
    }
    try connection.forEachEmbedding(ids: changes.embeddingIDs, owners: changes.owners, collect)
    try connection.forEachEmbedding(idAbove: maxEmbeddingID, collect)
    let gone = changes.owners.map { VectorKey.make($0.kind, $0.id) }.filter { !present.contains($0) }
    if !gone.isEmpty { index.remove(ids: gone) }
    if !ids.isEmpty { try index.upsert(ids: ids, metadata: metadata, vectors: vectors) }
  }

  /// Whether the index can hold `vector` (right length, finite, not all zero); `doctor`
  /// reports stored rows it cannot as absent.
  static func indexable(_ vector: UnsafeBufferPointer<Float>, dimension: Int) -> Bool {
    vector.count == dimension && vector.allSatisfy(\.isFinite) && vector.contains { $0 != 0 }
  }

  /// The index metadata of a stored embedding's owner.
  static func vectorMetadata(_ entry: EmbeddingEntry) -> VectorMetadata {
    VectorMetadata(
      kind: entry.ownerKind.code, session: entry.sessionID ?? 0,
      scope: ScopeKey.make(entry.scopeUser), timestamp: entry.time)
  }

  /// Brings the index up to date after another process changed the embeddings: from the
  /// snapshot file and the change log when they allow it, else from the table.
  func refresh() throws {
    guard
      let loaded = try Self.openSnapshot(
        store: store, url: snapshotURL, configuration: indexConfiguration)
    else { return try reload() }
    holder.withLock { $0 = loaded.index }
    state.withLock { state in
      state.generation = loaded.generation
      state.stale = false
      state.unsaved = loaded.index.changeCount > 0
      state.baselineChanges = 0
      state.fromSnapshot = true
    }
  }

  /// Records the stamp of the snapshot just written (so a later reader can replay what was
  /// added after it) and prunes the change log it covers. Best effort: without the stamp a
  /// reader still uses the file while its token is current.
  func recordSnapshot(token: UInt64, generation: Int64, maxEmbeddingID: Int64) {
    // Bookkeeping: when another process holds the write lock it is left to the next writer
    // (an engine closing never waits a busy timeout for it).
    try? store.writeTransactionWithoutWaiting { connection in
      try connection.recordVectorSnapshot(
        VectorSnapshotStamp(token: token, generation: generation, maxEmbeddingID: maxEmbeddingID))
    }
  }
}

extension StoreSession {
  /// The token a snapshot holding exactly the current embeddings carries (nil when the
  /// database keeps no trustworthy epoch).
  func currentSnapshotToken() throws -> UInt64? {
    try VectorIndexKeeper.snapshotToken(self).token
  }
}
