import CEngramKernels
import Dispatch
import EngramCore

extension VectorIndex {
  /// The `k` live rows most similar to `query`, with the tier that answered and whether the
  /// hits are proven exact.
  ///
  /// With `exact: false`, an index holding at least `configuration.approximate.threshold`
  /// live rows whose lists are built probes the calibrated number of lists nearest the
  /// query (int8 codes, then an exact float32 re-rank of the best candidates). A filter is
  /// applied while the lists are read, and more lists are probed until `k` admitted rows
  /// are found, so a filtered search returns `k` hits whenever `k` rows match; a filter
  /// admitting few rows scores exactly the rows it admits instead. `exact: true` always
  /// scans every admitted row (what `search(_:k:filter:)` does below the threshold).
  /// - Throws: as `search(_:k:filter:)`.
  /// - Complexity: approximate: O(lists · dimension + probes · (n / lists) · dimension / 4);
  ///   exact: as `search(_:k:filter:)`.
  public func search(_ query: [Float], k: Int, filter: VectorFilter? = nil, exact: Bool)
    throws(VectorIndexError)
    -> VectorSearchResult
  {
    guard k >= 1 else { throw .invalidK(k) }
    let unit = try normalizedQueries(query, count: 1)
    let version = try trustedSnapshot()
    return try unit.withUnsafeBufferPointer { pointer throws(VectorIndexError) in
      let query = pointer.baseAddress!
      if !exact, let ivf = version.ivf, servesApproximately(version) {
        return try searchApproximate(version, ivf, query: query, k: k, filter: filter)
      }
      return VectorSearchResult(
        hits: try searchOne(version, query: query, k: k, filter: filter), tier: .exact, isExact: true)
    }
  }

  /// The approximate tier's state, or nil while its lists are not built.
  public var approximateStatus: ApproximateIndexStatus? {
    let version = snapshot()
    guard let ivf = version.ivf else { return nil }
    return ApproximateIndexStatus(
      serving: servesApproximately(version), lists: ivf.listCount, probes: ivf.probes,
      targetRecall: ivf.targetRecall, calibratedRecall: ivf.calibratedRecall,
      clusteredRows: ivf.clusteredRows,
      appendedRows: ivf.appendedRows, bytes: ivf.bytes)
  }

  /// Clusters the current live rows into new lists, calibrates them and publishes them; rows
  /// written meanwhile join the new lists. Searches keep using the previous lists (or the
  /// exact scan) until then; only the final publish waits for other writers.
  ///
  /// Called by the index itself when the live rows reach the threshold or the lists drift
  /// (see `ApproximateConfiguration.build`); callers may also call it directly.
  /// - Complexity: see `IVFState.build`: seconds for a million rows of 384 components.
  public func rebuildApproximateIndex() {
    // Lists are never clustered from a snapshot's damaged rows (the engine rebuilds the
    // index from its table when a search finds them).
    guard let base = try? trustedSnapshot() else { return }
    // Clustering reads every row: a floatless index reads its rows from the source first.
    guard hydrate(base), let built = IVFState.build(base, settings: configuration.approximate) else { return }
    _ = try? write { version throws(VectorIndexError) in
      // A compaction in between renumbered the rows: the next write starts another build.
      guard version.rowEpoch == base.rowEpoch, version.count >= base.count else { return }
      var state = built
      state.appendedRows = version.count - base.count
      state.assign(version.rows, range: base.count..<version.count)
      version.ivf = state
    }
  }

  func servesApproximately(_ version: IndexVersion) -> Bool {
    configuration.approximate.enabled && version.ivf != nil
      && version.live >= configuration.approximate.threshold
  }

  /// After a write: starts a build when the live rows reached the threshold without lists, or
  /// a re-clustering when the lists drifted.
  func maintainApproximate() {
    let settings = configuration.approximate
    guard settings.enabled else { return }
    let version = snapshot()
    guard version.live >= settings.threshold, version.ivf?.drifted ?? true else { return }
    switch settings.build {
    case .manual: return
    case .inline:
      rebuildApproximateIndex()
      return
    case .background: break
    }
    guard
      approximateBuilding.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        .exchanged
    else { return }
    approximateWork.enter()
    DispatchQueue.global(qos: .utility).async { [self] in
      rebuildApproximateIndex()
      approximateBuilding.store(false, ordering: .releasing)
      approximateWork.leave()
    }
  }

