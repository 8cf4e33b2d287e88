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

/// A read-only pointer handed to the parts of one parallel scan, which all finish before the
/// owner of the memory returns.
struct SharedPointer<T>: @unchecked Sendable {
  let pointer: UnsafePointer<T>
  init(_ pointer: UnsafePointer<T>) { self.pointer = pointer }
}

/// Rows scored per kernel call: the score block stays in L1 while the heap consumes it.
let scoreBlock = 1024
/// A search is split across threads only when each part gets at least this many rows.
let minimumRowsPerThread = 16_384
/// Parts per thread of a single-query scan, taken in turn (see `parallelRanges`).
let scanChunksPerThread = 8

extension VectorIndex {
  /// The `k` live rows most similar to `query` (cosine), best first; ties by ascending id.
  ///
  /// Fewer than `k` hits are returned only when fewer than `k` rows match. At and above
  /// `configuration.approximate.threshold` live rows the approximate tier answers; see
  /// `search(_:k:filter:exact:)` to force the exact scan or learn whether hits are exact.
  /// - Parameters:
  ///   - query: `dimension` finite components, not all zero (normalized internally).
  ///   - k: how many hits, at least 1.
  ///   - filter: metadata conditions; only rows matching it are scored.
  /// - Throws: `.invalidK`, `.dimensionMismatch`, `.nonFiniteComponent`, `.zeroVector` (id nil).
  /// - Complexity: O(N · dimension + N log k) unfiltered; O(M · dimension) for a filter
  ///   admitting M rows (plus the posting list it is gathered from).
  public func search(_ query: [Float], k: Int, filter: VectorFilter? = nil) throws(VectorIndexError)
    -> [VectorHit]
  {
    try search(query, k: k, filter: filter, exact: false).hits
  }

  /// Top-k for many queries at once; unfiltered batches are scored with `cblas_sgemm` in
  /// blocks, exactly in float32 whatever the precision.
  /// - Throws: as `search(_:k:filter:)`, for the first bad query.
  public func search(batch queries: [[Float]], k: Int, filter: VectorFilter? = nil) throws(VectorIndexError)
    -> [[VectorHit]]
  {
    guard k >= 1 else { throw .invalidK(k) }
    let dimension = self.dimension
    var flat = [Float]()
    flat.reserveCapacity(queries.count * dimension)
    for query in queries {
      guard query.count == dimension else {
        throw .dimensionMismatch(id: nil, expected: dimension, actual: query.count)
      }
      flat.append(contentsOf: query)
    }
    let unit = try normalizedQueries(flat, count: queries.count)
    let version = try trustedSnapshot()
    // A floatless index has no float32 rows to multiply: one int8 search per query.
    if version.rows.floatless > 0 || !(filter?.isEmpty ?? true) {
      var results: [[VectorHit]] = []
      results.reserveCapacity(queries.count)
      for index in 0..<queries.count {
        let query = Array(unit[(index * dimension)..<((index + 1) * dimension)])
        try query.withUnsafeBufferPointer { pointer throws(VectorIndexError) in
          results.append(try searchOne(version, query: pointer.baseAddress!, k: k, filter: filter))
        }
      }
      return results
    }
    return unit.withUnsafeBufferPointer { pointer in
      batchScan(version, queries: pointer.baseAddress!, count: queries.count, k: k)
    }
  }

  /// Validates `count` queries laid out flat and returns them unit-normalized.
  func normalizedQueries(_ flat: [Float], count: Int) throws(VectorIndexError) -> [Float] {
    guard flat.count == count * dimension else {
      throw .dimensionMismatch(id: nil, expected: dimension, actual: flat.count)
    }
    var unit = [Float](repeating: 0, count: flat.count)
    var badRow = 0
    var badColumn = 0
    let status = flat.withUnsafeBufferPointer { source in
      unit.withUnsafeMutableBufferPointer { target in
        engram_normalize_rows(source.baseAddress!, target.baseAddress!, count, dimension, &badRow, &badColumn)
      }
    }
    switch status {
    case 1: throw .nonFiniteComponent(id: nil, index: badColumn)
    case 2: throw .zeroVector(id: nil)
    default: return unit
    }
  }

  func searchOne(_ version: IndexVersion, query: UnsafePointer<Float>, k: Int, filter: VectorFilter?)
    throws(VectorIndexError) -> [VectorHit]
  {
    guard version.live > 0 else { return [] }
    if let filter, !filter.isEmpty {
      let allowed = version.allowedRows(filter)
      if version.rows.floatless > 0 {
        // The admitted rows by their int8 codes, proven, reading only the candidates' rows.
        return try searchInt8(version, query: query, k: k, among: allowed)
      }
      var heap = TopK(capacity: min(k, allowed.count))
      allowed.withUnsafeBufferPointer { rows in
        Self.scoreGathered(version, query: query, rows: rows, into: &heap)
      }
      return heap.hits()
    }
    // A floatless index holds codes, not float32 rows, for most rows: the int8 search.
    let precision = version.rows.floatless > 0 ? .int8 : configuration.precision
    switch precision {
    case .float32:
      let capacity = min(k, version.live)
      let shared = SharedPointer(query)
      let heaps = parallelRanges(rows: version.count, chunksPerThread: scanChunksPerThread) { range in
        var heap = TopK(capacity: capacity)
        Self.scanFloat32(version, query: shared.pointer, range: range, into: &heap)
        return heap
      }
      var merged = TopK(capacity: capacity)
      for heap in heaps { merged.merge(heap) }
      return merged.hits()
    case .int8:
      return try searchInt8(version, query: query, k: k)
    }
  }

