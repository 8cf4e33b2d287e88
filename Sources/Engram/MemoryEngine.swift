import EngramCore
import EngramEmbeddings
import EngramStore
import EngramVectors
import Foundation

/// The one front door to a person's memory: one SQLite file, its vector index and its
/// embedder, kept in step.
///
/// A thin facade over parts with one job each, each built with only the collaborators it
/// uses: `HybridRetriever` (search, through the store's `CandidateSource`) and `Fusion`
/// (ranking), `Ingestor`, `Exporter` and `Importer`, `Compactor`, `Doctor` and `Reindexer`,
/// and `CalendarExchange` (reminders and events as iCalendar). The facade forwards; it
/// neither queries nor ranks.
///
/// Its public surface is grouped by topic: the central verbs stay on the engine (`search`,
/// `context(for:)`, `compact`, `doctor`, `close`); the rest is one async type per concern,
/// each running its own blocking work off the cooperative pool: `conversation` (sessions,
/// turns, ingest), `memories` (remember, update, read, forget), `userPreferences`,
/// `transfer` (export, import, iCalendar), `maintenance`, `agentRecords` and `reminders`.
///
/// Safe to share between tasks: writes are serialized by the store's single writer,
/// searches run concurrently on reader connections and on the lock-free index, and
/// blocking SQLite and BLAS work runs off the cooperative thread pool. SQLite is the source
/// of truth; the vector index is rebuilt from it whenever its snapshot file is missing or
/// stale (for example after a crash).
public final class MemoryEngine: Sendable {
  /// Where the memory lives: the database file, or the PostgreSQL URI without its password.
  public let path: String
  /// The configuration the engine was opened with.
  public let configuration: EngramConfiguration
  /// The embedder (its model id and dimension match the database's).
  public var embedder: any Embedder { configuration.embedder }
  /// The conversation log: sessions, turns and conversation files (see ``Conversation``).
  public let conversation: Conversation
  /// The memories: stored, replaced, read and forgotten (see ``Memories``).
  public let memories: Memories
  /// The user's key-value preferences (see ``UserPreferences``).
  public let userPreferences: UserPreferences
  /// The memory as files: the JSONL export and its import, and reminders and events as
  /// iCalendar (see ``Transfer``).
  public let transfer: Transfer
  /// The agent's own records: its agenda (reminders, events, notes), traces, pending calls,
  /// routines and skill state (see ``AgentRecords``).
  public let agentRecords: AgentRecords
  /// Reminder delivery, shared by chat, the web app, the CLI and MCP: each reminder claimed
  /// once, just before it is handed over.
  public let reminders: ReminderDelivery
  /// Housekeeping: rows per table, memories per kind, sizes, `meta` values, checkpoint.
  public let maintenance: Maintenance

  /// Whether the engine is open (shared by every part).
  let open: OpenState
  let store: any MemoryStore
  let vectors: VectorIndexKeeper
  let embedding: EmbeddingRunner
  let access: AccessRecorder
  let retriever: HybridRetriever
  let compactor: Compactor
  let doctor: Doctor

  /// The vector index as it is now (read from the embeddings table first when its load was
  /// deferred).
  var index: VectorIndex {
    get throws { try vectors.loaded() }
  }
  /// The most bytes the store's connections cache (SQLite's page caches; 0 for PostgreSQL).
  let pageCache: PageCacheEstimate

  /// An estimate of the memory this open engine holds: its vector index (rows, postings,
  /// approximate lists) and the most its database connections cache (at most the database's
  /// size). `UserEngines` keeps the sum of its engines' estimates within its budget.
  public var estimatedResidentBytes: Int { vectors.index.memoryBytes + pageCache.bytes }

  /// Where the vector index came from when the engine opened.
  public enum IndexSource: String, Sendable {
    /// A new database: nothing to load.
    case empty
    /// The snapshot file, validated against the database.
    case snapshot
    /// The embeddings table (no snapshot, or a stale or damaged one).
    case database
  }

  /// The snapshot file of the vector index, beside the database (this user's; nil when
  /// the store keeps no snapshot file).
  public var snapshotURL: URL? { vectors.snapshotURL }

