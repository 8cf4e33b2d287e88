import CEngramKernels
import EngramCore
import EngramTestSupport
import Foundation
import Testing

/// Every SIMD level the CPU has, forced through the kernels' `_path` entry points, against the
/// scalar reference. Integer kernels and the select must match bit for bit; float32 kernels
/// within 2 · n · 2⁻²⁴ · Σ|aⱼbⱼ|, the most two summation orders of n products can differ
/// (each is within n · u · Σ|aⱼbⱼ| of the exact sum, u = 2⁻²⁴). Within one level, equal rows
/// score bit-equal on every loop. `scripts/kernels-test.sh` runs the same checks in C for
/// the NEON level under qemu-aarch64.
@Suite("Kernel dispatch levels", .timeLimit(.minutes(5)), .watchdog)
struct KernelDispatchTests {
  /// The levels this CPU runs: scalar up to the dispatch level.
  static let levels = Array(0...Int(engram_cpu_level()))

  static func bound(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
    let magnitude = zip(a, b).reduce(0.0) { $0 + abs(Double($1.0) * Double($1.1)) }
    return 2 * Double(a.count) * 0x1p-24 * magnitude + 1e-30
  }

  @Test func levelNamesRoundTrip() {
    #expect(engram_cpu_level_named("scalar") == 0)
    #expect(engram_cpu_level_named("avx-2") == -1)
    #expect(engram_cpu_level_named(nil) == -1)
    for level in Self.levels {
      let name = String(cString: engram_cpu_level_name(Int32(level)))
      #expect(engram_cpu_level_named(name) == Int32(level), "\(name)")
    }
    #if arch(x86_64)
      #expect(engram_cpu_level_named("avx2") == 1)
      #expect(engram_cpu_level_named("avx512") == 2)
      #expect(engram_cpu_level_named("neon") == -1)
    #endif
  }

