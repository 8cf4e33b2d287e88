import EngramEmbeddings
import EngramStore
import EngramVectors
import Foundation
import Synchronization

/// The one front door to a person's memory: one SQLite file, its vector index and its
/// embedder, kept in step.
///
/// Safe to share between tasks: writes are serialized by the store's single writer,
/// searches run concurrently on reader connections and on the lock-free index. SQLite is
/// the source of truth; the vector index is rebuilt from it whenever its snapshot file is
/// missing or stale (for example after a crash).
public final class MemoryEngine: Sendable {
  /// The database file.
  public let path: String
  /// The configuration the engine was opened with.
  public let configuration: EngramConfiguration
  /// The embedder (its model id and dimension match the database's).
  public var embedder: any Embedder { configuration.embedder }

  let database: Database
  /// The vector index; replaced whole by import and reindex.
  let indexHolder: Mutex<VectorIndex>
  var index: VectorIndex { indexHolder.withLock { $0 } }
  /// Known speaker names (lowercased -> as written), for query handling; nil when stale.
  let speakers = Mutex<[String: String]?>(nil)
  /// Turns stored with `embedNow: false` and not embedded yet, oldest first.
  let deferredTurns = Mutex<[Int64]>([])
  /// Recent query embeddings.
  let queryCache = QueryEmbeddingCache()
  /// The embedding generation the index reflects; another process's write makes it stale.
  let indexState = Mutex<IndexState>(IndexState(generation: 0, stale: false))

  struct IndexState: Sendable {
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
  }
  let state = Mutex<State>(State())
  /// Access statistics of searches not yet written (memory id -> count, last access).
  let pendingAccess = Mutex<PendingAccess>(PendingAccess())
  /// Writes access statistics off the read path (blocking SQLite work stays off the
  /// cooperative pool, and a search never waits for another process's write lock).
  let accessQueue: DispatchQueue = {
    let queue = DispatchQueue(label: "engram.access-statistics", qos: .utility)
    queue.setSpecific(key: MemoryEngine.accessQueueKey, value: ())
    return queue
  }()
  /// Marks the access-statistics queue, so a close that runs on it (the last reference
  /// released by a background write) does not wait for itself.
  static let accessQueueKey = DispatchSpecificKey<Void>()

  struct PendingAccess: Sendable {
    var entries: [Int64: (count: Int, last: Int64)] = [:]
    var flushScheduled = false
  }

  struct State: Sendable {
    var closed = false
    /// How the vector index was loaded at open.
    var indexSource: IndexSource = .empty
  }

  /// Where the vector index came from when the engine opened.
  public enum IndexSource: String, Sendable {
    /// A new database: nothing to load.
    case empty
    /// The snapshot file, validated against the database.
    case snapshot
    /// The embeddings table (no snapshot, or a stale or damaged one).
    case database
  }

  /// The snapshot file of the vector index, beside the database.
  public var snapshotURL: URL { URL(fileURLWithPath: path + ".vectors") }

  /// Opens (creating if needed) the memory at `path`.
  ///
  /// With `configuration.readOnly` the engine writes nothing at all, at open, search or
  /// close (no snapshot, no access statistics), and works on a file or folder the user
  /// cannot write.
  /// - Throws: `EngramError.modelMismatch` when the database holds vectors of another model
  ///   (run `reindex`), store errors for unreadable, corrupt, locked or future databases.
  public init(path: String, configuration: EngramConfiguration) throws {
    try configuration.validate()
    self.path = path
    self.configuration = configuration
    var storeConfiguration = Database.Configuration()
    storeConfiguration.busyTimeout = configuration.busyTimeout
    storeConfiguration.readOnly = configuration.readOnly
    database = try Database(path: path, configuration: storeConfiguration)
    let embedder = configuration.embedder
    let existing = try database.read { try $0.embeddingModel() }
    if let existing {
      guard existing.name == embedder.modelID, existing.dimension == embedder.dimension else {
        database.close()
        throw EngramError.modelMismatch(
          database: existing.name, databaseDimension: existing.dimension, configured: embedder.modelID,
          configuredDimension: embedder.dimension)
      }
    } else if !configuration.readOnly {
      try database.write { connection in
        try connection.configureEmbeddingModel(model: embedder.modelID, dimension: embedder.dimension)
        if try connection.meta("database_id") == nil {
          try connection.setMeta("database_id", UUID().uuidString)
        }
        if try connection.meta("created_at") == nil {
          try connection.setMeta("created_at", String(Timestamp.now()))
        }
      }
    }
    if !configuration.readOnly, try database.read({ try $0.embeddingState().epoch }) == nil {
      // Last changed by a writer that keeps no epoch (or new): draw one, so the snapshot
      // this engine writes can be told apart from a copy's.
      try database.write { try $0.renewEmbeddingEpoch() }
    }
    let (index, source, generation) = try Self.loadIndex(
      database: database, snapshot: URL(fileURLWithPath: path + ".vectors"),
      dimension: embedder.dimension, threads: configuration.searchThreads)
    indexHolder = Mutex(index)
    indexState.withLock {
      $0.generation = generation
      $0.unsaved = source == .database
      // A snapshot brought up to date at open counts as changed (its writer saves it).
      $0.baselineChanges = source == .snapshot ? 0 : index.changeCount
      $0.fromSnapshot = source == .snapshot
    }
    state.withLock { $0.indexSource = source }
  }

