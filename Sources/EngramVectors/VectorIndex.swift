import CEngramKernels
import Dispatch
import Synchronization

// BLAS: Accelerate on Apple platforms (untested: this project builds and tests on Linux only),
// OpenBLAS elsewhere.
#if canImport(Accelerate)
  import Accelerate
#else
  import CBLAS
#endif

/// How rows are scored in an unfiltered search.
public enum VectorPrecision: String, Sendable, Hashable {
  /// Exact float32 dot products over every live row.
  case float32
  /// int8 codes (one scale per row) rank candidates, then float32 re-ranks them exactly.
  /// The result is the same exact top-k as `.float32` (a quantization error bound proves it
  /// per query, with a second int8 pass when it cannot), for a scan of 4x fewer bytes and
  /// 1.25x the memory.
  case int8
}

/// An in-memory cosine top-k index over unit-normalized float32 rows keyed by `Int64` ids.
///
/// Searches run concurrently with each other and with writes: a search copies the current
/// `IndexVersion` under a short lock and reads it lock-free; writers are serialized among
/// themselves, build the next version outside that lock and publish it in O(1).
public final class VectorIndex: Sendable {
  /// Settings fixed when the index is created.
  public struct Configuration: Sendable, Hashable {
    /// Components per vector.
    public var dimension: Int
    /// Scoring precision of unfiltered single-query searches. Default `.float32`.
    public var precision: VectorPrecision
    /// Threads one search may use (the scan is split in contiguous row ranges). Default 1.
    public var threads: Int
    /// int8 mode re-ranks `k * rerankFactor` candidates (at least `k + 32`) exactly. Default 10.
    public var rerankFactor: Int
    /// Rows preallocated up front. Default 1024.
    public var initialCapacity: Int
    /// The approximate tier used above a size threshold (see `ApproximateConfiguration`).
    public var approximate: ApproximateConfiguration

    /// Creates a configuration with documented defaults.
    public init(
      dimension: Int, precision: VectorPrecision = .float32, threads: Int = 1, rerankFactor: Int = 10,
      initialCapacity: Int = 1024, approximate: ApproximateConfiguration = ApproximateConfiguration()
    ) {
      self.dimension = dimension
      self.precision = precision
      self.threads = threads
      self.rerankFactor = rerankFactor
      self.initialCapacity = initialCapacity
      self.approximate = approximate
    }

    func validate() throws(VectorIndexError) {
      guard dimension > 0, dimension <= 65_536 else { throw .invalidDimension(dimension) }
      guard threads >= 1, threads <= 256 else {
        throw .invalidConfiguration(field: "threads", value: threads)
      }
      guard rerankFactor >= 1, rerankFactor <= 10_000 else {
        throw .invalidConfiguration(field: "rerankFactor", value: rerankFactor)
      }
      guard initialCapacity >= 0, initialCapacity < Int(Int32.max) else {
        throw .invalidConfiguration(field: "initialCapacity", value: initialCapacity)
      }
      try approximate.validate()
    }
  }

  /// The settings this index was created with.
  public let configuration: Configuration
  /// Components per vector.
  public var dimension: Int { configuration.dimension }
  /// Where float32 rows the index does not hold are read (an index opened from a snapshot
  /// of int8 codes); nil for an index that holds all its rows.
  let rowSource: (any FloatRowSource)?
  /// For an index opened from a snapshot file: the check of the file's payload, made before
  /// the first read that trusts it (see `trustedSnapshot()`).
  let payloadCheck: SnapshotPayloadCheck?

  let current: Mutex<IndexVersion>
  /// Serializes writers; the value counts published versions.
  let writer = Mutex<UInt64>(0)
  /// Set while a background build of the approximate tier runs.
  let approximateBuilding = Atomic<Bool>(false)
  /// Entered while a background build runs (see `waitForApproximateBuild()`).
  let approximateWork = DispatchGroup()

  /// Creates an empty index.
  /// - Throws: `VectorIndexError.invalidDimension` / `.invalidConfiguration`.
  public init(configuration: Configuration) throws(VectorIndexError) {
    try configuration.validate()
    self.configuration = configuration
    rowSource = nil
    payloadCheck = nil
    let rows = RowStore(
      dimension: configuration.dimension, capacity: configuration.initialCapacity,
      quantized: configuration.precision == .int8)
    current = Mutex(IndexVersion(rows: rows))
  }

