import CEngramKernels
import EngramTestSupport
import Testing

/// `engram_qgemm_*` and `engram_quantize_rows`: the int8 products of the embedders' linear
/// layers. Integer results must be equal bit for bit on every SIMD level (they are exact), and
/// equal to the product of the codes computed here from the packed layout's definition.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct QuantizedProductTests {
  /// Deterministic values in [-0.5, 0.5) times `scale`.
  private func values(_ count: Int, seed: UInt64, scale: Float = 1) -> [Float] {
    var state = seed
    return (0..<count).map { _ in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return (Float(state >> 40) / Float(1 << 24) - 0.5) * scale
    }
  }

  /// The levels this machine runs (a level above it runs at it, and would compare it with itself).
  private var levels: [Int32] { Array(0...engram_cpu_level()) }

  private struct Packed {
    var codes: [Int8]
    var scales: [Float]
    var sums: [Int32]
  }

  private func pack(_ w: [Float], n: Int, k: Int) -> Packed {
    let rows = engram_qgemm_padded_outputs(n)
    var packed = Packed(
      codes: [Int8](repeating: 99, count: engram_qgemm_packed_bytes(n, k)),
      scales: [Float](repeating: 0, count: rows), sums: [Int32](repeating: 0, count: rows))
    engram_qgemm_pack(w, n, k, k, &packed.codes, &packed.scales, &packed.sums)
    return packed
  }

  /// Code (row j, input p) of a packed matrix, read by the layout's definition.
  private func code(_ packed: Packed, j: Int, p: Int, k: Int) -> Int8 {
    let kp = engram_qgemm_padded_inputs(k)
    return packed.codes[(j / 16) * 16 * kp + (p / 4) * 64 + (j % 16) * 4 + p % 4]
  }

  @Test(arguments: [
    (1, 1, 1), (3, 5, 7), (6, 16, 4), (7, 17, 33), (13, 64, 384), (25, 100, 70), (2, 129, 1536),
  ])
  func everyLevelGivesTheExactIntegerProducts(shape: (m: Int, n: Int, k: Int)) {
    let (m, n, k) = shape
    let kp = engram_qgemm_padded_inputs(k)
    let x = values(m * k, seed: 1, scale: 6)
    let packed = pack(values(n * k, seed: 2), n: n, k: k)
    var codes = [Int8](repeating: 0, count: m * kp)
    var scales = [Float](repeating: 0, count: m)
    engram_quantize_rows_path(x, m, k, k, &codes, kp, &scales, 0)
    // The definition: codes round(x * 127 / max|x|), sums of code products.
    for i in 0..<m {
      let largest = (0..<k).map { abs(x[i * k + $0]) }.max() ?? 0
      #expect(scales[i] == largest / 127)
      for p in 0..<k {
        #expect(codes[i * kp + p] == Int8((x[i * k + p] * (127 / largest)).rounded(.toNearestOrEven)))
      }
    }
    var expected = [Int32](repeating: 0, count: m * n)
    for i in 0..<m {
      for j in 0..<n {
        expected[i * n + j] = (0..<k).reduce(Int32(0)) {
          $0 + Int32(codes[i * kp + $1]) * Int32(code(packed, j: j, p: $1, k: k))
        }
      }
    }
    var reference: [Float] = []
    for level in levels {
      var levelCodes = [Int8](repeating: 1, count: m * kp)
      var levelScales = [Float](repeating: 0, count: m)
      engram_quantize_rows_path(x, m, k, k, &levelCodes, kp, &levelScales, level)
      #expect(levelCodes == codes, "level \(level) quantizes differently")
      #expect(levelScales == scales, "level \(level) scales differently")
      var dots = [Int32](repeating: 0, count: m * n)
      engram_qgemm_i32_path(codes, m, kp, packed.codes, packed.sums, k, 0, n, &dots, n, level)
      #expect(dots == expected, "level \(level) integer products")
      var out = [Float](repeating: .nan, count: m * n)
      engram_qgemm_f32_path(
        codes, scales, m, kp, packed.codes, packed.scales, packed.sums, k, 0, n, &out, n, level)
      if reference.isEmpty { reference = out }
      #expect(out.map(\.bitPattern) == reference.map(\.bitPattern), "level \(level) float outputs")
    }
    // The float output approximates the float product.
    let w = values(n * k, seed: 2)
    for i in 0..<m {
      for j in 0..<n {
        var exact: Float = 0
        for p in 0..<k { exact += x[i * k + p] * w[j * k + p] }
        #expect(abs(reference[i * n + j] - exact) <= 0.02 * Float(k).squareRoot() * 3)
      }
    }
  }

  @Test func aColumnRangeWritesOnlyItsColumns() {
    let (m, n, k) = (5, 70, 40)
    let kp = engram_qgemm_padded_inputs(k)
    let packed = pack(values(n * k, seed: 3), n: n, k: k)
    var codes = [Int8](repeating: 0, count: m * kp)
    var scales = [Float](repeating: 0, count: m)
    engram_quantize_rows(values(m * k, seed: 4), m, k, k, &codes, kp, &scales)
    var whole = [Int32](repeating: 0, count: m * n)
    engram_qgemm_i32_path(codes, m, kp, packed.codes, packed.sums, k, 0, n, &whole, n, 2)
    for level in levels {
      var part = [Int32](repeating: -1, count: m * n)
      engram_qgemm_i32_path(codes, m, kp, packed.codes, packed.sums, k, 16, 50, &part, n, level)
      for i in 0..<m {
        for j in 0..<n {
          #expect(
            part[i * n + j] == ((16..<50).contains(j) ? whole[i * n + j] : -1), "level \(level) [\(i), \(j)]")
        }
      }
    }
  }

  @Test func extremeCodesNeitherSaturateNorOverflow() {
    // Every activation and weight at +-127 (the widest pairs vpmaddubsw sums), and zero rows.
    let (m, n, k) = (4, 16, 1536)
    let kp = engram_qgemm_padded_inputs(k)
    var x = [Float](repeating: 0, count: m * k)
    var w = [Float](repeating: 0, count: n * k)
    for p in 0..<k {
      x[p] = 1
      x[k + p] = p % 2 == 0 ? -1 : 1
      x[2 * k + p] = -1
      for j in 0..<(n - 1) { w[j * k + p] = j % 2 == 0 ? -1 : (p % 3 == 0 ? 1 : -1) }
    }
    let packed = pack(w, n: n, k: k)
    var codes = [Int8](repeating: 0, count: m * kp)
    var scales = [Float](repeating: 0, count: m)
    engram_quantize_rows(x, m, k, k, &codes, kp, &scales)
    #expect(scales[3] == 0)
    var expected = [Int32](repeating: 0, count: m * n)
    for i in 0..<m {
      for j in 0..<n {
        expected[i * n + j] = (0..<k).reduce(Int32(0)) {
          $0 + Int32(codes[i * kp + $1]) * Int32(code(packed, j: j, p: $1, k: k))
        }
      }
    }
    #expect(expected[0] == -127 * 127 * Int32(k))
    for level in levels {
      var dots = [Int32](repeating: 0, count: m * n)
      engram_qgemm_i32_path(codes, m, kp, packed.codes, packed.sums, k, 0, n, &dots, n, level)
      #expect(dots == expected, "level \(level)")
    }
  }
}
