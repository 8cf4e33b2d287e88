import EngramCore
import EngramEmbeddings
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

/// The memory's housekeeping: what it holds (rows per table, memories per kind, the vector
/// index's size), how large the store is, its `meta` values (the embedder spec among them),
/// whether its embedder is still this engine's, and the WAL checkpoint (`engine.maintenance`).
///
/// Every method that reads or writes the store is async and runs that work off the
/// cooperative thread pool.
public struct Maintenance: Sendable {
  let open: OpenState
  let store: any MemoryStore
  /// The vector index, for its statistics.
  let vectors: VectorIndexKeeper
  /// The engine's embedder, compared with the store's model.
  let embedder: any Embedder

  /// Rows per table.
  public func tableCounts() async throws -> [String: Int] {
    try await store.readOffPool(open) { try $0.rowCounts() }
  }

  /// The store's size: for SQLite the file and its WAL on disk.
  public func databaseBytes() -> Int {
    store.storageBytes()
  }

  /// Moves the WAL's pages into the database file and truncates the WAL.
  /// - Throws: `StoreError.unsupported` on a store without a WAL of its own (PostgreSQL).
  public func checkpoint() async throws {
    try open.check()
    try await BlockingWork.run { [store] in try store.maintain(.checkpoint) }
  }

  /// A value of the `meta` table (`last_compaction`, `created_at`, ...), or nil.
  public func metaValue(_ key: String) async throws -> String? {
    try await store.readOffPool(open) { try $0.meta(key) }
  }

  /// How many memories of each kind are stored (superseded ones included); kinds with
  /// none are absent.
  public func memoryCountsByKind() async throws -> [MemoryKind: Int] {
    try await store.readOffPool(open) { try $0.memoryCountsByKind() }
  }

  /// Turns and memories created per week (weeks from Monday 00:00 UTC), oldest first.
  public func weeklyActivity() async throws -> [WeeklyActivity] {
    try await store.readOffPool(open) { try $0.weeklyActivity() }
  }

  /// Rows and bytes of the in-memory vector index.
  public var vectorIndexStatistics: VectorIndexStatistics {
    // An index not read yet (no snapshot, no vector search so far) is not read for this:
    // its rows are the table's.
    let index = vectors.index
    return VectorIndexStatistics(
      rows: vectors.rowCount, tombstones: index.tombstoneCount, bytes: index.memoryBytes,
      approximate: index.approximateStatus)
  }

  /// Records how this database's embedder is built (`meta.embedder_spec`).
  /// - Throws: `EngramError.emptyText` for a blank spec; store errors.
  public func setEmbedderSpec(_ spec: String) async throws {
    guard !TextChecks.isBlank(spec) else { throw EngramError.emptyText }
    try await store.writeOffPool(open) { try $0.setMeta(EmbedderSpec.metaKey, spec) }
  }

  /// Checks that the memory is still embedded with this engine's model.
  /// - Throws: `EngramError.embedderChangedElsewhere` when another process re-embedded it
  ///   with another model since this engine opened (it can no longer search or count its
  ///   vectors: restart it).
  public func checkEmbedderCurrent() async throws {
    let (name, dimension) = (embedder.modelID, embedder.dimension)
    if let model = try await store.readOffPool(open, { try $0.embeddingModel() }),
      model.name != name || model.dimension != dimension
    {
      throw EngramError.embedderChangedElsewhere(model: model.name, dimension: model.dimension)
    }
  }

  /// Runs a maintenance step when the store has it (a shared server keeps its own).
  func maintainIfSupported(_ operation: StoreMaintenance) throws {
    guard store.capabilities.contains(operation.capability) else { return }
    try store.maintain(operation)
  }
}
