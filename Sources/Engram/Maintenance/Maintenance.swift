import EngramStore
import Foundation

/// Sizes of the in-memory vector index.
public struct VectorIndexStatistics: Sendable, Equatable {
  /// Live rows (tombstones excluded).
  public var rows: Int
  /// Rows deleted but not yet reclaimed.
  public var tombstones: Int
  /// Bytes the index holds in memory.
  public var bytes: Int
  /// The approximate tier, when it has been built: whether it serves searches, its lists,
  /// probes and calibrated recall.
  public var approximate: ApproximateIndexStatus?
}

extension MemoryEngine {
  /// A value of the `meta` table (`last_compaction`, `created_at`, ...), or nil.
  public func metaValue(_ key: String) throws -> String? {
    try checkOpen()
    return try store.readTransaction { try $0.meta(key) }
  }

  /// How many memories of each kind are stored (superseded ones included); kinds with
  /// none are absent.
  public func memoryCountsByKind() throws -> [MemoryKind: Int] {
    try checkOpen()
    return try store.readTransaction { try $0.memoryCountsByKind() }
  }

  /// Rows and bytes of the in-memory vector index.
  public var vectorIndexStatistics: VectorIndexStatistics {
    let index = self.index
    return VectorIndexStatistics(
      rows: index.count, tombstones: index.tombstoneCount, bytes: index.memoryBytes,
      approximate: index.approximateStatus)
  }
}
