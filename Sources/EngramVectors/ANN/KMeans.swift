import Dispatch
import EngramCore
import Synchronization

// BLAS: Accelerate on Apple platforms (untested: this project builds and tests on Linux only),
// OpenBLAS elsewhere.
#if canImport(Accelerate)
  import Accelerate
#else
  import CBLAS
#endif

/// Spherical k-means (unit centroids, cosine assignment) whose inner loops are `cblas_sgemm`
/// blocks: the training sample against the centroids, then every row against them.
enum KMeans {
  /// Rows scored against all centroids per GEMM call.
  static let block = 1024

  /// Trains `lists` unit centroids on `sample` (unit rows, flat), `iterations` Lloyd steps
  /// from seeded distinct sample rows; an emptied list is re-seeded with a sample row.
  /// - Complexity: O(iterations · sample · lists · dimension), in GEMMs.
  static func train(
    sample: [Float], count: Int, dimension: Int, lists: Int, iterations: Int,
    random: inout SplitMix64, threads: Int = 1
  ) -> [Float] {
    precondition(count >= lists && lists > 0)
    var centroids = [Float](repeating: 0, count: lists * dimension)
    var picks = Array(0..<count)
    for index in 0..<lists {
      let other = index + Int(random.next() % UInt64(count - index))
      picks.swapAt(index, other)
      let source = picks[index] * dimension
      for j in 0..<dimension { centroids[index * dimension + j] = sample[source + j] }
    }
    var labels = [Int32](repeating: 0, count: count)
    var scores = [Float](repeating: 0, count: count)
    var sums = [Float](repeating: 0, count: lists * dimension)
    var sizes = [Int](repeating: 0, count: lists)
    for _ in 0..<iterations {
      sample.withUnsafeBufferPointer { rows in
        assign(
          rows.baseAddress!, count: count, dimension: dimension, centroids: centroids, lists: lists,
          labels: &labels, scores: &scores, threads: threads)
      }
      for index in sums.indices { sums[index] = 0 }
      for index in sizes.indices { sizes[index] = 0 }
      sample.withUnsafeBufferPointer { rows in
        sums.withUnsafeMutableBufferPointer { sums in
          for row in 0..<count {
            let list = Int(labels[row])
            sizes[list] += 1
            cblas_saxpy(
              Int32(dimension), 1, rows.baseAddress! + row * dimension, 1,
              sums.baseAddress! + list * dimension, 1)
          }
        }
      }
      for list in 0..<lists {
        if sizes[list] == 0 {
          let source = Int(random.next() % UInt64(count)) * dimension
          for j in 0..<dimension { centroids[list * dimension + j] = sample[source + j] }
          continue
        }
        var norm: Float = 0
        for j in 0..<dimension { norm += sums[list * dimension + j] * sums[list * dimension + j] }
        let inverse = norm > 0 ? 1 / norm.squareRoot() : 0
        for j in 0..<dimension { centroids[list * dimension + j] = sums[list * dimension + j] * inverse }
      }
    }
    return centroids
  }

  /// The best centroid of each of `count` unit rows (flat) and its cosine, written to
  /// `labels[offset...]` and `scores[offset...]`. With `threads` above 1 the GEMM blocks are
  /// shared out among that many threads, each calling single-threaded BLAS (no lock-step
  /// barrier per call, so a thread that loses its core on a shared host holds back only the
  /// blocks it has taken).
  /// - Complexity: O(count · lists · dimension), in GEMM blocks.
  static func assign(
    _ rows: UnsafePointer<Float>, count: Int, dimension: Int, centroids: [Float], lists: Int,
    labels: inout [Int32], scores: inout [Float], offset: Int = 0, threads: Int = 1
  ) {
    guard count > 0 else { return }
    let blocks = (count + block - 1) / block
    let workers = max(1, min(threads, blocks))
    labels.withUnsafeMutableBufferPointer { labels in
      scores.withUnsafeMutableBufferPointer { scores in
        centroids.withUnsafeBufferPointer { centroids in
          let shared = AssignTargets(
            rows: rows, centroids: centroids.baseAddress!, labels: labels.baseAddress! + offset,
            scores: scores.baseAddress! + offset)
          guard workers > 1 else {
            assignBlocks(shared, blocks: 0..<blocks, count: count, dimension: dimension, lists: lists)
            return
          }
          let next = Atomic<Int>(0)
          DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
              let taken = next.wrappingAdd(1, ordering: .relaxed).oldValue
              guard taken < blocks else { return }
              assignBlocks(
                shared, blocks: taken..<(taken + 1), count: count, dimension: dimension, lists: lists)
            }
          }
        }
      }
    }
  }

  /// Where `assign` reads and writes; blocks write disjoint ranges of `labels` and `scores`.
  struct AssignTargets: @unchecked Sendable {
    let rows: UnsafePointer<Float>
    let centroids: UnsafePointer<Float>
    let labels: UnsafeMutablePointer<Int32>
    let scores: UnsafeMutablePointer<Float>
  }

  private static func assignBlocks(
    _ targets: AssignTargets, blocks: Range<Int>, count: Int, dimension: Int, lists: Int
  ) {
    let scratch = UnsafeMutablePointer<Float>.allocate(capacity: min(block, count) * lists)
    defer { scratch.deallocate() }
    for blockIndex in blocks {
      let start = blockIndex * block
      let n = min(block, count - start)
      cblas_sgemm(
        CblasRowMajor, CblasNoTrans, CblasTrans, Int32(n), Int32(lists), Int32(dimension), 1,
        targets.rows + start * dimension, Int32(dimension), targets.centroids, Int32(dimension), 0, scratch,
        Int32(lists))
      for row in 0..<n {
        let line = scratch + row * lists
        var best = 0
        var bestScore = line[0]
        for list in 1..<lists where line[list] > bestScore {
          best = list
          bestScore = line[list]
        }
        targets.labels[start + row] = Int32(best)
        targets.scores[start + row] = bestScore
      }
    }
  }
}
