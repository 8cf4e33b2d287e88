import EngramCore
import EngramStore
import EngramVectors
import Foundation
import Synchronization

/// Keeps the vector index in step with the store: loads it (from its mapped snapshot when
/// that holds exactly the database's rows, else from the embeddings table), tracks the
/// embedding generation it reflects, reloads it when another process changed the
/// embeddings, and writes its snapshot only when this process changed it.
final class VectorIndexKeeper: Sendable {
  /// Where the vector index came from when the engine opened.
  typealias Source = MemoryEngine.IndexSource

  let store: any MemoryStore
  /// The embedder's model and dimension: another process's `reindex` to another model makes
  /// this index (and the engine's embedder) useless, which a search then says.
  let modelID: String
  let dimension: Int
  let threads: Int
  /// The approximate tier's settings.
  let approximate: ApproximateConfiguration
  /// The snapshot file beside the database (nil when the store keeps none).
  let snapshotURL: URL?
  /// Rows below which no snapshot file is kept (`EngramConfiguration.snapshotMinimumRows`).
  let snapshotMinimumRows: Int
  /// The index; replaced whole by import, reindex and reload. While the load is deferred
  /// (`State.deferred`) it is an empty index standing in for the rows of the table.
  let holder: Mutex<VectorIndex>
  /// Held while a deferred index is loaded, and by writes to the index (`add`, `remove`)
  /// while a load may be under way, so no write falls between the load's read and its use.
  let loading = Mutex<Void>(())
  /// The embedding generation the index reflects; another process's write makes it stale.
  let state = Mutex<State>(State(generation: 0, stale: false))
  /// How the index was loaded at open.
  let source: Source

  struct State: Sendable {
    var generation: Int64
    var stale: Bool
    /// Whether the index holds rows its snapshot file does not (loaded from the table).
    var unsaved = false
    /// `VectorIndex.changeCount` when the index was loaded: more means this process changed it.
    var baselineChanges: UInt64 = 0
    /// Whether the index's rows are those of the snapshot file (mapped at open; an open
    /// checks the row table, `doctor` every byte).
    var fromSnapshot = false
    /// Own writes between their start and the generation update after commit; while one
    /// is in flight a moved generation is ours, not another process's.
    var writesInFlight = 0
    /// The snapshot file's vectors were found damaged and the index rebuilt from the table.
    var damagedSnapshot = false
    /// The index has not been read from the embeddings table yet (there is no usable
    /// snapshot): it is, when a search or a check first needs it (`loaded()`), so an open
    /// and a keyword search read no vector.
    var deferred = false
    /// Rows of the table when the load was deferred (what `rowCount` says until it is loaded).
    var deferredRows = 0
    /// This process stored embeddings while the load was deferred (the snapshot is saved
    /// at close, as after any write).
    var changedWhileDeferred = false
    /// How many times the index was read from the embeddings table whole.
    var tableLoads = 0
  }

  /// Loads the index of `database` (dimension `dimension`).
  init(
    store: any MemoryStore, snapshotURL: URL?, modelID: String, dimension: Int, threads: Int,
    approximate: ApproximateConfiguration = ApproximateConfiguration(), snapshotMinimumRows: Int = 0
  ) throws {
    self.store = store
    self.modelID = modelID
    self.snapshotMinimumRows = snapshotMinimumRows
    self.dimension = dimension
    self.threads = threads
    self.approximate = approximate
    self.snapshotURL = snapshotURL
    let configuration = VectorIndex.Configuration(
      dimension: dimension, threads: threads, initialCapacity: Self.initialRows, approximate: approximate)
    // A usable snapshot is mapped now (cheap); the table is read when first needed.
    if let mapped = try Self.openSnapshot(store: store, url: snapshotURL, configuration: configuration) {
      holder = Mutex(mapped.index)
      source = .snapshot
      state.withLock {
        $0.generation = mapped.generation
        // A snapshot brought up to date at open counts as changed (its writer saves it).
        $0.baselineChanges = 0
        $0.fromSnapshot = true
      }
      return
    }
    let rows = try store.readTransaction { try $0.count(EmbeddingRow.self) }
    holder = Mutex(try VectorIndex(configuration: configuration, ids: [], metadata: [], vectors: []))
    source = rows == 0 ? .empty : .database
    state.withLock {
      $0.deferred = rows > 0
      $0.deferredRows = rows
      $0.baselineChanges = 0
    }
    if rows == 0 {
      let generation = try store.readTransaction { try $0.embeddingGeneration() }
      state.withLock { $0.generation = generation }
    }
  }

  /// The index with its rows: read from the embeddings table now when its load was deferred
  /// (the first vector search, a check or a repair), once.
  /// - Throws: the store's errors.
  /// - Complexity: O(rows · dimension) the first time when deferred, O(1) after.
  func loaded() throws -> VectorIndex {
    guard state.withLock({ $0.deferred }) else { return index }
    try loading.withLock { _ in
      guard state.withLock({ $0.deferred }) else { return }
      let (fresh, _, generation) = try Self.load(
        store: store, snapshot: nil, configuration: indexConfiguration)
      holder.withLock { $0 = fresh }
      state.withLock { state in
        state.deferred = false
        state.generation = generation
        state.stale = false
        state.unsaved = true
        state.baselineChanges = fresh.changeCount
        state.fromSnapshot = false
        state.tableLoads += 1
      }
    }
    return index
  }

