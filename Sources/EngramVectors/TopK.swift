/// A bounded heap keeping the best `capacity` (score, id) pairs seen; worst at the root.
///
/// Order: higher score first; equal scores by ascending id, so results are deterministic.
/// - Complexity: O(log k) per accepted candidate; rejected candidates cost one comparison
///   against `threshold`, so a scan of N rows is O(N + accepted · log k) ⊆ O(N log k).
struct TopK {
  let capacity: Int
  private(set) var scores: [Float] = []
  private(set) var ids: [Int64] = []
  private(set) var rows: [Int32] = []
  /// Scores below this cannot enter (−∞ until the heap is full).
  private(set) var threshold: Float = -.infinity

  init(capacity: Int) {
    self.capacity = capacity
    scores.reserveCapacity(capacity)
    ids.reserveCapacity(capacity)
    rows.reserveCapacity(capacity)
  }

  var count: Int { scores.count }

  @inline(__always) private func worse(_ a: Int, _ b: Int) -> Bool {
    scores[a] < scores[b] || (scores[a] == scores[b] && ids[a] > ids[b])
  }

  /// Offers a candidate; callers may skip candidates with `score < threshold`.
  mutating func offer(score: Float, id: Int64, row: Int32) {
    guard capacity > 0 else { return }
    if scores.count < capacity {
      scores.append(score)
      ids.append(id)
      rows.append(row)
      siftUp(scores.count - 1)
      if scores.count == capacity { threshold = scores[0] }
      return
    }
    // Full: enter only if better than the root (ties broken by smaller id).
    guard score > scores[0] || (score == scores[0] && id < ids[0]) else { return }
    scores[0] = score
    ids[0] = id
    rows[0] = row
    siftDown(0)
    threshold = scores[0]
  }

  private mutating func swapAt(_ a: Int, _ b: Int) {
    scores.swapAt(a, b)
    ids.swapAt(a, b)
    rows.swapAt(a, b)
  }

  private mutating func siftUp(_ index: Int) {
    var child = index
    while child > 0 {
      let parent = (child - 1) / 2
      guard worse(child, parent) else { return }
      swapAt(child, parent)
      child = parent
    }
  }

  /// Moves the entry at `index` down to its place: a hole walks down the worse children and
  /// the entry is written once where it stops, through the arrays' buffers (no per-step
  /// swaps of three arrays, each checking uniqueness and bounds).
  private mutating func siftDown(_ index: Int) {
    let n = scores.count
    scores.withUnsafeMutableBufferPointer { s in
      ids.withUnsafeMutableBufferPointer { d in
        rows.withUnsafeMutableBufferPointer { r in
          let score = s[index]
          let id = d[index]
          let row = r[index]
          var hole = index
          while true {
            let left = 2 * hole + 1
            guard left < n else { break }
            var worst = left
            let right = left + 1
            if right < n, s[right] < s[left] || (s[right] == s[left] && d[right] > d[left]) { worst = right }
            guard s[worst] < score || (s[worst] == score && d[worst] > id) else { break }
            s[hole] = s[worst]
            d[hole] = d[worst]
            r[hole] = r[worst]
            hole = worst
          }
          s[hole] = score
          d[hole] = id
          r[hole] = row
        }
      }
    }
  }

  /// Merges another heap's entries into this one.
  mutating func merge(_ other: TopK) {
    for index in 0..<other.count {
      offer(score: other.scores[index], id: other.ids[index], row: other.rows[index])
    }
  }

  /// Entries best first.
  func sorted() -> [(score: Float, id: Int64, row: Int32)] {
    (0..<count).map { (scores[$0], ids[$0], rows[$0]) }.sorted {
      $0.score > $1.score || ($0.score == $1.score && $0.id < $1.id)
    }
  }

  /// Hits best first.
  func hits() -> [VectorHit] {
    sorted().map { VectorHit(id: $0.id, score: $0.score) }
  }
}
