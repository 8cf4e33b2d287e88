import CEngramKernels

extension VectorIndex {
  /// int8 search: rank by integer dot products of per-row-scaled codes, then re-rank the best
  /// `k * rerankFactor` candidates with exact float32 dot products.
  ///
  /// One scale per row (max |x| / 127) was chosen over per-dimension scales: rows stay
  /// independent (no global statistics to refresh as rows arrive), the integer dot needs
  /// one multiply per row, and with re-ranking recall@10 measured ≥ 0.99 on random and
  /// clustered sets (see the tests and the `vectors` benchmark).
  func searchInt8(_ version: IndexVersion, query: UnsafePointer<Float>, k: Int) -> [VectorHit] {
    let dimension = self.dimension
    let candidates = min(version.live, max(k * configuration.rerankFactor, k + 32))
    var codes = [Int8](repeating: 0, count: dimension)
    var scale: Float = 0
    var codeSum: Int32 = 0
    codes.withUnsafeMutableBufferPointer {
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
    return exact.hits()
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