  /// How the vector index was loaded when the engine opened.
  public var indexSource: IndexSource { state.withLock { $0.indexSource } }

  /// Writes pending access statistics and, when this process changed the vector index and
  /// it still matches the database, its snapshot (so the next open is fast); then closes
  /// the database. A read-only engine writes nothing. Further calls fail with
  /// `EngramError.closed`.
  public func close() {
    let wasClosed = state.withLock { state in
      defer { state.closed = true }
      return state.closed
    }
    guard !wasClosed else { return }
    if !configuration.readOnly {
      if DispatchQueue.getSpecific(key: Self.accessQueueKey) == nil { accessQueue.sync {} }
      try? writePendingAccess()
      try? writeSnapshot()
    }
    database.close()
  }

  deinit {
    close()
  }

  func checkOpen() throws(EngramError) {
    if state.withLock({ $0.closed }) { throw .closed }
  }

  // MARK: - The vector index

  /// The token a snapshot must carry to be valid for this database's current vectors, and
  /// the generation it stands for; no token when the database keeps no trustworthy epoch
  /// (then no snapshot is valid).
  ///
  /// It hashes the database id, the embedding generation and the epoch redrawn at every
  /// change of the embeddings: equal tokens mean the same history, so exactly the same rows
  /// (a copy of the database that changed differently has another epoch).
  static func snapshotToken(_ connection: Connection) throws -> (token: UInt64?, generation: Int64) {
    let (generation, epoch) = try connection.embeddingState()
    guard let epoch else { return (nil, generation) }
    let identity = try connection.meta("database_id") ?? ""
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in (identity + "|" + String(generation) + "|" + epoch).utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return (hash, generation)
  }

  /// Writes the vector index snapshot for the database's current generation.
  public func saveSnapshot() throws {
    try checkOpen()
    try writeSnapshot()
  }

  /// Writes the snapshot when this process changed the index (or built it from the table)
  /// and the index reflects exactly the database's current embeddings: never a stale index
  /// stamped with a newer token (another process's writes make it stale), never a rewrite
  /// of an unchanged index.
  func writeSnapshot() throws {
    let index = self.index
    let (token, generation, stored, maxID) = try database.read { connection in
      let (token, generation) = try Self.snapshotToken(connection)
      return (token, generation, try connection.count(EmbeddingRow.self), try connection.maxEmbeddingID())
    }
    guard let token else { return }
    let current = indexState.withLock { state in
      !state.stale && state.writesInFlight == 0 && state.generation == generation
        && (state.unsaved || index.changeCount != state.baselineChanges)
    }
    // Own writes update the index just after their commit: a count that disagrees means
    // one is still on its way in.
    guard current, index.count == stored else { return }
    try index.write(snapshotTo: snapshotURL, token: token)
    recordSnapshot(token: token, generation: generation, maxEmbeddingID: maxID)
    indexState.withLock { state in
      if state.generation == generation {
        state.unsaved = false
        state.baselineChanges = index.changeCount
      }
    }
  }

