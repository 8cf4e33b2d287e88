import EngramEmbeddings
import EngramStore
import Foundation

/// How an engine weighs its retrievers. Defaults were chosen by measurement on the
/// LoCoMo dev split only (`engram-bench locomo --sweep`: the best hybrid hit@10 of a fixed
/// grid, vector 0.3-0.7, neighbour 0-0.4, speaker 0-0.3; 0.827, MRR@10 0.576).
public struct RetrievalWeights: Sendable, Equatable {
  /// Weight of the normalized cosine score in hybrid fusion (the rest goes to BM25).
  public var vectorWeight: Double
  /// How many candidates each retriever contributes before fusion.
  public var candidatesPerRetriever: Int
  /// Share of a neighbouring turn's fused score added to a turn (0 disables).
  public var neighbourWeight: Double
  /// Boost of turns spoken by the one known speaker a query names (0 disables).
  public var speakerWeight: Double
  /// Weight of recency in the final score (0 disables; off by default).
  public var recencyWeight: Double
  /// Half-life of the recency boost.
  public var recencyHalfLife: TimeInterval
  /// Weight of memory importance in the final score (0 disables).
  public var importanceWeight: Double
  /// The learned second stage of hybrid search (nil: the fused order is final).
  public var reranker: Reranker?
  /// How many of the best fused candidates the re-ranker re-orders.
  public var rerankDepth: Int

  public init(
    vectorWeight: Double = 0.4, candidatesPerRetriever: Int = 200, neighbourWeight: Double = 0.4,
    speakerWeight: Double = 0.3,
    recencyWeight: Double = 0, recencyHalfLife: TimeInterval = 30 * 86_400, importanceWeight: Double = 0,
    reranker: Reranker? = .trained, rerankDepth: Int = 30
  ) {
    self.reranker = reranker
    self.rerankDepth = rerankDepth
    self.vectorWeight = vectorWeight
    self.candidatesPerRetriever = candidatesPerRetriever
    self.neighbourWeight = neighbourWeight
    self.speakerWeight = speakerWeight
    self.recencyWeight = recencyWeight
    self.recencyHalfLife = recencyHalfLife
    self.importanceWeight = importanceWeight
  }
}

/// When and how compaction shrinks old conversation.
public struct CompactionPolicy: Sendable, Equatable {
  /// Turns older than this may be summarized and pruned.
  public var olderThan: TimeInterval
  /// Share of a session's turns kept verbatim (the most salient ones).
  public var keepFraction: Double
  /// Cosine at or above which two memories are merged as near-duplicates.
  public var duplicateThreshold: Float

  public init(
    olderThan: TimeInterval = 30 * 86_400, keepFraction: Double = 0.4, duplicateThreshold: Float = 0.97
  ) {
    self.olderThan = olderThan
    self.keepFraction = keepFraction
    self.duplicateThreshold = duplicateThreshold
  }
}

/// Everything an engine needs to open a memory. Validated once, at open.
public struct EngramConfiguration: Sendable {
  /// Turns text into vectors; its model id and dimension are recorded in the database.
  public var embedder: any Embedder
  /// Hybrid retrieval weights.
  public var retrieval: RetrievalWeights
  /// Compaction policy.
  public var compaction: CompactionPolicy
  /// Threads one vector search may use.
  public var searchThreads: Int
  /// How long a writer waits for another process's write lock.
  public var busyTimeout: Duration
  /// Texts per embedder call when the engine embeds several at once (appended turns,
  /// remembered notes, reindex, repair). Ingest hands the embedder each of its batches of 256
  /// turns in one call instead, so that the embedder's threads wait for each other once per
  /// batch.
  public var embeddingBatchSize: Int
  /// Open the database read-only (no writes, no migrations).
  public var readOnly: Bool
  /// The approximate vector tier: used above `threshold` rows, calibrated to `targetRecall`
  /// (a search can always ask for the exact scan).
  public var approximate: ApproximateConfiguration
  /// The user whose memory the engine opens: every read, search, write, export, forget
  /// and compaction sees and touches only this user's rows (`StoreUser.defaultID`,
  /// "default", when not set; the CLI's `--user` / `$ENGRAM_USER`). 1...128 ASCII letters,
  /// digits, `.`, `_`, `-` or `@` (docs/users.md).
  public var user: String = StoreUser.defaultID
  /// Indexed vectors below which no `.vectors` snapshot file is kept beside the database:
  /// the index is loaded from the embeddings table at open instead, and the file's second
  /// copy of every vector (about 1,600 bytes a turn with MiniLM) is not stored. A snapshot
  /// left from when the memory was larger is removed by the next snapshot write. Default
  /// 1,000: `engram-bench snapshot-open` (hashing 384 dims, release build, a shared 2-core
  /// AMD EPYC) measured the table load at 14-36 ms for 1,000 rows against 1-14 ms mapped,
  /// within the ~17 ms a mapped open of 1M rows costs, but 100-150 ms at 2,000-5,000 rows
  /// and 0.7 s at 20,000 (the mapped open stays about 2 ms). 0 always keeps a snapshot.
  /// While the approximate tier is enabled, a memory at or above `approximate.threshold`
  /// always keeps one (its lists are saved beside it).
  public var snapshotMinimumRows: Int = 1_000
  /// Reader connections the store keeps (besides its one writer). Default 2; a server
  /// holding many users' engines uses 1 (see `UserEngines`).
  public var readerCount: Int = 2
  /// SQLite's page cache per connection, in KiB. Default 16 MiB; a server holding many
  /// users' engines uses less (see `UserEngines`).
  public var cacheSizeKiB: Int = 16 * 1024
  /// For a PostgreSQL memory: a pool of connections shared with other engines (of other
  /// users) instead of 1 + `readerCount` connections of the engine's own
  /// (`PostgresConnectionPool` of the EngramPostgres product). Default none.
  public var connectionPool: (any StoreConnectionPool)?