  /// Waits until a background build of the approximate lists (started by a write, see
  /// `ApproximateConfiguration.build`) has published them; returns at once when none runs.
  /// Call it before a process exits: the build's BLAS threads must not be running while the
  /// process tears down, and lists finished before the snapshot is written are saved with
  /// it, so the next process serves from them instead of building again.
  /// It blocks the calling thread: async code uses ``approximateBuildFinished()``.
  public func waitForApproximateBuild() {
    approximateWork.wait()
  }

  /// ``waitForApproximateBuild()`` for async callers: suspends (no thread waits) until a
  /// background build has published its lists; returns at once when none runs.
  public func approximateBuildFinished() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      approximateWork.notify(queue: .global(qos: .utility)) { continuation.resume() }
    }
  }

  /// Probes the nearest lists; see `search(_:k:filter:exact:)`.
  func searchApproximate(
    _ version: IndexVersion, _ ivf: IVFState, query: UnsafePointer<Float>, k: Int, filter: VectorFilter?
  ) throws(VectorIndexError) -> VectorSearchResult {
    guard version.live > 0 else { return VectorSearchResult(hits: [], tier: .approximate, isExact: true) }
    let dimension = self.dimension
    let listCount = ivf.listCount
    var predicate: RowPredicate? = nil
    var probes = ivf.probes
    if let filter, !filter.isEmpty {
      // Few admitted rows (at most 2% of the rows, or 4x the rows a probe reads): scoring them
      // all costs about what probing for them does, and is exact. The true filtered top-k
      // ranks deep in the unfiltered order (about k / fraction), beyond the calibrated lists.
      let allowed = version.allowedRows(filter)
      let probedRows = ivf.probes * max(1, version.count / listCount)
      if allowed.count <= max(probedRows * 4, version.live / 50) {
        if version.rows.floatless > 0 {
          // Float32 rows come from the source: the proven int8 search reads only candidates.
          return VectorSearchResult(
            hits: try searchInt8(version, query: query, k: k, among: allowed), tier: .exact, isExact: true)
        }
        var heap = TopK(capacity: min(k, allowed.count))
        allowed.withUnsafeBufferPointer { Self.scoreGathered(version, query: query, rows: $0, into: &heap) }
        return VectorSearchResult(hits: heap.hits(), tier: .exact, isExact: true)
      }
      predicate = RowPredicate(filter)
      // More admitted rows: probe more lists as the filter thins them (a heuristic: the
      // calibrated count over the square root of the admitted fraction).
      let fraction = Double(allowed.count) / Double(max(1, version.live))
      probes = min(listCount, Int((Double(ivf.probes) / fraction.squareRoot()).rounded(.up)))
    }

    var codes = [Int8](repeating: 0, count: dimension)
    var scale: Float = 0
    var codeSum: Int32 = 0
    let queryError = codes.withUnsafeMutableBufferPointer {
      engram_quantize_rows_i8(query, 1, dimension, $0.baseAddress!, &scale, &codeSum)
    }
    // Lists ranked by int8 centroid scores; `centroidSlack` bounds their error (as in
    // `searchInt8`), so the exactness bound below stays a bound.
    let centroidCodes = ivf.centroidCodes
    var centroidScores = [Float](repeating: 0, count: listCount)
    codes.withUnsafeBufferPointer { codes in
      centroidCodes.codes.withUnsafeBufferPointer { centroids in
        centroidCodes.sums.withUnsafeBufferPointer { sums in
          withUnsafeTemporaryAllocation(of: Int32.self, capacity: listCount) { dots in
            engram_dot_i8_rows(
              codes.baseAddress!, centroids.baseAddress!, dimension, listCount, sums.baseAddress!,
              dots.baseAddress!)
            for list in 0..<listCount {
              centroidScores[list] = Float(dots[list]) * centroidCodes.scales[list] * scale
            }
          }
        }
      }
    }
    let centroidSlack = centroidCodes.error + queryError * (1 + centroidCodes.error) + 1e-4
    var nearest = TopK(capacity: min(probes, listCount))
    for list in 0..<listCount where centroidScores[list] >= nearest.threshold {
      nearest.offer(score: centroidScores[list], id: Int64(list), row: Int32(list))
    }

    // The int8 order is close to exact: k + 32 candidates re-ranked exactly lose almost
    // nothing (measured), and cost less than the `k * rerankFactor` the exact int8 scan uses.
    let poolCapacity = min(version.live, k + 32)
    var pool = TopK(capacity: poolCapacity)
    var probed = [Bool](repeating: false, count: listCount)
    var probedCount = 0
    codes.withUnsafeBufferPointer { codes in
      withUnsafeTemporaryAllocation(of: Float.self, capacity: scoreBlock) { scores in
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: scoreBlock) { dots in
          version.dead.withUnsafeBufferPointer { dead in
            func probe(_ list: Int) {
              probed[list] = true
              probedCount += 1
              Self.probe(
                ivf.lists[list], version: version, queryCodes: codes.baseAddress!, dead: dead,
                predicate: predicate, scores: scores.baseAddress!, dots: dots.baseAddress!, into: &pool)
            }
            for entry in nearest.sorted() { probe(Int(entry.row)) }
            // Too few admitted rows in the nearest lists: go on in centroid order.
            if pool.count < k, probedCount < listCount {
              let rest = (0..<listCount).filter { !probed[$0] }.sorted {
                centroidScores[$0] > centroidScores[$1]
              }
              for list in rest {
                probe(list)
                if pool.count >= k { break }
              }
            }
          }
        }
      }
    }

    let candidates = pool.sorted().map(\.row)
    var exact = TopK(capacity: min(k, candidates.count))
    // Float32 rows a floatless index does not hold are read from its source.
    try scoreExactly(version, query: query, rows: candidates, into: &exact)

    // Proof of exactness: no row of an unprobed list can score above its centroid's score
    // plus the list's radius, and no scanned row left out of the pool above the pool's worst
    // int8 score plus the quantization bound (as in `searchInt8`).
    let kth = exact.count == k ? exact.threshold : -Float.infinity
    var unprobedBest = -Float.infinity
    for list in 0..<listCount where !probed[list] {
      unprobedBest = max(unprobedBest, centroidScores[list] + centroidSlack + ivf.radii[list])
    }
    let listsProven = probedCount == listCount || unprobedBest + 1e-4 < kth
    let bound = ivf.codeError + queryError * (1 + ivf.codeError) + 1e-4
    let poolProven = pool.count < poolCapacity || scale * pool.threshold + bound < kth
    guard listsProven, !poolProven else {
      return VectorSearchResult(hits: exact.hits(), tier: .approximate, isExact: listsProven && poolProven)
    }
    // The lists are proven but rows crowd around the k-th score (a tight cluster): score
    // exactly every probed row whose int8 bound reaches it, as `searchInt8`'s second pass.
    let cut = (kth - bound) / scale
    var admitted: [Int32] = []
    codes.withUnsafeBufferPointer { codes in
      withUnsafeTemporaryAllocation(of: Float.self, capacity: scoreBlock) { scores in
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: scoreBlock) { dots in
          version.dead.withUnsafeBufferPointer { dead in
            for list in 0..<listCount where probed[list] {
              let entry = ivf.lists[list]
              let storage = entry.storage
              var start = 0
              while start < entry.count {
                let count = min(scoreBlock, entry.count - start)
                engram_dot_i8_rows(
                  codes.baseAddress!, storage.codes + start * dimension, dimension, count,
                  storage.sums + start,
                  dots.baseAddress!)
                for j in 0..<count { scores[j] = Float(dots[j]) * storage.scales[start + j] }
                let picked = engram_select_at_least(scores.baseAddress!, count, cut, dots.baseAddress!)
                for index in 0..<picked {
                  let row = Int(storage.rows[start + Int(dots[index])])
                  if (dead[row >> 6] >> UInt64(row & 63)) & 1 != 0 { continue }
                  if let predicate, !predicate.admits(version.rows, row) { continue }
                  admitted.append(Int32(row))
                }
                start += count
              }
            }
          }
        }
      }
    }
    // Pool rows left out of `exact` rank below its k-th: only the others are scored.
    let scored = Set(candidates)
    var second = exact
    try scoreExactly(version, query: query, rows: admitted.filter { !scored.contains($0) }, into: &second)
    return VectorSearchResult(hits: second.hits(), tier: .approximate, isExact: true)
  }

  /// Offers the live, admitted rows of `list` whose int8 scores reach the pool's threshold.
  @inline(__always)
  static func probe(
    _ list: IVFList, version: IndexVersion, queryCodes: UnsafePointer<Int8>,
    dead: UnsafeBufferPointer<UInt64>,
    predicate: RowPredicate?, scores: UnsafeMutablePointer<Float>, dots: UnsafeMutablePointer<Int32>,
    into pool: inout TopK
  ) {
    let storage = list.storage
    let dimension = storage.dimension
    let rows = version.rows
    var start = 0
    while start < list.count {
      let count = min(scoreBlock, list.count - start)
      engram_dot_i8_rows(
        queryCodes, storage.codes + start * dimension, dimension, count, storage.sums + start, dots)
      let scales = storage.scales + start
      for j in 0..<count { scores[j] = Float(dots[j]) * scales[j] }
      // `dots` is free again: it takes the positions that pass.
      let picked = engram_select_at_least(scores, count, pool.threshold, dots)
      for index in 0..<picked {
        let j = Int(dots[index])
        guard scores[j] >= pool.threshold else { continue }
        let row = Int(storage.rows[start + j])
        if (dead[row >> 6] >> UInt64(row & 63)) & 1 != 0 { continue }
        if let predicate, !predicate.admits(rows, row) { continue }
        pool.offer(score: scores[j], id: rows.ids[row], row: Int32(row))
      }
      start += count
    }
  }
}