  /// Loads the index from its snapshot when one is given and valid, else from the embeddings table;
  /// also returns the embedding generation the index reflects.
  static func loadIndex(database: Database, snapshot: URL?, dimension: Int, threads: Int) throws -> (
    VectorIndex, IndexSource, Int64
  ) {
    let indexConfiguration = VectorIndex.Configuration(dimension: dimension, threads: threads)
    if let snapshot,
      let loaded = try openSnapshot(database: database, url: snapshot, configuration: indexConfiguration)
    {
      return (loaded.index, .snapshot, loaded.generation)
    }
    var ids: [Int64] = []
    var metadata: [VectorMetadata] = []
    var vectors: [Float] = []
    var loadedGeneration: Int64 = 0
    try database.read { connection in
      loadedGeneration = try connection.embeddingGeneration()
      let count = try connection.count(EmbeddingRow.self)
      ids.reserveCapacity(count)
      metadata.reserveCapacity(count)
      vectors.reserveCapacity(count * dimension)
      try connection.forEachEmbedding { entry, vector in
        // Rows the index cannot hold (wrong length, no direction) stay out of it, so the
        // memory still opens; `doctor` reports them as absent.
        guard indexable(vector, dimension: dimension) else { return }
        ids.append(VectorKey.make(entry.ownerKind.itemKind, entry.ownerID))
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
  func writeTracked<T: Sendable>(_ body: (Connection) throws -> T) throws -> T {
    indexState.withLock { $0.writesInFlight += 1 }
    var generations: (before: Int64, after: Int64)?
    defer {
      // Updated after the commit, so a reader never sees a generation newer than the state.
      indexState.withLock { state in
        state.writesInFlight -= 1
        if let generations {
          if generations.before != state.generation { state.stale = true }
          state.generation = generations.after
        }
      }
    }
    return try database.write { connection in
      let before = try connection.embeddingGeneration()
      let value = try body(connection)
      generations = (before, try connection.embeddingGeneration())
      return value
    }
  }

  /// Reloads the index from the database when another process changed the embeddings.
  func refreshIndexIfStale() throws {
    let current = try database.read { try $0.embeddingGeneration() }
    let needed = indexState.withLock { state in
      state.stale || (state.generation != current && state.writesInFlight == 0)
    }
    guard needed else { return }
    try refreshIndex()
  }

  /// Replaces the index with one loaded from the embeddings table.
  func reloadIndex() throws {
    let (fresh, _, generation) = try Self.loadIndex(
      database: database, snapshot: nil, dimension: embedder.dimension,
      threads: configuration.searchThreads)
    indexHolder.withLock { $0 = fresh }
    indexState.withLock {
      $0 = IndexState(generation: generation, stale: false, unsaved: true, baselineChanges: fresh.changeCount)
    }
  }

  // MARK: - Embedding

  /// Embeds texts in batches, checking the embedder's contract and cancellation between batches.
  func embed(_ texts: [String], progress: ((Int) -> Void)? = nil) async throws -> [[Float]] {
    var vectors: [[Float]] = []
    vectors.reserveCapacity(texts.count)
    let batch = configuration.embeddingBatchSize
    var start = 0
    while start < texts.count {
      if Task.isCancelled { throw EngramError.cancelled }
      let end = min(start + batch, texts.count)
      let part = try await embedder.embed(Array(texts[start..<end]))
      guard part.count == end - start else {
        throw EngramError.embedderContract(expected: end - start, actual: part.count)
      }
      try Self.checkEmbeddings(part, dimension: embedder.dimension, offset: start)
      vectors.append(contentsOf: part)
      start = end
      progress?(start)
    }
    return vectors
  }

  /// Refuses a batch with a vector of the wrong length, with NaN or infinity, or all zero:
  /// the store would keep such a vector but the index cannot hold it, and a later open
  /// would fail to rebuild the index from the store.
  static func checkEmbeddings(_ vectors: [[Float]], dimension: Int, offset: Int) throws(EngramError) {
    for (position, vector) in vectors.enumerated() {
      guard vector.count == dimension else {
        throw .embedderContract(expected: dimension, actual: vector.count)
      }
      var squares: Float = 0
      for value in vector {
        guard value.isFinite else { throw .invalidEmbedding(index: offset + position, reason: .nonFinite) }
        squares += value * value
      }
      guard squares > 0, squares.isFinite else {
        throw .invalidEmbedding(index: offset + position, reason: squares > 0 ? .nonFinite : .zero)
      }
    }
  }

  /// Adds stored embeddings to the index after their transaction committed.
  func indexVectors(_ entries: [(kind: ItemKind, id: Int64, metadata: VectorMetadata, vector: [Float])])
    throws
  {
    guard !entries.isEmpty else { return }
    var flat: [Float] = []
    flat.reserveCapacity(entries.count * embedder.dimension)
    for entry in entries { flat.append(contentsOf: entry.vector) }
    try index.upsert(
      ids: entries.map { VectorKey.make($0.kind, $0.id) }, metadata: entries.map(\.metadata), vectors: flat)
  }
}

/// Vector-index ids: an owner's id and kind packed into one Int64 (`id << 2 | kind`).
enum VectorKey {
  static func make(_ kind: ItemKind, _ id: Int64) -> Int64 {
    id << 2 | Int64(kind.code)
  }

  static func split(_ key: Int64) -> (kind: ItemKind, id: Int64) {
    let kind: ItemKind
    switch key & 3 {
    case 0: kind = .message
    case 1: kind = .memory
    default: kind = .summary
    }
    return (kind, key >> 2)
  }
}

/// Scope ids for the vector index: a stable 63-bit hash of the user scope (0 when none).
enum ScopeKey {
  static func make(_ scope: String?) -> Int64 {
    guard let scope, !scope.isEmpty else { return 0 }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in scope.utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return Int64(bitPattern: hash >> 1) | 1
  }
}

extension ItemKind {
  var code: Int {
    switch self {
    case .message: return 0
    case .memory: return 1
    case .summary: return 2
    }
  }

  var ownerKind: OwnerKind {
    switch self {
    case .message: return .message
    case .memory: return .memory
    case .summary: return .summary
    }
  }

  var vectorKind: VectorKind {
    switch self {
    case .message: return .message
    case .memory: return .memory
    case .summary: return .summary
    }
  }
}

extension OwnerKind {
  var itemKind: ItemKind {
    switch self {
    case .message: return .message
    case .memory: return .memory
    case .summary: return .summary
    }
  }
}
