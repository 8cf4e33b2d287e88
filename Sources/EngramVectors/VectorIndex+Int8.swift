import CEngramKernels

extension VectorIndex {
  /// int8 search: rank by integer dot products of per-row-scaled codes, re-rank the best
  /// `k * rerankFactor` candidates (best first, stopping once the proof closes) with exact
  /// float32 dot products, then prove the result exact.
  ///
  /// One scale per row (max |x| / 127) was chosen over per-dimension scales: rows stay
  /// independent (no global statistics to refresh as rows arrive), and the integer dot needs
  /// one multiply per row.
  ///
  /// The result is the exact float32 top-k, not an approximation. For a unit query q with codes
  /// q' and a row x with codes x', |q·x - q'·x'| <= e(x) + e(q) (1 + e(x)), where e is the
  /// quantization error norm (the index keeps the largest e over its rows). A row left out of
  /// the candidates has an int8 score at most the worst candidate's, so when that score plus
  /// the bound is below the k-th exact score, no left-out row can enter. When the check fails
  /// (rows crowded around the k-th score), a second int8 pass scores exactly every row whose
  /// bound reaches the k-th score.
  ///
  /// A floatless index (opened from a snapshot of int8 codes) reads the candidates' float32
  /// rows from its `FloatRowSource`; each read costs a store lookup, so it re-ranks fewer
  /// candidates (`k + max(32, k / 4)`) and lets the proof call the second pass when they
  /// do not suffice. `among` restricts the search to those live rows (a filter's).
  func searchInt8(_ version: IndexVersion, query: UnsafePointer<Float>, k: Int, among: [Int32]? = nil)
    throws(VectorIndexError) -> [VectorHit]
  {
    try searchInt8Certified(version, query: query, k: k, among: among).hits
  }

  /// `searchInt8`, also telling whether the second pass ran and how many candidates were
  /// re-ranked before it (for tests).
  func searchInt8Certified(
    _ version: IndexVersion, query: UnsafePointer<Float>, k: Int, among: [Int32]? = nil
  )
    throws(VectorIndexError) -> (hits: [VectorHit], secondPass: Bool, reranked: Int)
  {
    let dimension = self.dimension
    let live = among?.count ?? version.live
    let wanted =
      version.rows.floatless > 0 ? k + max(32, k / 4) : max(k * configuration.rerankFactor, k + 32)
    let candidates = min(live, wanted)
    var codes = [Int8](repeating: 0, count: dimension)
    var scale: Float = 0
    var codeSum: Int32 = 0
    let queryError = codes.withUnsafeMutableBufferPointer {
      engram_quantize_rows_i8(query, 1, dimension, $0.baseAddress!, &scale, &codeSum)
    }
    var merged = TopK(capacity: candidates)
    if let among {
      codes.withUnsafeBufferPointer {
        Self.scanInt8(version, queryCodes: $0.baseAddress!, rows: among, into: &merged)
      }
    } else {
      let heaps = codes.withUnsafeBufferPointer { codePointer in
        let shared = SharedPointer(codePointer.baseAddress!)
        return parallelRanges(rows: version.count, chunksPerThread: scanChunksPerThread) { range in
          var heap = TopK(capacity: candidates)
          Self.scanInt8(version, queryCodes: shared.pointer, range: range, into: &heap)
          return heap
        }
      }
      for heap in heaps { merged.merge(heap) }
    }
    let ranked = merged.sorted()
    let rows = ranked.map(\.row)
    var exact = TopK(capacity: min(k, rows.count))
    // Scan scores leave out the query's scale; 1e-4 covers float rounding in both scores.
    let rowError = version.rows.codeErrorBound
    let bound = rowError + queryError * (1 + rowError) + 1e-4
    // A float-holding index re-ranks the candidates best first in stages (k + 32, then
    // doubling) and stops at the first stage the proof closes: every row not re-ranked yet,
    // candidate or not, has an int8 score at most that of the best candidate left,
    // `ranked[reranked]`. On 100k random rows (the hardest case: top scores crowd) the first
    // stage proves the top 10 for about 4 queries in 10, the second for nearly all the rest.
    var reranked = 0
    if version.rows.floatless == 0 {
      var stage = min(rows.count, k + 32)
      while stage < rows.count {
        try scoreExactly(version, query: query, rows: Array(rows[reranked..<stage]), into: &exact)
        reranked = stage
        if exact.count == k && scale * ranked[reranked].score + bound < exact.threshold {
          return (exact.hits(), false, reranked)
        }
        stage = min(rows.count, 2 * stage)
      }
    }
    try scoreExactly(version, query: query, rows: Array(rows[reranked...]), into: &exact)
    reranked = rows.count
    // Every live row scored exactly: nothing was left out.
    guard merged.count < live else { return (exact.hits(), false, reranked) }
    // Fewer than k now means candidates the source no longer holds (rows deleted from the
    // store a moment before the index hears of it): the rows left are the answer; scoring
    // every row to replace them would read the whole table from the source.
    guard exact.count == k else { return (exact.hits(), false, reranked) }
    let kth = exact.threshold
    if scale * merged.threshold + bound < kth { return (exact.hits(), false, reranked) }

    let cut = (kth - bound) / scale
    let admitted = codes.withUnsafeBufferPointer { codes in
      Self.rowsReaching(cut, version, queryCodes: codes.baseAddress!, among: among)
    }
    // Candidates scored already and left out of `exact` rank below its k-th (ties by id
    // included), so they cannot enter: only the admitted rows not among them are scored.
    let scored = Set(rows)
    var second = exact
    try scoreExactly(version, query: query, rows: admitted.filter { !scored.contains($0) }, into: &second)
    return (second.hits(), true, reranked)
  }