  /// Creates an index from contiguous rows in one validated, all-or-nothing step.
  ///
  /// - Parameters:
  ///   - ids: one unique id per row.
  ///   - metadata: one entry per row.
  ///   - vectors: `ids.count * dimension` floats, row-major; normalized on the way in.
  /// - Throws: any `add(ids:metadata:vectors:)` error.
  /// - Complexity: O(n · dimension).
  public convenience init(
    configuration: Configuration, ids: [Int64], metadata: [VectorMetadata], vectors: [Float]
  ) throws(VectorIndexError) {
    var configuration = configuration
    configuration.initialCapacity = max(configuration.initialCapacity, ids.count)
    try self.init(configuration: configuration)
    try add(ids: ids, metadata: metadata, vectors: vectors)
  }

  init(
    configuration: Configuration, version: IndexVersion, rowSource: (any FloatRowSource)? = nil,
    payloadCheck: SnapshotPayloadCheck? = nil
  ) {
    self.configuration = configuration
    self.rowSource = rowSource
    self.payloadCheck = payloadCheck
    current = Mutex(version)
  }

  /// The capacity a full row store of `capacity` rows grows to: small stores by an eighth
  /// (a server keeps many users' indexes, each near its row count, within its cache), large
  /// ones double (their appends come in large batches; fewer copies).
  static func grownCapacity(_ capacity: Int) -> Int {
    capacity < 1 << 16 ? capacity + capacity / 8 + 16 : capacity * 2
  }

  /// The current version, once the payload of the snapshot this index was opened from (if
  /// any) is known to be the one its writer wrote: what every read of rows uses.
  /// - Throws: `.snapshotCorrupt` when the file's vectors or codes were damaged.
  func trustedSnapshot() throws(VectorIndexError) -> IndexVersion {
    try payloadCheck?.verify()
    return snapshot()
  }

  /// Checks now what the first search would (the payload of the snapshot file this index was
  /// opened from); nothing for an index that holds no mapped file. A server may call it
  /// right after an open, so its first query does not pay for the check.
  /// - Throws: `.snapshotCorrupt` when the file's vectors or codes were damaged.
  public func verifyMappedPayload() throws(VectorIndexError) {
    try payloadCheck?.verify()
  }

  /// The version searches read now.
  func snapshot() -> IndexVersion {
    current.withLock { $0 }
  }

