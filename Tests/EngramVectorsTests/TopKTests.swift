import EngramCore
import EngramTestSupport
import Testing

@testable import EngramVectors

@Suite("TopK", .timeLimit(.minutes(5)), .watchdog)
struct TopKTests {
  /// Offers with many tied scores (few distinct values) in scrambled id order: the heap keeps
  /// exactly the best `capacity` by score, ties by ascending id, whatever the offer order.
  @Test(arguments: [1, 2, 3, 10, 100])
  func keepsTheBestWithTiesByID(capacity: Int) {
    var random = SplitMix64(seed: UInt64(capacity) + 3)
    let count = 2000
    let entries = (0..<count).map { index in
      (score: Float(Int.random(in: 0..<40, using: &random)) / 8, id: Int64((index * 7919) % count))
    }
    var heap = TopK(capacity: capacity)
    for (row, entry) in entries.enumerated() {
      if entry.score >= heap.threshold { heap.offer(score: entry.score, id: entry.id, row: Int32(row)) }
    }
    let expected = entries.sorted { $0.score > $1.score || ($0.score == $1.score && $0.id < $1.id) }
      .prefix(capacity)
    #expect(heap.hits() == expected.map { VectorHit(id: $0.id, score: $0.score) })
    #expect(heap.sorted().allSatisfy { entries[Int($0.row)].id == $0.id })
    #expect(heap.threshold == expected.last?.score)
  }
}
