/// Settings of the approximate tier (an inverted-file index over the same rows).
///
/// Above `threshold` live rows the index clusters its rows into lists of int8 codes and a
/// search probes only the lists nearest the query, then re-ranks its best candidates with
/// exact float32 dot products. `targetRecall` is met by calibration on the rows themselves
/// when the lists are built. Exact search stays available (`search(_:k:filter:exact:)`).
public struct ApproximateConfiguration: Sendable, Hashable {
  /// Whether the approximate tier is used at all. Default true.
  public var enabled: Bool
  /// Live rows at and above which searches use the approximate tier (and the write that
  /// reaches it starts the build). Default 50,000: below it the exact int8 scan already
  /// answers in about a millisecond (see the approximate-search figures in docs/benchmarks.md).
  public var threshold: Int
  /// Mean recall@10 the probe count is calibrated to reach on the indexed rows. Default 0.95.
  public var targetRecall: Double
  /// Inverted lists; 0 picks 2·√n when the lists are built. Default 0.
  public var lists: Int
  /// When the lists are built and re-clustered. Default `.background`.
  public var build: BuildPolicy
  /// Queries (rows of the index) used to calibrate the probe count. Default 128.
  public var calibrationQueries: Int
  /// Threads sharing the clustering's GEMM blocks while the lists are built (each on
  /// single-threaded BLAS; searches are not affected). Default 1: a background build then
  /// leaves the other cores to searches.
  public var buildThreads: Int

  /// Creates settings with documented defaults.
  public init(
    enabled: Bool = true, threshold: Int = 50_000, targetRecall: Double = 0.95, lists: Int = 0,
    build: BuildPolicy = .background, calibrationQueries: Int = 128, buildThreads: Int = 1
  ) {
    self.enabled = enabled
    self.threshold = threshold
    self.targetRecall = targetRecall
    self.lists = lists
    self.build = build
    self.calibrationQueries = calibrationQueries
    self.buildThreads = buildThreads
  }

  func validate() throws(VectorIndexError) {
    guard threshold >= 1 else {
      throw .invalidConfiguration(field: "approximate.threshold", value: threshold)
    }
    guard targetRecall > 0, targetRecall <= 1 else {
      throw .invalidConfiguration(
        field: "approximate.targetRecall", value: Int((targetRecall * 1000).rounded()))
    }
    guard lists >= 0, lists <= 1 << 20 else {
      throw .invalidConfiguration(field: "approximate.lists", value: lists)
    }
    guard calibrationQueries >= 1, calibrationQueries <= 100_000 else {
      throw .invalidConfiguration(field: "approximate.calibrationQueries", value: calibrationQueries)
    }
    guard buildThreads >= 1, buildThreads <= 256 else {
      throw .invalidConfiguration(field: "approximate.buildThreads", value: buildThreads)
    }
  }
}

/// When the approximate tier's lists are built (on reaching the threshold) and re-clustered
/// (when appends have drifted them: as many rows again as were clustered, so a bulk load
/// re-clusters at doubling sizes and pays about twice its final build in all).
public enum BuildPolicy: Sendable, Hashable {
  /// On a background queue: the write that triggers it returns at once, and searches use
  /// the exact scan or the previous lists until the new ones are published.
  case background
  /// Inside the write that triggers it (deterministic; that write takes seconds at 1M rows).
  case inline
  /// Only when `rebuildApproximateIndex()` is called.
  case manual
}

/// Which tier answered a search.
public enum VectorSearchTier: String, Sendable, Hashable {
  /// A scan of every admitted row (float32 or proven-exact int8).
  case exact
  /// The inverted lists nearest the query, re-ranked exactly.
  case approximate
}

/// Hits with what served them and whether they are proven to be the exact top-k.
public struct VectorSearchResult: Sendable, Hashable {
  /// Best first; fewer than `k` only when fewer rows match.
  public var hits: [VectorHit]
  /// The tier that answered.
  public var tier: VectorSearchTier
  /// True when the hits are the exact top-k: an exact scan, or an approximate search whose
  /// bound proves that no unprobed list and no candidate left out of the re-rank could enter.
  public var isExact: Bool

  /// Creates a result.
  public init(hits: [VectorHit], tier: VectorSearchTier, isExact: Bool) {
    self.hits = hits
    self.tier = tier
    self.isExact = isExact
  }
}

/// What the approximate tier looks like now (for `stats`).
public struct ApproximateIndexStatus: Sendable, Hashable {
  /// Whether searches of the current rows use it (live rows at or above the threshold).
  public var serving: Bool
  /// Inverted lists.
  public var lists: Int
  /// Lists a search probes (calibrated).
  public var probes: Int
  /// The target the probe count was calibrated to.
  public var targetRecall: Double
  /// The mean recall@10 measured at that probe count on the calibration queries.
  public var calibratedRecall: Double
  /// Live rows when the lists were clustered.
  public var clusteredRows: Int
  /// Rows appended to the lists since.
  public var appendedRows: Int
  /// Bytes held by the lists and centroids.
  public var bytes: Int
}
