import CEngramKernels
import EngramCore
import EngramTestSupport
import Testing

@Suite("Threshold select kernel", .timeLimit(.minutes(5)), .watchdog)
struct SelectKernelTests {
  /// Positions the kernel must return: scores[i] >= threshold, in order (NaN never passes).
  static func reference(_ scores: [Float], _ threshold: Float) -> [Int32] {
    scores.indices.filter { scores[$0] >= threshold }.map { Int32($0) }
  }

  @Test(arguments: [0, 1, 15, 16, 17, 63, 64, 65, 130, 1024, 4099])
  func everyPathMatchesTheReference(length: Int) {
    var random = SplitMix64(seed: UInt64(length) + 77)
    var scores = (0..<length).map { _ in Float.random(in: -1...1, using: &random) }
    // Ties with the threshold pass; NaN and -inf never do.
    if length > 3 {
      scores[1] = 0.5
      scores[length - 1] = .nan
      scores[length / 2] = -.infinity
    }
    for threshold: Float in [-.infinity, -1, 0, 0.5, 0.99, 2] {
      let expected = Self.reference(scores, threshold)
      for path in 0...2 {
        var out = [Int32](repeating: -1, count: max(1, length))
        let count = engram_select_at_least_path(scores, length, threshold, &out, Int32(path))
        #expect(Array(out.prefix(count)) == expected, "path \(path) length \(length) threshold \(threshold)")
      }
    }
  }

  @Test func denseAndSparseHitsInOneBlock() {
    // All 64 of a block pass, then a single one: exercises the compress of every part.
    var scores = [Float](repeating: 1, count: 64) + [Float](repeating: 0, count: 64)
    scores[100] = 1
    for path in 0...2 {
      var out = [Int32](repeating: -1, count: scores.count)
      let count = engram_select_at_least_path(scores, scores.count, 1, &out, Int32(path))
      #expect(Array(out.prefix(count)) == Array(0..<64).map { Int32($0) } + [100], "path \(path)")
    }
  }
}
