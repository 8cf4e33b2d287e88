import CEngramKernels
import EngramTestSupport
import Testing

/// `engram_gemm_nt_small`, the unpacked product the forward pass uses for short inputs.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct SmallProductTests {
  /// Deterministic values in [-0.5, 0.5).
  private func values(_ count: Int, seed: UInt64) -> [Float] {
    var state = seed
    return (0..<count).map { _ in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Float(state >> 40) / Float(1 << 24) - 0.5
    }
  }

  @Test(arguments: [
    (1, 1, 1), (3, 5, 7), (4, 4, 16), (5, 9, 33), (11, 6, 384), (24, 13, 1536), (7, 3, 32), (6, 40, 100),
  ])
  func everyPathMatchesTheDefinition(shape: (m: Int, n: Int, k: Int)) throws {
    let (m, n, k) = shape
    // Leading dimensions wider than k and n, as in the per-head attention products.
    let lda = k + 3
    let ldw = k + 5
    let ldc = n + 2
    let a = values(m * lda, seed: 1)
    let w = values(n * ldw, seed: 2)
    let alpha: Float = 0.75
    for path in 0...2 {
      var c = [Float](repeating: .nan, count: m * ldc)
      engram_gemm_nt_path(m, n, k, alpha, a, lda, w, ldw, &c, ldc, Int32(path))
      for i in 0..<m {
        for j in 0..<n {
          var exact = 0.0
          for p in 0..<k { exact += Double(a[i * lda + p]) * Double(w[j * ldw + p]) }
          exact *= Double(alpha)
          #expect(
            abs(Double(c[i * ldc + j]) - exact) <= 1e-5 * Double(k).squareRoot(), "path \(path) [\(i), \(j)]")
        }
        // Columns past n are left alone.
        for j in n..<ldc { #expect(c[i * ldc + j].isNaN) }
      }
    }
  }

  @Test func theDispatchedPathAgreesWithThePortableOne() {
    let (m, n, k) = (9, 10, 384)
    let a = values(m * k, seed: 3)
    let w = values(n * k, seed: 4)
    var fast = [Float](repeating: 0, count: m * n)
    var portable = [Float](repeating: 0, count: m * n)
    engram_gemm_nt_small(m, n, k, 1, a, k, w, k, &fast, n)
    engram_gemm_nt_path(m, n, k, 1, a, k, w, k, &portable, n, 0)
    let largest = zip(fast, portable).map { abs($0 - $1) }.max() ?? .infinity
    #expect(largest < 1e-4)
  }
}
