import CEngramKernels
import EngramTestSupport
import Foundation
import Testing

/// `engram_attention_head`, one head's scaled dot-product attention as the forward pass runs it.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct AttentionKernelTests {
  /// Deterministic values in [-spread / 2, spread / 2).
  private func values(_ count: Int, seed: UInt64, spread: Float) -> [Float] {
    var state = seed
    return (0..<count).map { _ in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return (Float(state >> 40) / Float(1 << 24) - 0.5) * spread
    }
  }

  /// softmax(scale · q kᵀ) v in double precision, for the head at column `column`.
  private func reference(
    q: [Float], k: [Float], v: [Float], n: Int, d: Int, ld: Int, column: Int, scale: Double
  ) -> [[Double]] {
    (0..<n).map { i in
      let scores = (0..<n).map { j in
        (0..<d).reduce(0.0) { $0 + Double(q[i * ld + column + $1]) * Double(k[j * ld + column + $1]) } * scale
      }
      let top = scores.max()!
      let weights = scores.map { exp($0 - top) }
      let total = weights.reduce(0, +)
      return (0..<d).map { p in
        (0..<n).reduce(0.0) { $0 + weights[$1] * Double(v[$1 * ld + column + p]) } / total
      }
    }
  }

  @Test(
    "every level matches the definition, and leaves the other heads' columns alone",
    arguments: [
      (1, 32), (2, 32), (3, 32), (5, 32), (17, 32), (70, 32), (129, 32), (256, 32), (9, 16), (33, 64),
    ])
  func everyLevelMatchesTheDefinition(shape: (n: Int, d: Int)) throws {
    let (n, d) = shape
    let heads = 3
    let ld = heads * d + 5
    // Scores up to about ±20 before the softmax, as BERT's attention reaches.
    let q = values(n * ld, seed: 1, spread: 4)
    let k = values(n * ld, seed: 2, spread: 4)
    let v = values(n * ld, seed: 3, spread: 1)
    let scale = 1 / Float(d).squareRoot()
    var scratch = [Float](repeating: 0, count: engram_attention_scratch(n, d))
    var ran = 0
    for level in 0...2 {
      var out = [Float](repeating: .nan, count: n * ld)
      let column = d  // the middle head
      let done = q.withUnsafeBufferPointer { q in
        k.withUnsafeBufferPointer { k in
          v.withUnsafeBufferPointer { v in
            out.withUnsafeMutableBufferPointer { out in
              engram_attention_head_path(
                q.baseAddress! + column, k.baseAddress! + column, v.baseAddress! + column,
                out.baseAddress! + column, n, d, ld, scale, &scratch, Int32(level))
            }
          }
        }
      }
      if level == 0 { #expect(done == 1, "the portable level always runs") }
      guard done == 1 else { continue }
      ran += 1
      let exact = reference(q: q, k: k, v: v, n: n, d: d, ld: ld, column: column, scale: Double(scale))
      for i in 0..<n {
        for p in 0..<d {
          #expect(abs(Double(out[i * ld + column + p]) - exact[i][p]) <= 5e-5, "level \(level) [\(i), \(p)]")
        }
        for p in 0..<ld where p < column || p >= column + d {
          #expect(out[i * ld + p].isNaN, "level \(level) wrote column \(p) of row \(i)")
        }
      }
    }
    #expect(ran >= 1)
  }

  @Test func theDispatchedKernelRunsOnAVX512ForBERTHeads() {
    // On an AVX-512 host the forward pass must take the kernel, not BLAS, for 32-wide heads.
    guard engram_cpu_level() >= 2 else { return }
    let (n, d) = (70, 32)
    let q = values(n * d, seed: 4, spread: 2)
    var out = [Float](repeating: 0, count: n * d)
    var scratch = [Float](repeating: 0, count: engram_attention_scratch(n, d))
    #expect(engram_attention_head(q, q, q, &out, n, d, d, 0.25, &scratch) == 1)
    let finite = out.allSatisfy { $0.isFinite }
    #expect(finite)
  }
}