  /// Splits `0..<rows` across the configured threads and runs `body` on each part; results
  /// come back in part order.
  ///
  /// With `chunksPerThread` above 1 the rows are cut into that many parts per thread, which
  /// the threads take in turn as they finish: on a shared host a thread that loses its core
  /// for a while no longer holds the whole query back by its fixed half.
  func parallelRanges<Result: Sendable>(
    rows: Int, minimumRows: Int = minimumRowsPerThread, chunksPerThread: Int = 1,
    _ body: @Sendable (Range<Int>) -> Result
  ) -> [Result] {
    let threads = max(1, min(configuration.threads, rows / minimumRows))
    guard threads > 1 else { return [body(0..<rows)] }
    // Contiguous parts rounded to the 4-row kernel stride.
    let wanted = threads * max(1, chunksPerThread)
    let step = ((rows + wanted - 1) / wanted + 3) & ~3
    let parts = (rows + step - 1) / step
    let next = Atomic<Int>(0)
    let results = Mutex<[Result?]>(Array(repeating: nil, count: parts))
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
      while true {
        let part = next.wrappingAdd(1, ordering: .relaxed).oldValue
        guard part < parts else { return }
        let start = part * step
        let result = body(start..<min(rows, start + step))
        results.withLock { $0[part] = result }
      }
    }
    return results.withLock { $0.map { $0! } }
  }

  static func scanFloat32(
    _ version: IndexVersion, query: UnsafePointer<Float>, range: Range<Int>, into heap: inout TopK
  ) {
    let rows = version.rows
    scan(version, range: range, into: &heap) { start, count, scores in
      engram_dot_f32_rows(query, rows.vector(start), rows.dimension, count, scores)
    }
  }

  /// Scores `range` block by block with `score(firstRow, count, scores)` and offers the live
  /// rows that reach the heap's threshold (float32 and int8 scans alike).
  static func scan(
    _ version: IndexVersion, range: Range<Int>, into heap: inout TopK,
    score: (Int, Int, UnsafeMutablePointer<Float>) -> Void
  ) {
    withUnsafeTemporaryAllocation(of: Float.self, capacity: scoreBlock) { scores in
      withUnsafeTemporaryAllocation(of: Int32.self, capacity: scoreBlock) { picks in
        version.dead.withUnsafeBufferPointer { dead in
          var start = range.lowerBound
          while start < range.upperBound {
            let count = min(scoreBlock, range.upperBound - start)
            score(start, count, scores.baseAddress!)
            offer(
              scores.baseAddress!, count: count, firstRow: start, rows: version.rows, dead: dead,
              picks: picks.baseAddress!, into: &heap)
            start += count
          }
        }
      }
    }
  }

  /// Offers the live rows `firstRow ..< firstRow + count` whose `scores` reach the heap's
  /// threshold; the threshold test runs in the SIMD select kernel, which rejects almost all.
  @inline(__always)
  static func offer(
    _ scores: UnsafePointer<Float>, count: Int, firstRow: Int, rows: RowStore,
    dead: UnsafeBufferPointer<UInt64>,
    picks: UnsafeMutablePointer<Int32>, into heap: inout TopK
  ) {
    let picked = engram_select_at_least(scores, count, heap.threshold, picks)
    for index in 0..<picked {
      let j = Int(picks[index])
      // The threshold rises as the heap fills; later picks may no longer reach it.
      guard scores[j] >= heap.threshold else { continue }
      let row = firstRow + j
      if (dead[row >> 6] >> UInt64(row & 63)) & 1 != 0 { continue }
      heap.offer(score: scores[j], id: rows.ids[row], row: Int32(row))
    }
  }

  static func scoreGathered(
    _ version: IndexVersion, query: UnsafePointer<Float>, rows list: UnsafeBufferPointer<Int32>,
    into heap: inout TopK
  ) {
    let rows = version.rows
    withUnsafeTemporaryAllocation(of: Float.self, capacity: scoreBlock) { buffer in
      let scores = buffer.baseAddress!
      var start = 0
      while start < list.count {
        let n = min(scoreBlock, list.count - start)
        engram_dot_f32_gather(query, rows.vectors, rows.dimension, list.baseAddress! + start, n, scores)
        var threshold = heap.threshold
        for j in 0..<n where scores[j] >= threshold {
          let row = list[start + j]
          heap.offer(score: scores[j], id: rows.ids[Int(row)], row: row)
          threshold = heap.threshold
        }
        start += n
      }
    }
  }

  /// Unfiltered batch top-k: query blocks × row blocks through `cblas_sgemm`.
  ///
  /// Each thread takes a contiguous share of the rows and every query, so a batch of any size
  /// uses all threads; query blocks are large so each row block is packed by BLAS once per
  /// block rather than once per few queries (measured: 1024 × 4096 beats 256 × 2048).
  func batchScan(_ version: IndexVersion, queries: UnsafePointer<Float>, count: Int, k: Int) -> [[VectorHit]]
  {
    guard version.live > 0, count > 0 else { return Array(repeating: [], count: count) }
    // The scan is already split across our threads; nested BLAS threads would oversubscribe.
    #if !canImport(Accelerate)
      openblas_set_num_threads(1)
    #endif
    let dimension = self.dimension
    let queryBlock = 1024
    let rowBlock = 4096
    let capacity = min(k, version.live)
    let rows = version.rows
    let shared = SharedPointer(queries)
    let parts = parallelRanges(rows: version.count, minimumRows: rowBlock) { range -> [TopK] in
      let queries = shared.pointer
      var heaps = (0..<count).map { _ in TopK(capacity: capacity) }
      let scratch = UnsafeMutablePointer<Float>.allocate(capacity: min(queryBlock, count) * rowBlock)
      let picks = UnsafeMutablePointer<Int32>.allocate(capacity: rowBlock)
      defer {
        scratch.deallocate()
        picks.deallocate()
      }
      version.dead.withUnsafeBufferPointer { dead in
        var q0 = 0
        while q0 < count {
          let qn = min(queryBlock, count - q0)
          var r0 = range.lowerBound
          while r0 < range.upperBound {
            let rn = min(rowBlock, range.upperBound - r0)
            cblas_sgemm(
              CblasRowMajor, CblasNoTrans, CblasTrans, Int32(qn), Int32(rn), Int32(dimension), 1,
              queries + q0 * dimension, Int32(dimension), rows.vector(r0), Int32(dimension), 0, scratch,
              Int32(rn))
            for q in 0..<qn {
              Self.offer(
                scratch + q * rn, count: rn, firstRow: r0, rows: rows, dead: dead, picks: picks,
                into: &heaps[q0 + q])
            }
            r0 += rn
          }
          q0 += qn
        }
      }
      return heaps
    }
    return (0..<count).map { query in
      var merged = parts[0][query]
      for part in parts.dropFirst() { merged.merge(part[query]) }
      return merged.hits()
    }
  }
}