  /// Opens (creating if needed) the memory at `path` (a SQLite file path, or a
  /// `postgresql://` / `postgres://` URI: see `init(location:configuration:)`).
  ///
  /// With `configuration.readOnly` the engine writes nothing at all, at open, search or
  /// close (no snapshot, no access statistics), and works on a file or folder the user
  /// cannot write.
  /// - Throws: `EngramError.modelMismatch` when the database holds vectors of another model
  ///   (run `reindex`), store errors for unreadable, corrupt, locked or future databases,
  ///   `StoreError.invalidLocation` / `.storeUnavailable` for a URI this build cannot open.
  public convenience init(path: String, configuration: EngramConfiguration) throws {
    try self.init(location: StoreLocation(parsing: path), configuration: configuration)
  }

  /// Opens (creating if needed) the memory at `location` for `configuration.user`.
  /// - Throws: as `init(path:configuration:)`.
  public init(location: StoreLocation, configuration: EngramConfiguration) throws {
    try configuration.validate()
    path = location.description
    var options = StoreFactory.Options()
    options.busyTimeout = configuration.busyTimeout
    options.readOnly = configuration.readOnly
    options.user = configuration.user
    options.readerCount = configuration.readerCount
    options.cacheSizeKiB = configuration.cacheSizeKiB
    options.connectionPool = configuration.connectionPool
    if case .sqlite(let file) = location {
      pageCache = PageCacheEstimate(
        connections: (configuration.readOnly ? 0 : 1) + configuration.readerCount,
        cacheBytes: configuration.cacheSizeKiB * 1024, files: [file, file + "-wal"])
    } else {
      pageCache = .none
    }
    let store = try StoreFactory.open(location, options: options)
    do {
      try Self.prepare(store, configuration: configuration)
    } catch {
      store.close()
      throw error
    }
    let vectors: VectorIndexKeeper
    do {
      vectors = try VectorIndexKeeper(
        store: store, snapshotURL: store.vectorSnapshotURL, modelID: configuration.embedder.modelID,
        dimension: configuration.embedder.dimension, threads: configuration.searchThreads,
        approximate: configuration.approximate, snapshotMinimumRows: configuration.snapshotMinimumRows)
    } catch {
      store.close()
      throw error
    }
    self.configuration = configuration
    self.store = store
    self.vectors = vectors
    let open = OpenState()
    let embedding = EmbeddingRunner(
      embedder: configuration.embedder, batchSize: configuration.embeddingBatchSize)
    let speakers = SpeakerDirectory(store: StoreRole(store) { $0 })
    let access = AccessRecorder(store: StoreRole(store) { $0 })
    let retriever = HybridRetriever(
      open: open, candidates: store.candidateSource, vectors: vectors, embedding: embedding,
      speakers: speakers, access: configuration.readOnly ? nil : access, weights: configuration.retrieval)
    let memories = Memories(
      open: open, store: store, vectors: vectors, embedding: embedding, speakers: speakers,
      retriever: retriever)
    let maintenance = Maintenance(
      open: open, store: store, vectors: vectors, embedder: configuration.embedder)
    self.open = open
    self.embedding = embedding
    self.access = access
    self.retriever = retriever
    self.memories = memories
    self.maintenance = maintenance
    conversation = Conversation(
      open: open, store: store, vectors: vectors, embedding: embedding, speakers: speakers,
      ingestor: Ingestor(
        open: open, store: store, vectors: vectors, embedding: embedding, speakers: speakers,
        memories: memories))
    userPreferences = UserPreferences(open: open, store: StoreRole(store) { $0 })
    let calendar = CalendarExchange(open: open, store: store)
    transfer = Transfer(
      exporter: Exporter(open: open, store: store),
      importer: Importer(
        open: open, location: path, embedder: configuration.embedder, vectors: vectors, speakers: speakers),
      calendar: calendar)
    compactor = Compactor(
      open: open, store: store, vectors: vectors, embedding: embedding, speakers: speakers,
      maintenance: maintenance, policy: configuration.compaction)
    doctor = Doctor(
      open: open, store: store, vectors: vectors, embedding: embedding, readOnly: configuration.readOnly)
    let reminders = ReminderDelivery(open: open, store: StoreRole(store) { $0 })
    agentRecords = AgentRecords(open: open, store: StoreRole(store) { $0 }, delivery: reminders)
    self.reminders = reminders
  }

