import EngramCore
import EngramVectors
import Foundation

extension VectorIndexKeeper {
  /// Searches the index after picking up other processes' writes.
  ///
  /// An index mapped from a snapshot checks the file's vectors before its first search
  /// (`VectorIndex.trustedSnapshot`); when they were damaged on disk, the index is rebuilt
  /// from the embeddings table and the search answered from it, never from the damaged
  /// rows (`foundDamagedSnapshot` then says so; a writer saves a sound file at close).
  /// - Throws: the store's errors, `EngramError.embedderChangedElsewhere`, the index's
  ///   errors for a bad query.
  func search(_ vector: [Float], k: Int, filter: VectorFilter?, exact: Bool) throws -> VectorSearchResult {
    try refreshIfStale()
    let current = try loaded()
    do {
      return try current.search(vector, k: k, filter: filter, exact: exact)
    } catch .snapshotCorrupt {
      try rebuildAfterDamage()
      return try index.search(vector, k: k, filter: filter, exact: exact)
    }
  }

  /// Whether this process found the snapshot's vectors damaged (and rebuilt its index from
  /// the embeddings table).
  var foundDamagedSnapshot: Bool { state.withLock { $0.damagedSnapshot } }

  /// Before saving a snapshot: an index whose mapped file turned out damaged is rebuilt
  /// from the table first, so its rows are never written again under a fresh checksum.
  func rebuildIfSnapshotDamaged() throws {
    do {
      try index.verifyMappedPayload()
    } catch {
      try rebuildAfterDamage()
    }
  }

  private func rebuildAfterDamage() throws {
    try reload()
    state.withLock { $0.damagedSnapshot = true }
  }
}