  /// int8 scan scores (without the query's scale) of the live rows `list` into `heap`.
  ///
  /// Candidate heaps break ties by row number rather than id (their `id` is the row): the
  /// proof needs only that a row left out scores at most the worst candidate, and reading
  /// each offered row's id was a cache miss per offer (measured: 5-6% of a 100k-row search).
  static func scanInt8(
    _ version: IndexVersion, queryCodes: UnsafePointer<Int8>, rows list: [Int32], into heap: inout TopK
  ) {
    for row in list {
      let score = int8Score(version.rows, queryCodes: queryCodes, row: Int(row))
      if score >= heap.threshold { heap.offer(score: score, id: Int64(row), row: row) }
    }
  }

  /// The int8 scan score (without the query's scale) of one row.
  @inline(__always)
  static func int8Score(_ rows: RowStore, queryCodes: UnsafePointer<Int8>, row: Int) -> Float {
    var dot: Int32 = 0
    engram_dot_i8_rows(
      queryCodes, rows.codes + row * rows.dimension, rows.dimension, 1, rows.codeSums + row, &dot)
    return Float(dot) * rows.scales[row]
  }

  /// Live rows whose int8 scan score (without the query's scale) is at least `cut`.
  static func rowsReaching(
    _ cut: Float, _ version: IndexVersion, queryCodes: UnsafePointer<Int8>, among: [Int32]? = nil
  ) -> [Int32] {
    if let among {
      return among.filter { int8Score(version.rows, queryCodes: queryCodes, row: Int($0)) >= cut }
    }
    var admitted: [Int32] = []
    scanInt8Blocks(version, queryCodes: queryCodes, range: 0..<version.count, threshold: { cut }) { row, _ in
      admitted.append(Int32(row))
    }
    return admitted
  }

  /// Offers the live rows of `range` whose int8 scan score reaches the heap's threshold.
  static func scanInt8(
    _ version: IndexVersion, queryCodes: UnsafePointer<Int8>, range: Range<Int>, into heap: inout TopK
  ) {
    scanInt8Blocks(version, queryCodes: queryCodes, range: range, threshold: { heap.threshold }) {
      row, score in
      heap.offer(score: score, id: Int64(row), row: Int32(row))
    }
  }

  /// Calls `body` with each live row of `range` (and its int8 scan score, without the query's
  /// scale) that reaches `threshold()`: the scoring and the threshold test run in one kernel
  /// pass over each block, and the threshold is read again for every pick (a heap's rises as
  /// it fills, so later picks of a block may no longer reach it).
  @inline(__always)
  static func scanInt8Blocks(
    _ version: IndexVersion, queryCodes: UnsafePointer<Int8>, range: Range<Int>, threshold: () -> Float,
    _ body: (Int, Float) -> Void
  ) {
    let rows = version.rows
    let dimension = rows.dimension
    withUnsafeTemporaryAllocation(of: Float.self, capacity: scoreBlock) { scores in
      withUnsafeTemporaryAllocation(of: Int32.self, capacity: scoreBlock) { picks in
        version.dead.withUnsafeBufferPointer { dead in
          var start = range.lowerBound
          while start < range.upperBound {
            let count = min(scoreBlock, range.upperBound - start)
            let picked = engram_scan_i8_rows(
              queryCodes, rows.codes + start * dimension, dimension, count, rows.codeSums + start,
              rows.scales + start, threshold(), picks.baseAddress!, scores.baseAddress!)
            for index in 0..<picked {
              let score = scores[index]
              guard score >= threshold() else { continue }
              let row = start + Int(picks[index])
              if (dead[row >> 6] >> UInt64(row & 63)) & 1 != 0 { continue }
              body(row, score)
            }
            start += count
          }
        }
      }
    }
  }
}
