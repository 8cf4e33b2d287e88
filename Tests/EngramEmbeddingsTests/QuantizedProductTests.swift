import CEngramKernels
import EngramTestSupport
import Testing

/// `engram_qgemm_*` and `engram_quantize_rows`: the int8 products of the embedders' linear
/// layers (weights per row in groups of 64 inputs, activations per row in two passes). The
/// integer group sums must be equal bit for bit on every SIMD level (they are exact), and equal
/// to the sums computed here from the packed layout's definition; the float outputs too.
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
    let groups = engram_qgemm_padded_outputs(n) * engram_qgemm_groups(k)
    var packed = Packed(
      codes: [Int8](repeating: 99, count: engram_qgemm_packed_bytes(n, k)),
      scales: [Float](repeating: .nan, count: groups), sums: [Int32](repeating: 99, count: groups))
    engram_qgemm_pack(w, n, k, k, &packed.codes, &packed.scales, &packed.sums)
    return packed
  }

  /// Code (row j, input p) of a packed matrix, read by the layout's definition.
  private func code(_ packed: Packed, j: Int, p: Int, k: Int) -> Int8 {
    let kp = engram_qgemm_padded_inputs(k)
    return packed.codes[(j / 16) * 16 * kp + (p / 4) * 64 + (j % 16) * 4 + p % 4]
  }

  /// The group sums by definition: 256 · dot(coarse, w) + dot(fine, w) over each group of 64
  /// inputs, at [(g · m + i) · n + j].
  private func groupSums(_ codes: [Int8], _ packed: Packed, m: Int, n: Int, k: Int) -> [Int32] {
    let kp = engram_qgemm_padded_inputs(k)
    let groups = engram_qgemm_groups(k)
    var sums = [Int32](repeating: 0, count: groups * m * n)
    for g in 0..<groups {
      for i in 0..<m {
        for j in 0..<n {
          var coarse: Int32 = 0
          var fine: Int32 = 0
          for p in (g * 64)..<min(k, g * 64 + 64) {
            let w = Int32(code(packed, j: j, p: p, k: k))
            coarse += Int32(codes[2 * i * kp + p]) * w
            fine += Int32(codes[(2 * i + 1) * kp + p]) * w
          }
          sums[(g * m + i) * n + j] = 256 * coarse + fine
        }
      }
    }
    return sums
  }

  @Test(arguments: [
    (1, 1, 1), (3, 5, 7), (6, 16, 4), (7, 17, 33), (13, 64, 384), (25, 100, 70), (2, 129, 1536),
  ])
  func everyLevelGivesTheExactIntegerProducts(shape: (m: Int, n: Int, k: Int)) {
    let (m, n, k) = shape
    let kp = engram_qgemm_padded_inputs(k)
    let x = values(m * k, seed: 1, scale: 6)
    let w = values(n * k, seed: 2)
    let packed = pack(w, n: n, k: k)
    // The weights' definition: per row and group of 64 inputs, codes round(w * 127 / max|w|).
    let np = engram_qgemm_padded_outputs(n)
    for j in 0..<n {
      for g in 0..<engram_qgemm_groups(k) {
        let inputs = (g * 64)..<min(k, g * 64 + 64)
        let largest = inputs.map { abs(w[j * k + $0]) }.max() ?? 0
        #expect(packed.scales[g * np + j] == largest / 127)
        var sum: Int32 = 0
        for p in inputs {
          let expected = Int8((w[j * k + p] * (127 / largest)).rounded(.toNearestOrEven))
          #expect(code(packed, j: j, p: p, k: k) == expected)
          sum += Int32(expected)
        }
        #expect(packed.sums[g * np + j] == sum)
      }
    }
    var codes = [Int8](repeating: 0, count: 2 * m * kp)
    var scales = [Float](repeating: 0, count: m)
    engram_quantize_rows_path(x, m, k, k, &codes, kp, &scales, 0)
    // The activations' definition: t = x * 127 / max|x|, coarse rint(t), fine rint((t - rint(t)) * 256).
    for i in 0..<m {
      let largest = (0..<k).map { abs(x[i * k + $0]) }.max() ?? 0
      #expect(scales[i] == largest / 127 / 256)
      for p in 0..<k {
        let t = x[i * k + p] * (127 / largest)
        let coarse = t.rounded(.toNearestOrEven)
        #expect(codes[2 * i * kp + p] == Int8(coarse))
        #expect(
          codes[(2 * i + 1) * kp + p]
            == Int8(min(127, max(-127, ((t - coarse) * 256).rounded(.toNearestOrEven)))))
      }
      #expect(codes[(2 * i * kp + k)..<(2 * i * kp + kp)].allSatisfy { $0 == 0 })
    }
    let expected = groupSums(codes, packed, m: m, n: n, k: k)
    var reference: [Float] = []
    for level in levels {
      var levelCodes = [Int8](repeating: 1, count: 2 * m * kp)
      var levelScales = [Float](repeating: 0, count: m)
      engram_quantize_rows_path(x, m, k, k, &levelCodes, kp, &levelScales, level)
      #expect(levelCodes == codes, "level \(level) quantizes differently")
      #expect(levelScales == scales, "level \(level) scales differently")
      var dots = [Int32](repeating: 0, count: expected.count)
      engram_qgemm_i32_path(
        codes, m, kp, packed.codes, packed.scales, packed.sums, n, k, 0, n, &dots, n, level)
      #expect(dots == expected, "level \(level) integer products")
      var out = [Float](repeating: .nan, count: m * n)
      engram_qgemm_f32_path(
        codes, scales, m, kp, packed.codes, packed.scales, packed.sums, n, k, 0, n, &out, n, level)
      if reference.isEmpty { reference = out }
      #expect(out.map(\.bitPattern) == reference.map(\.bitPattern), "level \(level) float outputs")
    }
    // The float output is within the quantization's bound of the float product: half a weight
    // step (its group's max |w| / 254) times |x|, plus a fine activation step (max |x| / 127 /
    // 256) times |w|, per term.
    for i in 0..<m {
      let largest = (0..<k).map { abs(x[i * k + $0]) }.max() ?? 0
      for j in 0..<n {
        let steps = stride(from: 0, to: k, by: 64).map { start in
          (start..<min(k, start + 64)).map { abs(w[j * k + $0]) }.max()! / 254
        }
        var exact: Float = 0
        var bound: Float = 1e-5
        for p in 0..<k {
          exact += x[i * k + p] * w[j * k + p]
          bound += abs(x[i * k + p]) * steps[p / 64] + abs(w[j * k + p]) * largest / 127 / 256
        }
        #expect(abs(reference[i * n + j] - exact) <= bound, "[\(i), \(j)]")
      }
    }
  }

  @Test func aColumnRangeWritesOnlyItsColumns() {
    let (m, n, k) = (5, 70, 40)
    let kp = engram_qgemm_padded_inputs(k)
    let packed = pack(values(n * k, seed: 3), n: n, k: k)
    var codes = [Int8](repeating: 0, count: 2 * m * kp)
    var scales = [Float](repeating: 0, count: m)
    engram_quantize_rows(values(m * k, seed: 4), m, k, k, &codes, kp, &scales)
    var whole = [Float](repeating: 0, count: m * n)
    engram_qgemm_f32_path(
      codes, scales, m, kp, packed.codes, packed.scales, packed.sums, n, k, 0, n, &whole, n, 2)
    for level in levels {
      var part = [Float](repeating: -1, count: m * n)
      engram_qgemm_f32_path(
        codes, scales, m, kp, packed.codes, packed.scales, packed.sums, n, k, 16, 50, &part, n, level)
      for i in 0..<m {
        for j in 0..<n {
          #expect(
            part[i * n + j] == ((16..<50).contains(j) ? whole[i * n + j] : -1), "level \(level) [\(i), \(j)]")
        }
      }
    }
  }

  @Test func extremeCodesNeitherSaturateNorOverflow() {
    // Every weight at +-127 and activations whose coarse codes are +-127 (the widest pairs
    // vpmaddubsw sums, and the largest coarse sums the shift by 8 takes), and a zero row.
    let (m, n, k) = (4, 16, 1536)
    let kp = engram_qgemm_padded_inputs(k)
    var x = [Float](repeating: 0, count: m * k)
    var w = [Float](repeating: 0, count: n * k)
    for p in 0..<k {
      x[p] = 1
      x[k + p] = p % 2 == 0 ? -1 : 1
      x[2 * k + p] = p % 3 == 0 ? -1 : 0.999
      for j in 0..<(n - 1) { w[j * k + p] = j % 2 == 0 ? -1 : (p % 3 == 0 ? 1 : -1) }
    }
    let packed = pack(w, n: n, k: k)
    var codes = [Int8](repeating: 0, count: 2 * m * kp)
    var scales = [Float](repeating: 0, count: m)
    engram_quantize_rows(x, m, k, k, &codes, kp, &scales)
    #expect(scales[3] == 0)
    let expected = groupSums(codes, packed, m: m, n: n, k: k)
    #expect(expected[0] == -127 * 127 * 64 * 256)
    for level in levels {
      var dots = [Int32](repeating: 0, count: expected.count)
      engram_qgemm_i32_path(
        codes, m, kp, packed.codes, packed.scales, packed.sums, n, k, 0, n, &dots, n, level)
      #expect(dots == expected, "level \(level)")
    }
  }
}