  /// Opens the memory at `location` (see `init(location:configuration:)`): a SQLite path
  /// or a PostgreSQL URI, as `--db` takes it.
  public static func open(_ location: String, configuration: EngramConfiguration) throws -> MemoryEngine {
    try MemoryEngine(location: StoreLocation(parsing: location), configuration: configuration)
  }

  /// Checks the store's embedding model against the embedder (recording it in a new
  /// store), and draws an embedding epoch when the store keeps none.
  private static func prepare(_ store: any MemoryStore, configuration: EngramConfiguration) throws {
    let embedder = configuration.embedder
    let existing = try store.readTransaction { try $0.embeddingModel() }
    if let existing {
      guard existing.name == embedder.modelID, existing.dimension == embedder.dimension else {
        throw EngramError.modelMismatch(
          database: existing.name, databaseDimension: existing.dimension, configured: embedder.modelID,
          configuredDimension: embedder.dimension)
      }
    } else if !configuration.readOnly {
      try store.writeTransaction { session in
        try session.configureEmbeddingModel(
          model: embedder.modelID, dimension: embedder.dimension, replace: false)
        if try session.meta("database_id") == nil {
          try session.setMeta("database_id", UUID().uuidString)
        }
        if try session.meta("created_at") == nil {
          try session.setMeta("created_at", String(Timestamp.now()))
        }
      }
    }
    if !configuration.readOnly, try store.readTransaction({ try $0.embeddingState().epoch }) == nil {
      // Last changed by a writer that keeps no epoch (or new): draw one, so the snapshot
      // this engine writes can be told apart from a copy's.
      try store.writeTransaction { try $0.renewEmbeddingEpoch() }
    }
  }

  /// How the vector index was loaded when the engine opened.
  public var indexSource: IndexSource { vectors.source }

  /// Whether this memory should keep a vector snapshot and has no current one: the open
  /// read every vector from the database, as every open will until a writer saves one
  /// (`doctor(repair: true)` or any write). Read-only opens never do.
  public var isMissingSnapshot: Bool {
    vectors.snapshotURL != nil && vectors.source == .database
      && vectors.keepsSnapshot(rows: vectors.rowCount)
  }

  /// Whether a search found the vectors of this memory's snapshot file damaged: the index was
  /// then rebuilt from the embeddings table and answered from it (`doctor` reports the
  /// file; a writer, or `doctor(repair: true)`, saves a sound one).
  public var foundDamagedSnapshot: Bool { vectors.foundDamagedSnapshot }

  /// Waits for a background build of the approximate lists this process started (seconds at
  /// 100,000 rows, minutes at a million), writes pending access statistics and, when this
  /// process changed the vector index and it still matches the database, its snapshot and
  /// lists (so the next open is fast and serves approximately); then closes
  /// the database. A read-only engine writes nothing. None of it waits for another
  /// process's write lock: statistics and snapshot bookkeeping that cannot be written at
  /// once are skipped (the next writer records its own). Further calls fail with
  /// `EngramError.closed`.
  public func close() {
    guard !open.markClosed() else { return }
    // A build of the approximate lists started by this process's writes ends first: its
    // lists are then saved with the snapshot, and no BLAS thread outlives the engine.
    vectors.index.waitForApproximateBuild()
    if !configuration.readOnly {
      access.drain()
      try? access.write()
      try? vectors.writeSnapshot()
    }
    store.close()
  }

  /// ``close()`` for async callers: awaits a background build of the approximate lists
  /// suspended, then writes and closes on a ``BlockingWork`` thread, so no cooperative thread
  /// waits (the synchronous `close()` blocks its caller; it serves `defer` and `deinit`).
  public func close() async {
    await vectors.index.approximateBuildFinished()
    await BlockingWork.run { self.close() }
  }

  deinit {
    close()
  }

  /// - Throws: `EngramError.closed` once the engine is closed.
  func checkOpen() throws(EngramError) {
    try open.check()
  }

  /// Writes the vector index snapshot for the database's current generation.
  public func saveSnapshot() throws {
    try checkOpen()
    try vectors.writeSnapshot()
  }
}