  /// Whether the index's rows are not read yet (see `loaded()`).
  var isDeferred: Bool { state.withLock { $0.deferred } }

  /// How many times this keeper read the whole embeddings table into its index (a deferred
  /// load, a reload after another process's change or a damaged snapshot).
  var tableLoads: Int { state.withLock { $0.tableLoads } }

  /// The rows of the index, or of the table while its load is deferred.
  var rowCount: Int {
    if let rows = state.withLock({ $0.deferred ? $0.deferredRows : nil }) { return rows }
    return index.count
  }

  /// The configuration of every index this keeper loads.
  var indexConfiguration: VectorIndex.Configuration {
    VectorIndex.Configuration(
      dimension: dimension, threads: threads, initialCapacity: Self.initialRows, approximate: approximate)
  }

  /// The rows an index is made room for beyond those it loads: a loaded index holds its
  /// rows and no more (a server with many users' engines in its cache pays for rows, not
  /// for room), and grows when written to.
  static let initialRows = 16

  /// Whether an index of `rows` live rows keeps a snapshot file: at `snapshotMinimumRows`
  /// and above, and always once the approximate tier serves (its lists live beside the
  /// snapshot). Below, the open from the embeddings table costs about as little as the
  /// mapped open, and the file would store every vector a second time.
  func keepsSnapshot(rows: Int) -> Bool {
    rows >= snapshotMinimumRows || (approximate.enabled && rows >= approximate.threshold)
  }

  /// The current index (a value: later changes do not affect a search in progress).
  var index: VectorIndex { holder.withLock { $0 } }

  /// Whether the index's rows are those of the snapshot file it was mapped from.
  var isFromSnapshot: Bool { state.withLock { $0.fromSnapshot } }

  /// Replaces the index (import, reindex) and marks it as not yet saved.
  func replace(with index: VectorIndex, generation: Int64) {
    holder.withLock { $0 = index }
    state.withLock { state in
      // Own writes in flight keep counting: they update the generation after their commit.
      state = State(
        generation: generation, stale: false, unsaved: true, baselineChanges: index.changeCount,
        writesInFlight: state.writesInFlight, damagedSnapshot: state.damagedSnapshot,
        tableLoads: state.tableLoads)
    }
  }

  /// Marks the index stale: the next search reloads it from the embeddings table.
  func markStale() {
    state.withLock { $0.stale = true }
  }

  /// The token a snapshot must carry to be valid for this database's current vectors, and
  /// the generation it stands for; no token when the database keeps no trustworthy epoch
  /// (then no snapshot is valid).
  ///
  /// It hashes the database id, the embedding generation and the epoch redrawn at every
  /// change of the embeddings: equal tokens mean the same history, so exactly the same rows
  /// (a copy of the database that changed differently has another epoch).
  static func snapshotToken(_ connection: any StoreSession) throws -> (token: UInt64?, generation: Int64) {
    let (generation, epoch) = try connection.embeddingState()
    guard let epoch else { return (nil, generation) }
    let identity = try connection.meta("database_id") ?? ""
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in (identity + "|" + String(generation) + "|" + epoch).utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return (hash, generation)
  }

  /// Writes the snapshot when this process changed the index (or built it from the table)
  /// and the index reflects exactly the database's current embeddings: never a stale index
  /// stamped with a newer token (another process's writes make it stale), never a rewrite
  /// of an unchanged index.
  func writeSnapshot() throws {
    // An index never read has nothing to save, unless this process stored embeddings
    // (then it is read now, as an open before deferral did, and saved).
    if state.withLock({ $0.deferred && !$0.changedWhileDeferred }) { return }
    _ = try loaded()
    try rebuildIfSnapshotDamaged()
    let index = self.index
    let (token, generation, stored, maxID) = try store.readTransaction { connection in
      let (token, generation) = try Self.snapshotToken(connection)
      return (token, generation, try connection.count(EmbeddingRow.self), try connection.maxEmbeddingID())
    }
    guard let token, let snapshotURL else { return }
    let current = state.withLock { state in
      !state.stale && state.writesInFlight == 0 && state.generation == generation
        && (state.unsaved || index.changeCount != state.baselineChanges)
    }
    // Own writes update the index just after their commit: a count that disagrees means
    // one is still on its way in.
    guard current, index.count == stored else { return }
    guard keepsSnapshot(rows: index.count) else {
      // A small memory keeps no file: one left from when it was larger goes (the stamp
      // recorded below prunes the change log no snapshot needs any more).
      try VectorIndex.removeSnapshot(at: snapshotURL)
      recordSnapshot(token: token, generation: generation, maxEmbeddingID: maxID)
      state.withLock { state in
        state.fromSnapshot = false
        if state.generation == generation {
          state.unsaved = false
          state.baselineChanges = index.changeCount
        }
      }
      return
    }
    // Codes only: the float32 rows live in the store, which re-ranks read by id.
    try index.write(snapshotTo: snapshotURL, token: token, content: .codes)
    recordSnapshot(token: token, generation: generation, maxEmbeddingID: maxID)
    state.withLock { state in
      if state.generation == generation {
        state.unsaved = false
        state.baselineChanges = index.changeCount
      }
    }
  }

