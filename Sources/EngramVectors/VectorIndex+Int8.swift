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
    let queryError = codes.withUnsafeMutableBufferPointer { codes in
      engram_quantize_rows_i8(query, 1, dimension, codes.baseAddress!, &scale, &codeSum)
      return engram_quantization_error_max(query, codes.baseAddress!, &scale, 1, dimension)
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
    let rows = version.rows
    let dimension = rows.dimension
    var admitted: [Int32] = []
    withUnsafeTemporaryAllocation(of: Int32.self, capacity: scoreBlock) { buffer in
      let dots = buffer.baseAddress!
      version.dead.withUnsafeBufferPointer { dead in
        var start = 0
        while start < version.count {
          let n = min(scoreBlock, version.count - start)
          engram_dot_i8_rows(
            queryCodes, rows.codes + start * dimension, dimension, n, rows.codeSums + start, dots)
          for j in 0..<n where Float(dots[j]) * rows.scales[start + j] >= cut {
            let row = start + j
            if (dead[row >> 6] >> UInt64(row & 63)) & 1 == 0 { admitted.append(Int32(row)) }
          }
          start += n
        }
      }
    }
    return admitted
  }

  static func scanInt8(
    _ version: IndexVersion, queryCodes: UnsafePointer<Int8>, range: Range<Int>, into heap: inout TopK
  ) {
    let rows = version.rows
    let dimension = rows.dimension
    withUnsafeTemporaryAllocation(of: Int32.self, capacity: scoreBlock) { buffer in
      let dots = buffer.baseAddress!
      version.dead.withUnsafeBufferPointer { dead in
        var start = range.lowerBound
        while start < range.upperBound {
          let n = min(scoreBlock, range.upperBound - start)
          engram_dot_i8_rows(
            queryCodes, rows.codes + start * dimension, dimension, n, rows.codeSums + start, dots)
          var threshold = heap.threshold
          let scales = rows.scales + start
          for j in 0..<n {
            let score = Float(dots[j]) * scales[j]
            guard score >= threshold else { continue }
            let row = start + j
            if (dead[row >> 6] >> UInt64(row & 63)) & 1 != 0 { continue }
            heap.offer(score: score, id: rows.ids[row], row: Int32(row))
            threshold = heap.threshold
          }
          start += n
        }
      }
    }
  }
}
