import CEngramKernels
import EngramCore

// BLAS: Accelerate on Apple platforms (untested: this project builds and tests on Linux only),
// OpenBLAS elsewhere.
#if canImport(Accelerate)
  import Accelerate
#else
  import CBLAS
#endif

/// The approximate tier of one index version: unit centroids and, per centroid, the rows
/// closest to it as int8 codes.
///
/// Every row of the version (`0..<assignedRows`, live or tombstoned) is in exactly one list;
/// tombstoned rows are skipped by the search through the version's dead bits, and leave
/// the lists when `compact()` renumbers the rows.
struct IVFState: Sendable {
  let dimension: Int
  /// `lists * dimension` unit centroids, row-major.
  let centroids: [Float]
  /// The centroids as int8 codes: a search ranks lists by these (a quarter of the bytes).
  let centroidCodes: CentroidCodes
  var lists: [IVFList]
  /// Per list, an upper bound of `|| x - centroid ||` over its rows (only grows), so for a
  /// unit query q no row of the list scores above `q · centroid + radius`.
  var radii: [Float]
  /// The largest int8 quantization error norm of any row in the lists.
  var codeError: Float
  /// Rows of the version in the lists.
  var assignedRows: Int
  /// Live rows when the lists were clustered, and rows appended since.
  let clusteredRows: Int
  var appendedRows: Int
  /// Lists a search probes, calibrated to `targetRecall`.
  var probes: Int
  var calibratedRecall: Double
  var targetRecall: Double

  var listCount: Int { lists.count }

  var bytes: Int {
    lists.reduce(0) { $0 + $1.bytes } + centroids.count * 4 + radii.count * 4
  }

  /// Whether appends have moved the lists far enough from their clustering that they should
  /// be re-clustered: as many rows again as were clustered.
  var drifted: Bool { appendedRows >= max(clusteredRows, 1) }

  /// Appends rows `range` of `rows` (unit vectors) to their nearest lists, finding them on
  /// `threads` threads.
  mutating func assign(_ rows: RowStore, range: Range<Int>, threads: Int = 1) {
    guard !range.isEmpty else { return }
    var labels = [Int32](repeating: 0, count: range.count)
    var scores = [Float](repeating: 0, count: range.count)
    KMeans.assign(
      rows.vector(range.lowerBound), count: range.count, dimension: dimension, centroids: centroids,
      lists: listCount, labels: &labels, scores: &scores, threads: threads)
    if lists.allSatisfy({ $0.count == 0 }) {
      // First fill: size every list exactly (doubling would leave up to half unused).
      var sizes = [Int](repeating: 0, count: listCount)
      for label in labels { sizes[Int(label)] += 1 }
      lists = sizes.map { IVFList(dimension: dimension, capacity: $0) }
    }
    for (offset, row) in range.enumerated() {
      let list = Int(labels[offset])
      let error = lists[list].append(row: Int32(row), vector: rows.vector(row))
      codeError = max(codeError, error)
      // |x - c|^2 = 2 - 2 x·c for unit x and c; rounded up so the bound stays a bound.
      let distance = (max(0, 2 - 2 * scores[offset])).squareRoot() * 1.0001 + 1e-6
      radii[list] = max(radii[list], distance)
    }
    assignedRows = range.upperBound
  }

  /// The lists after `compact()` renumbered rows: `newRow[old]` is the new row or -1.
  func remapped(_ newRow: [Int32]) -> IVFState {
    var next = self
    next.lists = lists.map { list in
      var kept = IVFList(dimension: dimension, capacity: list.count)
      let source = list.storage
      for index in 0..<list.count {
        let row = newRow[Int(source.rows[index])]
        guard row >= 0 else { continue }
        kept.appendCopy(row: row, from: source, at: index)
      }
      return kept
    }
    next.assignedRows = newRow.reduce(0) { $1 >= 0 ? $0 + 1 : $0 }
    return next
  }
}

extension IVFList {
  /// Appends `row` with entry `index` of `source`'s codes (no re-quantization).
  mutating func appendCopy(row: Int32, from source: IVFListStorage, at index: Int) {
    let dimension = source.dimension
    // Capacity was reserved by the caller for every entry of `source`.
    precondition(count < storage.capacity)
    storage.rows[count] = row
    (storage.codes + count * dimension).update(from: source.codes + index * dimension, count: dimension)
    storage.scales[count] = source.scales[index]
    storage.sums[count] = source.sums[index]
    count += 1
  }
}