  /// Loads the index from its snapshot when one is given and valid, else from the
  /// embeddings table; also returns the embedding generation the index reflects.
  static func load(
    store: any MemoryStore, snapshot: URL?, configuration indexConfiguration: VectorIndex.Configuration
  )
    throws -> (VectorIndex, Source, Int64)
  {
    let dimension = indexConfiguration.dimension
    if let snapshot,
      let loaded = try openSnapshot(store: store, url: snapshot, configuration: indexConfiguration)
    {
      return (loaded.index, .snapshot, loaded.generation)
    }
    var ids: [Int64] = []
    var metadata: [VectorMetadata] = []
    var vectors: [Float] = []
    var loadedGeneration: Int64 = 0
    try store.readTransaction { connection in
      loadedGeneration = try connection.embeddingGeneration()
      let count = try connection.count(EmbeddingRow.self)
      ids.reserveCapacity(count)
      metadata.reserveCapacity(count)
      vectors.reserveCapacity(count * dimension)
      try connection.forEachEmbedding { entry, vector in
        // Rows the index cannot hold (wrong length, no direction) stay out of it, so the
        // memory still opens; `doctor` reports them as absent.
        guard indexable(vector, dimension: dimension) else { return }
        ids.append(VectorKey.make(entry.ownerKind, entry.ownerID))
        metadata.append(vectorMetadata(entry))
        vectors.append(contentsOf: vector)
      }
    }
    let index = try VectorIndex(
      configuration: indexConfiguration, ids: ids, metadata: metadata, vectors: vectors)
    return (index, ids.isEmpty ? .empty : .database, loadedGeneration)
  }

  /// Runs a write that may change embeddings, keeping track of the generation the index
  /// reflects: a generation moved by someone else (another process on the same file) marks
  /// the index stale, and the next search reloads it.
  func writeTracked<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T {
    state.withLock { $0.writesInFlight += 1 }
    var generations: (before: Int64, after: Int64)?
    defer {
      // Updated after the commit, so a reader never sees a generation newer than the state.
      state.withLock { state in
        state.writesInFlight -= 1
        if let generations {
          if generations.before != state.generation { state.stale = true }
          state.generation = generations.after
        }
      }
    }
    return try store.writeTransaction { connection in
      let before = try connection.embeddingGeneration()
      let value = try body(connection)
      generations = (before, try connection.embeddingGeneration())
      return value
    }
  }

  /// Reloads the index from the database when another process changed the embeddings (an
  /// index not read yet reads the current rows when it is).
  func refreshIfStale() throws {
    guard !isDeferred else { return }
    let (current, followed) = try newestGeneration()
    let needed = state.withLock { state in
      // A followed generation may lag this process's own writes (their notifications are on
      // their way): only a newer one is someone else's.
      let moved = followed ? current > state.generation : state.generation != current
      return state.stale || (state.writesInFlight == 0 && moved)
    }
    guard needed else { return }
    // Another process changed the embeddings: if it re-embedded the memory with another
    // model, neither this index nor this engine's embedder can search it any more.
    if let model = try store.readTransaction({ try $0.embeddingModel() }),
      model.name != modelID || model.dimension != dimension
    {
      throw EngramError.embedderChangedElsewhere(model: model.name, dimension: model.dimension)
    }
    try refresh()
  }

  /// Replaces the index with one loaded from the embeddings table.
  func reload() throws {
    let (fresh, _, generation) = try Self.load(
      store: store, snapshot: nil, configuration: indexConfiguration)
    replace(with: fresh, generation: generation)
    state.withLock { $0.tableLoads += 1 }
  }

  /// Adds stored embeddings to the index after their transaction committed (an index not
  /// read yet will read them from the table).
  func add(_ entries: [(kind: ItemKind, id: Int64, metadata: VectorMetadata, vector: [Float])]) throws {
    guard !entries.isEmpty else { return }
    try loading.withLock { _ in
      if state.withLock({ state in
        if state.deferred { state.changedWhileDeferred = true }
        return state.deferred
      }) {
        return
      }
      var flat: [Float] = []
      flat.reserveCapacity(entries.count * dimension)
      for entry in entries { flat.append(contentsOf: entry.vector) }
      try index.upsert(
        ids: entries.map { VectorKey.make($0.kind, $0.id) }, metadata: entries.map(\.metadata), vectors: flat)
    }
  }

  /// Removes rows from the index after their deletion committed (an index not read yet will
  /// not read them); returns how many it held.
  @discardableResult
  func remove(ids: [Int64]) -> Int {
    loading.withLock { _ in
      if state.withLock({ state in
        if state.deferred { state.changedWhileDeferred = true }
        return state.deferred
      }) {
        return 0
      }
      return index.remove(ids: ids)
    }
  }
}
