import CEngramKernels

extension VectorIndex {
  /// int8 search: rank by integer dot products of per-row-scaled codes, re-rank the best
  /// `k * rerankFactor` candidates with exact float32 dot products, then prove the result exact.
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
  func searchInt8(_ version: IndexVersion, query: UnsafePointer<Float>, k: Int) -> [VectorHit] {
    searchInt8Certified(version, query: query, k: k).hits
  }

  /// `searchInt8`, also telling whether the second pass ran (for tests).
  func searchInt8Certified(_ version: IndexVersion, query: UnsafePointer<Float>, k: Int) -> (
    hits: [VectorHit], secondPass: Bool
  ) {
    let dimension = self.dimension
    let candidates = min(version.live, max(k * configuration.rerankFactor, k + 32))
    var codes = [Int8](repeating: 0, count: dimension)
    var scale: Float = 0
    var codeSum: Int32 = 0
    let queryError = codes.withUnsafeMutableBufferPointer {
      engram_quantize_rows_i8(query, 1, dimension, $0.baseAddress!, &scale, &codeSum)
    }
    let heaps = codes.withUnsafeBufferPointer { codePointer in
      let shared = SharedPointer(codePointer.baseAddress!)
      return parallelRanges(rows: version.count, chunksPerThread: scanChunksPerThread) { range in
        var heap = TopK(capacity: candidates)
        Self.scanInt8(version, queryCodes: shared.pointer, range: range, into: &heap)
        return heap
      }
    }
    var merged = TopK(capacity: candidates)
    for heap in heaps { merged.merge(heap) }
    let rows = merged.sorted().map(\.row)
    var exact = TopK(capacity: min(k, rows.count))
    rows.withUnsafeBufferPointer { Self.scoreGathered(version, query: query, rows: $0, into: &exact) }
    // Every live row scored exactly: nothing was left out.
    guard merged.count < version.live else { return (exact.hits(), false) }

    // Scan scores leave out the query's scale; 1e-4 covers float rounding in both scores.
    let rowError = version.rows.codeErrorBound
    let bound = rowError + queryError * (1 + rowError) + 1e-4
    let kth = exact.threshold
    if scale * merged.threshold + bound < kth { return (exact.hits(), false) }

    let admitted = codes.withUnsafeBufferPointer { codes in
      Self.rowsReaching((kth - bound) / scale, version, queryCodes: codes.baseAddress!)
    }
    var second = TopK(capacity: min(k, admitted.count))
    admitted.withUnsafeBufferPointer { Self.scoreGathered(version, query: query, rows: $0, into: &second) }
    return (second.hits(), true)
  }

  /// Live rows whose int8 scan score (without the query's scale) is at least `cut`.
  static func rowsReaching(_ cut: Float, _ version: IndexVersion, queryCodes: UnsafePointer<Int8>) -> [Int32]
  {
    var admitted: [Int32] = []
    withUnsafeTemporaryAllocation(of: Float.self, capacity: scoreBlock) { scores in
      withUnsafeTemporaryAllocation(of: Int32.self, capacity: scoreBlock) { dots in
        version.dead.withUnsafeBufferPointer { dead in
          var start = 0
          while start < version.count {
            let count = min(scoreBlock, version.count - start)
            int8Scores(
              version.rows, queryCodes: queryCodes, start: start, count: count, dots: dots,
              into: scores.baseAddress!)
            // `dots` is free again: it takes the positions that pass.
            let picks = dots.baseAddress!
            let picked = engram_select_at_least(scores.baseAddress!, count, cut, picks)
            for index in 0..<picked {
              let row = start + Int(picks[index])
              if (dead[row >> 6] >> UInt64(row & 63)) & 1 == 0 { admitted.append(Int32(row)) }
            }
            start += count
          }
        }
      }
    }
    return admitted
  }

  static func scanInt8(
    _ version: IndexVersion, queryCodes: UnsafePointer<Int8>, range: Range<Int>, into heap: inout TopK
  ) {
    withUnsafeTemporaryAllocation(of: Int32.self, capacity: scoreBlock) { dots in
      scan(version, range: range, into: &heap) { start, count, scores in
        int8Scores(version.rows, queryCodes: queryCodes, start: start, count: count, dots: dots, into: scores)
      }
    }
  }

  /// int8 scan scores of rows `start ..< start + count`: integer dot products times each
  /// row's scale (the query's scale, common to all rows, is left out).
  @inline(__always)
  static func int8Scores(
    _ rows: RowStore, queryCodes: UnsafePointer<Int8>, start: Int, count: Int,
    dots: UnsafeMutableBufferPointer<Int32>, into scores: UnsafeMutablePointer<Float>
  ) {
    let dimension = rows.dimension
    engram_dot_i8_rows(
      queryCodes, rows.codes + start * dimension, dimension, count, rows.codeSums + start, dots.baseAddress!)
    let scales = rows.scales + start
    for j in 0..<count { scores[j] = Float(dots[j]) * scales[j] }
  }
}