/// A filter checked row by row against the metadata columns (the approximate tier reads
/// rows list by list, not from posting lists).
struct RowPredicate {
  let kindMask: UInt8
  let filter: VectorFilter

  init(_ filter: VectorFilter) {
    self.filter = filter
    kindMask = filter.kinds.map { $0.reduce(0) { $0 | (1 << $1) } } ?? 0xFF
  }

  @inline(__always) func admits(_ rows: RowStore, _ row: Int) -> Bool {
    guard kindMask & (1 << rows.kinds[row]) != 0 else { return false }
    if let sessions = filter.sessions, !sessions.contains(rows.sessions[row]) { return false }
    if let scopes = filter.scopes, !scopes.contains(rows.scopes[row]) { return false }
    if let range = filter.timeRange, !range.contains(rows.timestamps[row]) { return false }
    if let ids = filter.ids, !ids.contains(rows.ids[row]) { return false }
    return true
  }
}

extension IndexVersion {
  /// The lists after `compacted` keeps the live rows in order (nil without lists).
  func compactedIVF() -> IVFState? {
    guard let ivf else { return nil }
    var newRow = [Int32](repeating: -1, count: count)
    var next: Int32 = 0
    for row in 0..<count where !isDead(row) {
      newRow[row] = next
      next += 1
    }
    return ivf.remapped(newRow)
  }