extension IVFState {
  /// Training rows per list. 16 rows and 6 steps left a list's centroid off its rows' mean
  /// (200k clustered rows: one probe found 0.95 of the top-10, faiss IVFFlat, trained on every
  /// row, 0.98); 64 and 10 cost a fraction of assigning the rows (see the README).
  static let samplePerList = 64
  /// Lloyd steps of the training.
  static let trainingSteps = 10

  /// Clusters the live rows of `version` and calibrates the probe count.
  ///
  /// Training: spherical k-means on a seeded sample of `samplePerList` rows per list (at least
  /// 4,096), `trainingSteps` Lloyd steps, in GEMM blocks. Calibration: `queries` live rows as queries, their exact top-10
  /// (themselves left out) from a GEMM scan; the rank of each true neighbour's list in the
  /// query's centroid order gives recall as a function of the probe count directly, and the
  /// smallest count reaching `targetRecall` is kept with the recall measured at it.
  /// - Complexity: O(lists · dimension · (64 · lists · 10 + n) + queries · n · dimension).
  static func build(
    _ version: IndexVersion, settings: ApproximateConfiguration, seed: UInt64 = 0x454E_4752_4956_4601
  ) -> IVFState? {
    let rows = version.rows
    let dimension = rows.dimension
    var liveRows: [Int32] = []
    liveRows.reserveCapacity(version.live)
    for row in 0..<version.count where !version.isDead(row) { liveRows.append(Int32(row)) }
    let n = liveRows.count
    guard n >= 2 else { return nil }
    let automatic = Int((2 * Double(n).squareRoot()).rounded())
    let listCount = max(1, min(settings.lists > 0 ? settings.lists : automatic, n / 2))
    // `buildThreads` threads share the GEMM blocks out, each on single-threaded BLAS.
    #if !canImport(Accelerate)
      openblas_set_num_threads(1)
    #endif

    var random = SplitMix64(seed: seed ^ UInt64(n))
    let sampleCount = min(n, max(listCount * samplePerList, 4096))
    var sample = [Float](repeating: 0, count: sampleCount * dimension)
    var pool = liveRows
    for index in 0..<sampleCount {
      let other = index + Int(random.next() % UInt64(n - index))
      pool.swapAt(index, other)
      let source = rows.vector(Int(pool[index]))
      for j in 0..<dimension { sample[index * dimension + j] = source[j] }
    }
    let centroids = KMeans.train(
      sample: sample, count: sampleCount, dimension: dimension, lists: listCount, iterations: trainingSteps,
      random: &random, threads: settings.buildThreads)
    sample = []

    var state = IVFState(
      dimension: dimension, centroids: centroids,
      centroidCodes: CentroidCodes(centroids, lists: listCount, dimension: dimension),
      lists: (0..<listCount).map { _ in IVFList(dimension: dimension, capacity: 0) },
      radii: [Float](repeating: 0, count: listCount), codeError: 0, assignedRows: 0, clusteredRows: n,
      appendedRows: 0, probes: listCount, calibratedRecall: 1, targetRecall: settings.targetRecall)
    state.assign(rows, range: 0..<version.count, threads: settings.buildThreads)
    state.calibrate(version, queries: settings.calibrationQueries, pool: pool, random: &random)
    return state
  }