  /// Creates a configuration; every default is documented on its property.
  public init(
    embedder: any Embedder, retrieval: RetrievalWeights = RetrievalWeights(),
    compaction: CompactionPolicy = CompactionPolicy(), searchThreads: Int = 1,
    busyTimeout: Duration = .seconds(5),
    embeddingBatchSize: Int = 32, readOnly: Bool = false,
    approximate: ApproximateConfiguration = ApproximateConfiguration()
  ) {
    self.approximate = approximate
    self.embedder = embedder
    self.retrieval = retrieval
    self.compaction = compaction
    self.searchThreads = searchThreads
    self.busyTimeout = busyTimeout
    self.embeddingBatchSize = embeddingBatchSize
    self.readOnly = readOnly
  }

  func validate() throws(EngramError) {
    guard embedder.dimension > 0 else {
      throw .invalidConfiguration(field: "embedder.dimension", reason: "must be positive")
    }
    guard (0...1).contains(retrieval.vectorWeight) else {
      throw .invalidConfiguration(field: "retrieval.vectorWeight", reason: "must lie in 0...1")
    }
    guard retrieval.candidatesPerRetriever >= 1 else {
      throw .invalidConfiguration(field: "retrieval.candidatesPerRetriever", reason: "must be at least 1")
    }
    for (field, value) in [
      ("neighbourWeight", retrieval.neighbourWeight), ("speakerWeight", retrieval.speakerWeight),
      ("recencyWeight", retrieval.recencyWeight), ("importanceWeight", retrieval.importanceWeight),
    ] where !(value >= 0 && value.isFinite) {
      throw .invalidConfiguration(field: "retrieval.\(field)", reason: "must be a finite number >= 0")
    }
    guard retrieval.recencyHalfLife > 0 else {
      throw .invalidConfiguration(field: "retrieval.recencyHalfLife", reason: "must be positive")
    }
    guard (0...1).contains(compaction.keepFraction) else {
      throw .invalidConfiguration(field: "compaction.keepFraction", reason: "must lie in 0...1")
    }
    guard compaction.duplicateThreshold > 0.5, compaction.duplicateThreshold <= 1 else {
      throw .invalidConfiguration(field: "compaction.duplicateThreshold", reason: "must lie in (0.5, 1]")
    }
    guard (1...256).contains(searchThreads) else {
      throw .invalidConfiguration(field: "searchThreads", reason: "must lie in 1...256")
    }
    guard (1...4096).contains(embeddingBatchSize) else {
      throw .invalidConfiguration(field: "embeddingBatchSize", reason: "must lie in 1...4096")
    }
    guard snapshotMinimumRows >= 0 else {
      throw .invalidConfiguration(field: "snapshotMinimumRows", reason: "must be 0 or more")
    }
    guard readerCount >= 1, cacheSizeKiB >= 256 else {
      throw .invalidConfiguration(
        field: readerCount >= 1 ? "cacheSizeKiB" : "readerCount",
        reason: readerCount >= 1 ? "must be at least 256" : "must be at least 1")
    }
    guard (try? StoreUser.validated(user)) != nil else {
      throw .invalidConfiguration(
        field: "user", reason: "must be 1...128 ASCII letters, digits, '.', '_', '-' or '@'")
    }
  }
}