  /// Runs `body` on a private copy of the current version and publishes the result.
  func write<R: Sendable>(_ body: (inout IndexVersion) throws(VectorIndexError) -> R) throws(VectorIndexError)
    -> R
  {
    let result: Result<R, VectorIndexError> = writer.withLock { generation in
      var version = current.withLock { $0 }
      do throws(VectorIndexError) {
        let value = try body(&version)
        let published = version
        current.withLock { $0 = published }
        generation += 1
        return .success(value)
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }

  // MARK: - Inspection

  /// Live (not removed) rows.
  public var count: Int { snapshot().live }

  /// How many writes have changed the index since it was created or opened (a caller can
  /// tell whether its index changed since it last saved it).
  public var changeCount: UInt64 { writer.withLock { $0 } }

  /// Tombstoned rows that `compact()` would reclaim.
  public var tombstoneCount: Int {
    let version = snapshot()
    return version.count - version.live
  }

  /// Approximate bytes held by rows, codes, posting lists and the id map.
  public var memoryBytes: Int { snapshot().memoryBytes }

  /// Whether `id` is present and not removed.
  public func contains(_ id: Int64) -> Bool {
    snapshot().row(of: id) != nil
  }

  /// The stored unit vector and metadata of `id`, or nil (also when the index reads the
  /// row from its `FloatRowSource` and the source does not give it, or when the payload of
  /// the snapshot file it came from is damaged).
  public func entry(for id: Int64) -> (vector: [Float], metadata: VectorMetadata)? {
    // Nil too when the snapshot file's vectors are damaged (`trustedSnapshot()`).
    guard let version = try? trustedSnapshot() else { return nil }
    guard let row32 = version.row(of: id) else { return nil }
    let row = Int(row32)
    let vector: [Float]
    if version.rows.holdsFloats(row) {
      vector = Array(UnsafeBufferPointer(start: version.rows.vector(row), count: dimension))
    } else {
      guard let (found, unit) = try? fetchUnitRows(version, rows: [row32]), found.count == 1 else {
        return nil
      }
      vector = unit
    }
    return (vector, version.metadata(row))
  }

  /// The metadata of `id`, or nil when absent (never reads a row from the source).
  public func metadata(for id: Int64) -> VectorMetadata? {
    let version = snapshot()
    return version.row(of: id).map { version.metadata(Int($0)) }
  }

  /// The vector of `id` as the index holds it, without asking its `FloatRowSource`: the unit
  /// float32 row, or for a row the index reads from its source, its int8 codes times their
  /// scale (within `codeErrorBound` of the unit row). For checks such as `doctor`'s.
  public func heldVector(for id: Int64) -> [Float]? {
    let version = snapshot()
    guard let row32 = version.row(of: id) else { return nil }
    let row = Int(row32)
    let rows = version.rows
    if rows.holdsFloats(row) {
      return Array(UnsafeBufferPointer(start: rows.vector(row), count: dimension))
    }
    let codes = rows.codes + row * dimension
    return (0..<dimension).map { Float(codes[$0]) * rows.scales[row] }
  }

  /// Whether the index reads some float32 rows from its `FloatRowSource` (it was opened from
  /// a snapshot of int8 codes) rather than holding them.
  public var readsFloatRowsFromSource: Bool { snapshot().rows.floatless > 0 }

  // MARK: - Writes

  /// Adds one vector.
  /// - Throws: `.duplicateID` if `id` is present; bad-vector errors. The index is unchanged on error.
  public func add(id: Int64, vector: [Float], metadata: VectorMetadata) throws(VectorIndexError) {
    try add(ids: [id], metadata: [metadata], vectors: vector)
  }

  /// Adds a batch of rows, all or nothing.
  ///
  /// - Parameters:
  ///   - ids: unique ids, none already present.
  ///   - metadata: one entry per id.
  ///   - vectors: `ids.count * dimension` floats, row-major.
  /// - Throws: `.batchShapeMismatch`, `.dimensionMismatch` (single row), `.duplicateID`,
  ///   `.nonFiniteComponent`, `.zeroVector`, `.capacityExceeded`.
  /// - Complexity: O(n · dimension), plus a copy of the rows when capacity grows.
  public func add(ids: [Int64], metadata: [VectorMetadata], vectors: [Float]) throws(VectorIndexError) {
    try insert(ids: ids, metadata: metadata, vectors: vectors, replacing: false)
  }

  /// Adds or replaces one vector.
  public func upsert(id: Int64, vector: [Float], metadata: VectorMetadata) throws(VectorIndexError) {
    try upsert(ids: [id], metadata: [metadata], vectors: vector)
  }

  /// Adds or replaces a batch of rows, all or nothing; a replaced row is tombstoned.
  /// - Throws: as `add(ids:metadata:vectors:)`, except that present ids are replaced.
  public func upsert(ids: [Int64], metadata: [VectorMetadata], vectors: [Float]) throws(VectorIndexError) {
    try insert(ids: ids, metadata: metadata, vectors: vectors, replacing: true)
  }

  /// Removes ids (absent ids are ignored) and returns how many were removed.
  /// - Complexity: O(m) plus a copy of the tombstone bits (N/64 words) per call.
  @discardableResult
  public func remove(ids: [Int64]) -> Int {
    (try? write { version throws(VectorIndexError) -> Int in
      var removed = 0
      for id in ids where version.removeID(id) { removed += 1 }
      return removed
    }) ?? 0
  }

  /// Removes one id; returns whether it was present.
  @discardableResult
  public func remove(id: Int64) -> Bool {
    remove(ids: [id]) == 1
  }

  private func insert(ids: [Int64], metadata: [VectorMetadata], vectors: [Float], replacing: Bool)
    throws(VectorIndexError)
  {
    let dimension = self.dimension
    let n = ids.count
    guard metadata.count == n, vectors.count == n * dimension else {
      if n == 1, metadata.count == 1 {
        throw .dimensionMismatch(id: ids[0], expected: dimension, actual: vectors.count)
      }
      throw .batchShapeMismatch(ids: n, metadata: metadata.count, components: vectors.count)
    }
    guard n > 0 else { return }
    if n > 1 {
      var seen = Set<Int64>(minimumCapacity: n)
      for id in ids where !seen.insert(id).inserted { throw .duplicateID(id) }
    }
    try write { version throws(VectorIndexError) in
      if !replacing {
        for id in ids where version.row(of: id) != nil { throw .duplicateID(id) }
      }
      let needed = version.count + n
      guard needed < Int(Int32.max) else { throw .capacityExceeded(requested: needed) }
      if needed > version.rows.capacity {
        let grown = RowStore(
          dimension: dimension, capacity: max(needed, Self.grownCapacity(version.rows.capacity)),
          quantized: version.rows.quantized, floatless: version.rows.floatless)
        grown.copyRows(from: version.rows, range: 0..<version.count, to: 0)
        version.rows = grown
      }
      // Rows at and beyond `count` are invisible to readers, so normalize straight into them;
      // on error nothing is published.
      let start = version.count
      var badRow = 0
      var badColumn = 0
      let status = vectors.withUnsafeBufferPointer { source in
        engram_normalize_rows(
          source.baseAddress!, version.rows.vector(start), n, dimension, &badRow, &badColumn)
      }
      switch status {
      case 1: throw .nonFiniteComponent(id: ids[badRow], index: badColumn)
      case 2: throw .zeroVector(id: ids[badRow])
      default: break
      }
      version.rows.quantize(range: start..<(start + n))
      for index in 0..<n {
        let id = ids[index]
        if replacing, let old = version.row(of: id) { version.markDead(Int(old)) }
        version.appendRow(id: id, metadata: metadata[index])
      }
      version.assignNewRows()
    }
    maintainApproximate()
  }

  /// Rewrites the rows without tombstones and returns how many rows were reclaimed.
  ///
  /// Searches keep reading the previous version while the new one is built; only other
  /// writers wait.
  /// - Complexity: O(live · dimension).
  @discardableResult
  public func compact() -> Int {
    (try? write { version throws(VectorIndexError) -> Int in
      let reclaimed = version.count - version.live
      guard reclaimed > 0 else { return 0 }
      version = version.compacted(capacity: max(version.live, configuration.initialCapacity))
      return reclaimed
    }) ?? 0
  }
}

extension IndexVersion {
  /// A copy holding only live rows, in their current order, with fresh maps and postings.
  func compacted(capacity: Int) -> IndexVersion {
    // Rows keep their order, so the live rows of a floatless prefix stay a prefix.
    let floatless = (0..<rows.floatless).reduce(0) { isDead($1) ? $0 : $0 + 1 }
    let store = RowStore(
      dimension: rows.dimension, capacity: capacity, quantized: rows.quantized, floatless: floatless)
    var next = IndexVersion(rows: store)
    var runStart = -1
    var written = 0
    func flush(_ end: Int) {
      guard runStart >= 0 else { return }
      store.copyRows(from: rows, range: runStart..<end, to: written)
      written += end - runStart
      runStart = -1
    }
    for row in 0..<count {
      if isDead(row) {
        flush(row)
      } else if runStart < 0 {
        runStart = row
      }
    }
    flush(count)
    next.rebuildMaps(rowCount: written)
    next.ivf = compactedIVF()
    next.rowEpoch = rowEpoch + 1
    return next
  }

  /// Rebuilds the id map and posting lists for rows `0..<rowCount` already in `rows`.
  mutating func rebuildMaps(rowCount: Int) {
    for row in 0..<rowCount {
      appendRow(id: rows.ids[row], metadata: metadata(row))
    }
  }

  /// The metadata of row `row`.
  func metadata(_ row: Int) -> VectorMetadata {
    VectorMetadata(
      kind: rows.kinds[row], session: rows.sessions[row], scope: rows.scopes[row],
      timestamp: rows.timestamps[row])
  }
}
