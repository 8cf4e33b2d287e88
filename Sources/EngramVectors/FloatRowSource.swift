import CEngramKernels

/// Where an index reads float32 rows it does not hold: the store the rows came from (its
/// source of truth), for an index opened from a snapshot of int8 codes
/// (`SnapshotContent.codes`).
///
/// The index asks for the few rows it re-ranks (the int8 candidates), never for a scan.
public protocol FloatRowSource: Sendable {
  /// The float32 vector of each of `ids`, in order, or nil for an id the source no longer
  /// holds (a row deleted since the index last heard of it is then left out of the hits).
  /// The vectors need not be normalized: the index normalizes them as it does on insert, so
  /// the scores are bit-equal to those of an index holding the rows.
  /// - Throws: whatever the source fails with; the search fails with
  ///   `VectorIndexError.floatRowsUnavailable`.
  func floatRows(for ids: [Int64]) throws -> [[Float]?]
}

extension VectorIndex {
  /// Scores `list` exactly in float32 into `heap`: rows held in memory through the gather
  /// kernel, floatless rows (see `RowStore.floatless`) read from the source first.
  /// - Throws: `.floatRowsUnavailable` when the source fails or there is none.
  func scoreExactly(
    _ version: IndexVersion, query: UnsafePointer<Float>, rows list: [Int32], into heap: inout TopK
  ) throws(VectorIndexError) {
    let rows = version.rows
    guard rows.floatless > 0 else {
      list.withUnsafeBufferPointer { Self.scoreGathered(version, query: query, rows: $0, into: &heap) }
      return
    }
    var held: [Int32] = []
    var fetched: [Int32] = []
    held.reserveCapacity(list.count)
    for row in list {
      if rows.holdsFloats(Int(row)) { held.append(row) } else { fetched.append(row) }
    }
    held.withUnsafeBufferPointer { Self.scoreGathered(version, query: query, rows: $0, into: &heap) }
    guard !fetched.isEmpty else { return }
    let (found, unit) = try fetchUnitRows(version, rows: fetched)
    var scores = [Float](repeating: 0, count: found.count)
    unit.withUnsafeBufferPointer { unit in
      scores.withUnsafeMutableBufferPointer { scores in
        // The row kernel: bit-equal scores to a scan of the same rows held in memory.
        engram_dot_f32_rows(query, unit.baseAddress!, dimension, found.count, scores.baseAddress!)
      }
    }
    for (index, row) in found.enumerated() where scores[index] >= heap.threshold {
      heap.offer(score: scores[index], id: rows.ids[Int(row)], row: row)
    }
  }

  /// The float32 rows of floatless `rows`, unit-normalized as an insert would, row-major;
  /// rows the source no longer holds (or holds as a vector the index could not) are left out.
  func fetchUnitRows(_ version: IndexVersion, rows list: [Int32]) throws(VectorIndexError) -> (
    rows: [Int32], vectors: [Float]
  ) {
    guard !list.isEmpty else { return ([], []) }
    guard let rowSource else { throw .floatRowsUnavailable(reason: "the index has no float row source") }
    let dimension = self.dimension
    let ids = list.map { version.rows.ids[Int($0)] }
    let vectors: [[Float]?]
    do {
      vectors = try rowSource.floatRows(for: ids)
    } catch {
      throw .floatRowsUnavailable(reason: String(describing: error))
    }
    guard vectors.count == ids.count else {
      throw .floatRowsUnavailable(reason: "the source returned \(vectors.count) rows for \(ids.count) ids")
    }
    var found: [Int32] = []
    var unit = [Float](repeating: 0, count: list.count * dimension)
    found.reserveCapacity(list.count)
    unit.withUnsafeMutableBufferPointer { unit in
      for (index, vector) in vectors.enumerated() {
        guard let vector, vector.count == dimension else { continue }
        var badRow = 0
        var badColumn = 0
        let status = vector.withUnsafeBufferPointer {
          engram_normalize_rows(
            $0.baseAddress!, unit.baseAddress! + found.count * dimension, 1, dimension, &badRow, &badColumn)
        }
        if status == 0 { found.append(list[index]) }
      }
    }
    unit.removeLast((list.count - found.count) * dimension)
    return (found, unit)
  }

  /// Reads the float32 rows of a floatless store's prefix from the source into its
  /// `vectors` slots (once), so the approximate tier can cluster and calibrate over every
  /// row; returns false when some row cannot be read (the tier is then not built).
  func hydrate(_ version: IndexVersion) -> Bool {
    let rows = version.rows
    guard rows.floatless > 0 else { return true }
    return rows.hydrated.withLock { hydrated -> Bool in
      if hydrated { return true }
      let chunk = 4096
      var start = 0
      while start < rows.floatless {
        let end = min(rows.floatless, start + chunk)
        // Tombstoned rows may be gone from the source: their codes scaled back stand in (a
        // clustering only places them; searches skip them).
        for row in start..<end where version.isDead(row) {
          let codes = rows.codes + row * dimension
          let scale = rows.scales[row]
          let target = rows.vector(row)
          for component in 0..<dimension { target[component] = Float(codes[component]) * scale }
        }
        let list = (start..<end).filter { !version.isDead($0) }.map { Int32($0) }
        guard let (found, unit) = try? fetchUnitRows(version, rows: list), found.count == list.count else {
          return false
        }
        unit.withUnsafeBufferPointer { unit in
          for (index, row) in found.enumerated() {
            rows.vector(Int(row)).update(from: unit.baseAddress! + index * dimension, count: dimension)
          }
        }
        start = end
      }
      hydrated = true
      return true
    }
  }
}