  @Test(arguments: [1, 7, 8, 9, 16, 17, 33, 100, 384, 385])
  func float32RowsAtEveryLevel(dimension: Int) {
    var random = SplitMix64(seed: UInt64(dimension) + 9)
    let n = 13
    let query = random.vector(dimension)
    var rows = random.vectors(n, dimension)
    rows.replaceSubrange((5 * dimension)..<(6 * dimension), with: rows[(2 * dimension)..<(3 * dimension)])
    var reference = [Float](repeating: 0, count: n)
    engram_dot_f32_rows_path(query, rows, dimension, n, &reference, 0)
    let reversed = (0..<n).reversed().map { Int32($0) }
    for level in Self.levels {
      var scores = [Float](repeating: .nan, count: n)
      var gathered = [Float](repeating: .nan, count: n)
      engram_dot_f32_rows_path(query, rows, dimension, n, &scores, Int32(level))
      engram_dot_f32_gather_path(query, rows, dimension, reversed, n, &gathered, Int32(level))
      for i in 0..<n {
        let row = rows[(i * dimension)..<((i + 1) * dimension)]
        #expect(
          abs(Double(scores[i]) - Double(reference[i])) <= Self.bound(query[...], row),
          "level \(level) dim \(dimension) row \(i): \(scores[i]) vs \(reference[i])")
        #expect(gathered[n - 1 - i] == scores[i], "level \(level) dim \(dimension) row \(i) gathered")
      }
      #expect(scores[5] == scores[2], "level \(level): equal rows")
    }
  }

  /// A random int8 query and `n` rows of codes with their sums; the first two rows are the
  /// largest pairs (all 127, all -127).
  static func int8Rows(_ n: Int, _ dimension: Int, _ random: inout SplitMix64) -> (
    query: [Int8], codes: [Int8], sums: [Int32]
  ) {
    let query = (0..<dimension).map { _ in Int8.random(in: -127...127, using: &random) }
    var codes = (0..<(n * dimension)).map { _ in Int8.random(in: -127...127, using: &random) }
    codes.replaceSubrange(0..<dimension, with: repeatElement(127, count: dimension))
    codes.replaceSubrange(dimension..<(2 * dimension), with: repeatElement(-127, count: dimension))
    let sums = (0..<n).map { r in
      codes[(r * dimension)..<((r + 1) * dimension)].reduce(Int32(0)) { $0 + Int32($1) }
    }
    return (query, codes, sums)
  }

  @Test(arguments: [1, 31, 32, 33, 64, 65, 384, 385])
  func int8RowsAtEveryLevel(dimension: Int) {
    var random = SplitMix64(seed: UInt64(dimension) + 21)
    let n = 11
    let (query, codes, sums) = Self.int8Rows(n, dimension, &random)
    let expected = (0..<n).map { r in
      (0..<dimension).reduce(Int32(0)) { $0 + Int32(query[$1]) * Int32(codes[r * dimension + $1]) }
    }
    for level in Self.levels {
      var out = [Int32](repeating: 0, count: n)
      engram_dot_i8_rows_path(query, codes, dimension, n, sums, &out, Int32(level))
      #expect(out == expected, "level \(level) dim \(dimension)")
    }
  }

  /// The int8 scan (scores and the threshold test in one pass): at every level, the rows and
  /// scores of the row kernel's dots times the scales that reach the threshold, bit for bit.
  @Test(arguments: [1, 31, 33, 384, 385])
  func int8ScanAtEveryLevel(dimension: Int) {
    var random = SplitMix64(seed: UInt64(dimension) + 40)
    let n = 37
    let (query, codes, sums) = Self.int8Rows(n, dimension, &random)
    let scales = (0..<n).map { _ in Float.random(in: 0.0005...0.01, using: &random) }
    var dots = [Int32](repeating: 0, count: n)
    engram_dot_i8_rows_path(query, codes, dimension, n, sums, &dots, 0)
    let scores = (0..<n).map { Float(dots[$0]) * scales[$0] }
    let median = scores.sorted()[n / 2]
    for threshold in [-Float.infinity, median, Float.infinity] {
      let expected = (0..<n).filter { scores[$0] >= threshold }
      for level in Self.levels {
        for count in [n, n - 1] {
          var picks = [Int32](repeating: -1, count: n)
          var found = [Float](repeating: .nan, count: n)
          let picked = engram_scan_i8_rows_path(
            query, codes, dimension, count, sums, scales, threshold, &picks, &found, Int32(level))
          let want = expected.filter { $0 < count }
          #expect(picks.prefix(picked).map(Int.init) == want, "level \(level) dim \(dimension) n \(count)")
          #expect(
            found.prefix(picked).map(\.bitPattern) == want.map { scores[$0].bitPattern },
            "level \(level) dim \(dimension) n \(count) scores")
        }
      }
    }
  }

  @Test(arguments: [1, 3, 5, 9])
  func smallProductAtEveryLevel(m: Int) {
    var random = SplitMix64(seed: UInt64(m) + 5)
    for (n, k) in [(1, 1), (3, 17), (5, 384), (9, 33)] {
      let a = random.vectors(m, k)
      let w = random.vectors(n, k)
      var reference = [Float](repeating: 0, count: m * n)
      engram_gemm_nt_path(m, n, k, 1, a, k, w, k, &reference, n, 0)
      for level in Self.levels {
        var c = [Float](repeating: .nan, count: m * n)
        engram_gemm_nt_path(m, n, k, 1, a, k, w, k, &c, n, Int32(level))
        for i in 0..<m {
          for j in 0..<n {
            let tolerance = Self.bound(a[(i * k)..<((i + 1) * k)], w[(j * k)..<((j + 1) * k)])
            #expect(
              abs(Double(c[i * n + j]) - Double(reference[i * n + j])) <= tolerance,
              "level \(level) m \(m) n \(n) k \(k) at \(i),\(j)")
          }
        }
      }
    }
  }

  @Test func expAndErfMatchLibm() {
    var worstExp = 0.0
    var worstErf = 0.0
    for step in 0...20_000 {
      let x = -80 + Float(step) * 0.0044
      let want = Foundation.exp(Double(x))
      worstExp = max(worstExp, abs(Double(engram_exp_approx(x)) - want) / want)
      let y = -6 + Float(step) * 0.0006
      worstErf = max(worstErf, abs(Double(engram_erf_approx(y)) - Foundation.erf(Double(y))))
    }
    #expect(worstExp < 4e-7)
    #expect(worstErf < 6e-7)
  }

  /// Bias + GELU, softmax and residual + LayerNorm at every level against double-precision
  /// references (the bounds of `Tests/KernelsDriver/kernels_driver.c`).
  @Test(arguments: [1, 7, 8, 9, 16, 17, 33, 384])
  func elementwiseAtEveryLevel(width: Int) {
    var random = SplitMix64(seed: UInt64(width) + 77)
    let rows = 3
    let input = random.vectors(rows, width).map { $0 * 20 }
    let bias = random.vector(width)
    let other = random.vectors(rows, width)
    let gamma = random.vector(width).map { 1 + $0 }
    let beta = random.vector(width)
    for level in Self.levels {
      var gelu = input
      engram_bias_gelu_rows_path(&gelu, rows, width, width, bias, 1, Int32(level))
      var soft = input
      engram_softmax_rows_path(&soft, rows, width, Int32(level))
      var normed = [Float](repeating: .nan, count: rows * width)
      engram_add_layer_norm_path(input, other, &normed, rows, width, gamma, beta, 1e-12, Int32(level))
      for r in 0..<rows {
        let row = (r * width)..<((r + 1) * width)
        let top = Double(input[row].max()!)
        let total = input[row].reduce(0.0) { $0 + Foundation.exp(Double($1) - top) }
        let sums = row.map { Double(input[$0]) + Double(other[$0]) }
        let mean = sums.reduce(0, +) / Double(width)
        let scale =
          1 / (sums.reduce(0.0) { $0 + ($1 - mean) * ($1 - mean) } / Double(width) + 1e-12).squareRoot()
        for (j, at) in row.enumerated() {
          let v = Double(input[at]) + Double(bias[j])
          let wantGelu = 0.5 * v * (1 + Foundation.erf(v / 2.0.squareRoot()))
          #expect(abs(Double(gelu[at]) - wantGelu) <= 1e-6 * (1 + abs(v)), "gelu level \(level) at \(at)")
          let wantSoft = Foundation.exp(Double(input[at]) - top) / total
          #expect(abs(Double(soft[at]) - wantSoft) <= 1e-6, "softmax level \(level) at \(at)")
          let wantNorm = (sums[j] - mean) * scale * Double(gamma[j]) + Double(beta[j])
          let tolerance = 1e-5 * (1 + abs(Double(gamma[j])) + abs(Double(beta[j])))
          #expect(abs(Double(normed[at]) - wantNorm) <= tolerance, "layer norm level \(level) at \(at)")
        }
      }
    }
  }
}