  /// Appends rows not yet in the lists (written by an insert) to their nearest lists.
  mutating func assignNewRows() {
    guard var state = ivf, state.assignedRows < count else { return }
    let range = state.assignedRows..<count
    ivf = nil  // keep the lists' storage uniquely referenced while appending
    state.appendedRows += range.count
    state.assign(rows, range: range)
    ivf = state
  }
}

extension VectorIndex {
  /// Re-calibrates the probe count of the current lists to `targetRecall` (no re-clustering)
  /// and returns the new status, or nil when no lists are built.
  /// - Throws: `.invalidConfiguration` when `targetRecall` is not in (0, 1].
  /// - Complexity: O(calibrationQueries · n · dimension), in GEMM blocks.
  @discardableResult
  public func calibrateApproximate(targetRecall: Double) throws(VectorIndexError) -> ApproximateIndexStatus? {
    var settings = configuration.approximate
    settings.targetRecall = targetRecall
    try settings.validate()
    let queries = settings.calibrationQueries
    try write { version throws(VectorIndexError) in
      guard var state = version.ivf, hydrate(version) else { return }
      var pool: [Int32] = []
      pool.reserveCapacity(version.live)
      for row in 0..<version.count where !version.isDead(row) { pool.append(Int32(row)) }
      var random = SplitMix64(seed: 0x4341_4C49_4252_4154 ^ UInt64(pool.count))
      state.targetRecall = targetRecall
      state.calibrate(version, queries: queries, pool: pool, random: &random)
      version.ivf = state
    }
    return approximateStatus
  }
}
