import CEngramKernels
import Synchronization

/// Where each row's int8 code sits in the lists (list and position), so a selective filter
/// can score exactly the rows it admits from their int8 codes instead of their float32 rows
/// (a quarter of the bytes gathered).
///
/// Built on the first selective filtered search of a list lineage and shared by its later
/// versions: lists only grow by appends, so a row's position never changes until `compact()`
/// renumbers the rows (`IVFState.remapped` starts a new locator). Rows appended after the
/// table was built are scored from float32 until they are an eighth of the table, when the
/// table is built again. Costs 8 bytes per row once built (counted in `IVFState.bytes`).
final class IVFRowLocator: Sendable {
  private let table = Mutex<[UInt64]?>(nil)

  static let missing = UInt64.max

  init() {}

  /// Bytes held by the table (0 until a filtered search builds it).
  var bytes: Int { table.withLock { ($0?.count ?? 0) * 8 } }

  /// The table for `ivf`: `slots[row]` is `list << 32 | position`, or `missing`; rows at and
  /// above `slots.count` are not covered.
  func slots(for ivf: IVFState) -> [UInt64] {
    table.withLock { current in
      if let current, current.count >= ivf.assignedRows - ivf.assignedRows / 8 { return current }
      var slots = [UInt64](repeating: Self.missing, count: ivf.assignedRows)
      for (list, entry) in ivf.lists.enumerated() {
        let rows = entry.storage.rows
        for position in 0..<entry.count {
          let row = Int(rows[position])
          guard row < slots.count else { continue }
          slots[row] = UInt64(list) << 32 | UInt64(position)
        }
      }
      current = slots
      return slots
    }
  }
}

extension VectorIndex {
  /// The exact top-`k` of the `allowed` rows (a selective filter's live rows): every allowed
  /// row scored by its int8 code in the lists, the best `k + 32` re-ranked in float32, and
  /// the result proven exact by the int8 error bound as `searchInt8` does (a second pass
  /// re-ranks every row whose bound reaches the k-th score when the first cannot prove it).
  /// - Complexity: O(allowed · dimension / 4 + (k + 32) · dimension).
  func searchAllowedInt8(
    _ version: IndexVersion, _ ivf: IVFState, query: UnsafePointer<Float>, k: Int, allowed: [Int32]
  ) -> VectorSearchResult {
    let dimension = self.dimension
    var codes = [Int8](repeating: 0, count: dimension)
    var scale: Float = 0
    var codeSum: Int32 = 0
    let queryError = codes.withUnsafeMutableBufferPointer {
      engram_quantize_rows_i8(query, 1, dimension, $0.baseAddress!, &scale, &codeSum)
    }
    let slots = ivf.locator.slots(for: ivf)
    let rows = version.rows
    // int8 scores (without the query's scale) of the allowed rows, -inf for rows without a
    // code in the lists (scored from float32 below).
    var int8Scores = [Float](repeating: -.infinity, count: allowed.count)
    var uncoded: [Int32] = []
    let poolCapacity = min(allowed.count, k + 32)
    var pool = TopK(capacity: poolCapacity)
    codes.withUnsafeBufferPointer { codes in
      for (index, row32) in allowed.enumerated() {
        let row = Int(row32)
        guard row < ivf.assignedRows, row < slots.count, slots[row] != IVFRowLocator.missing else {
          uncoded.append(row32)
          continue
        }
        let list = Int(slots[row] >> 32)
        let position = Int(slots[row] & 0xFFFF_FFFF)
        let storage = ivf.lists[list].storage
        var dot: Int32 = 0
        engram_dot_i8_rows(
          codes.baseAddress!, storage.codes + position * dimension, dimension, 1, storage.sums + position,
          &dot)
        let score = Float(dot) * storage.scales[position]
        int8Scores[index] = score
        if score >= pool.threshold { pool.offer(score: score, id: rows.ids[row], row: row32) }
      }
    }
    var candidates = pool.sorted().map(\.row)
    candidates.append(contentsOf: uncoded)
    var exact = TopK(capacity: min(k, candidates.count))
    candidates.withUnsafeBufferPointer { Self.scoreGathered(version, query: query, rows: $0, into: &exact) }
    let kth = exact.count == k ? exact.threshold : -Float.infinity
    let bound = ivf.codeError + queryError * (1 + ivf.codeError) + 1e-4
    if pool.count < poolCapacity || pool.count == allowed.count - uncoded.count
      || scale * pool.threshold + bound < kth
    {
      return VectorSearchResult(hits: exact.hits(), tier: .exact, isExact: true)
    }
    // Rows crowd around the k-th score: re-rank every row whose int8 bound reaches it.
    let cut = (kth - bound) / scale
    var admitted = uncoded
    for (index, score) in int8Scores.enumerated() where score >= cut { admitted.append(allowed[index]) }
    var second = TopK(capacity: min(k, admitted.count))
    admitted.withUnsafeBufferPointer { Self.scoreGathered(version, query: query, rows: $0, into: &second) }
    return VectorSearchResult(hits: second.hits(), tier: .exact, isExact: true)
  }
}