  /// Sets `probes` to the smallest count whose measured recall@10 reaches the target.
  mutating func calibrate(
    _ version: IndexVersion, queries wanted: Int, pool: [Int32], random: inout SplitMix64
  ) {
    let k = 10
    let rows = version.rows
    let n = pool.count
    let queryCount = min(wanted, n)
    guard n > k + 1, queryCount > 0 else {
      probes = listCount
      calibratedRecall = 1
      return
    }
    // Queries: distinct random live rows.
    var picks = pool
    var queries = [Float](repeating: 0, count: queryCount * dimension)
    var queryRows = [Int32](repeating: 0, count: queryCount)
    for index in 0..<queryCount {
      let other = index + Int(random.next() % UInt64(n - index))
      picks.swapAt(index, other)
      queryRows[index] = picks[index]
      (queries.withUnsafeMutableBufferPointer { $0.baseAddress! } + index * dimension).update(
        from: rows.vector(Int(picks[index])), count: dimension)
    }
    // Exact top-(k+1) of every query over the live rows (the query itself comes first).
    let truth = Self.exactTop(version, queries: queries, count: queryCount, k: k + 1)
    // Every row's list, for the rows that matter.
    var listOf = [Int32](repeating: -1, count: assignedRows)
    for (list, entry) in lists.enumerated() {
      for index in 0..<entry.count { listOf[Int(entry.storage.rows[index])] = Int32(list) }
    }
    var centroidScores = [Float](repeating: 0, count: queryCount * listCount)
    queries.withUnsafeBufferPointer { q in
      centroids.withUnsafeBufferPointer { c in
        centroidScores.withUnsafeMutableBufferPointer { out in
          cblas_sgemm(
            CblasRowMajor, CblasNoTrans, CblasTrans, Int32(queryCount), Int32(listCount), Int32(dimension), 1,
            q.baseAddress!, Int32(dimension), c.baseAddress!, Int32(dimension), 0, out.baseAddress!,
            Int32(listCount))
        }
      }
    }
    // needed[p] = true neighbours whose list ranks p-th (0-based) in their query's order.
    var needed = [Int](repeating: 0, count: listCount + 1)
    var total = 0
    for query in 0..<queryCount {
      let scores = centroidScores[(query * listCount)..<((query + 1) * listCount)]
      for row in truth[query] where row != queryRows[query] {
        guard Int(row) < listOf.count, case let list = listOf[Int(row)], list >= 0 else { continue }
        let own = scores[scores.startIndex + Int(list)]
        var rank = 0
        for score in scores where score > own { rank += 1 }
        needed[rank] += 1
        total += 1
      }
    }
    guard total > 0 else {
      probes = listCount
      calibratedRecall = 1
      return
    }
    var covered = 0
    probes = listCount
    calibratedRecall = 1
    for rank in 0..<listCount {
      covered += needed[rank]
      let recall = Double(covered) / Double(total)
      if recall >= targetRecall {
        probes = rank + 1
        calibratedRecall = recall
        break
      }
    }
  }

  /// Row numbers of the exact top-`k` live rows of each query (GEMM blocks over the rows).
  static func exactTop(_ version: IndexVersion, queries: [Float], count: Int, k: Int) -> [[Int32]] {
    let rows = version.rows
    let dimension = rows.dimension
    let rowBlock = 4096
    var heaps = (0..<count).map { _ in TopK(capacity: min(k, version.live)) }
    let scratch = UnsafeMutablePointer<Float>.allocate(capacity: count * rowBlock)
    let picks = UnsafeMutablePointer<Int32>.allocate(capacity: rowBlock)
    defer {
      scratch.deallocate()
      picks.deallocate()
    }
    queries.withUnsafeBufferPointer { q in
      version.dead.withUnsafeBufferPointer { dead in
        var r0 = 0
        while r0 < version.count {
          let rn = min(rowBlock, version.count - r0)
          cblas_sgemm(
            CblasRowMajor, CblasNoTrans, CblasTrans, Int32(count), Int32(rn), Int32(dimension), 1,
            q.baseAddress!, Int32(dimension), rows.vector(r0), Int32(dimension), 0, scratch, Int32(rn))
          for query in 0..<count {
            VectorIndex.offer(
              scratch + query * rn, count: rn, firstRow: r0, rows: rows, dead: dead, picks: picks,
              into: &heaps[query])
          }
          r0 += rn
        }
      }
    }
    return heaps.map { $0.sorted().map(\.row) }
  }
}

/// int8 codes of the centroids (one scale per centroid) and the largest quantization error.
final class CentroidCodes: Sendable {
  let codes: [Int8]
  let scales: [Float]
  let sums: [Int32]
  let error: Float

  init(_ centroids: [Float], lists: Int, dimension: Int) {
    var codes = [Int8](repeating: 0, count: lists * dimension)
    var scales = [Float](repeating: 0, count: lists)
    var sums = [Int32](repeating: 0, count: lists)
    error = centroids.withUnsafeBufferPointer { source in
      codes.withUnsafeMutableBufferPointer { codes in
        scales.withUnsafeMutableBufferPointer { scales in
          sums.withUnsafeMutableBufferPointer { sums in
            engram_quantize_rows_i8(
              source.baseAddress!, lists, dimension, codes.baseAddress!, scales.baseAddress!,
              sums.baseAddress!)
          }
        }
      }
    }
    self.codes = codes
    self.scales = scales
    self.sums = sums
  }
}