extension IndexVersion {
  /// Live rows admitted by `filter`, gathered from the most selective posting source.
  func allowedRows(_ filter: VectorFilter) -> [Int32] {
    // Candidate sources and their sizes; the smallest drives, the rest are checked per row.
    var best: [Int32]? = nil
    var bestSize = Int.max
    var bestPostings: [Posting]? = nil
    if let ids = filter.ids {
      best = ids.compactMap { row(of: $0) }
      bestSize = best!.count
    }
    func consider(_ postings: [Posting]) {
      let size = postings.reduce(0) { $0 + $1.count }
      if size < bestSize {
        bestSize = size
        bestPostings = postings
        best = nil
      }
    }
    if let kinds = filter.kinds {
      consider(kinds.compactMap { $0 < VectorMetadata.kindLimit ? kindPostings[Int($0)] : nil })
    }
    if let sessions = filter.sessions { consider(sessions.compactMap { sessionPostings[$0] }) }
    if let scopes = filter.scopes { consider(scopes.compactMap { scopePostings[$0] }) }

    var kindMask: UInt8 = 0xFF
    if let kinds = filter.kinds { kindMask = kinds.reduce(0) { $0 | (1 << $1) } }
    let rows = self.rows
    var allowed: [Int32] = []
    dead.withUnsafeBufferPointer { dead in
      func admit(_ row32: Int32) {
        let row = Int(row32)
        guard (dead[row >> 6] >> UInt64(row & 63)) & 1 == 0 else { return }
        guard kindMask & (1 << rows.kinds[row]) != 0 else { return }
        if let sessions = filter.sessions, !sessions.contains(rows.sessions[row]) { return }
        if let scopes = filter.scopes, !scopes.contains(rows.scopes[row]) { return }
        if let range = filter.timeRange, !range.contains(rows.timestamps[row]) { return }
        if let ids = filter.ids, !ids.contains(rows.ids[row]) { return }
        allowed.append(row32)
      }
      if let best {
        allowed.reserveCapacity(best.count)
        for row in best { admit(row) }
        return
      }
      // Rows of an opened snapshot have no postings: their metadata columns are scanned.
      for row in 0..<sortedBase { admit(Int32(row)) }
      if let bestPostings {
        allowed.reserveCapacity(bestSize)
        for posting in bestPostings {
          for row in posting.buffer { admit(row) }
        }
      } else {
        // Only a time range: scan the 8-byte timestamp column, still far cheaper than scoring.
        for row in sortedBase..<count { admit(Int32(row)) }
      }
    }
    return allowed
  }
}
