import CEngramKernels
import EngramTestSupport
import Testing

/// `engram_qgemm_*` and `engram_quantize_rows*`: the int8 products of the embedders' linear
/// layers (weights per row in groups of 64 inputs, or 128 as e5-small packs them; activations
/// per row in one or two passes).
/// The integer group sums must be equal bit for bit on every SIMD level (they are exact), and
/// equal to the sums computed here from the packed layout's definition; the float outputs
/// (bias fused, written straight to C, through a row map) too.
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

  private func pack(_ w: [Float], n: Int, k: Int, group: Int = 64) -> Packed {
    let groups = engram_qgemm_padded_outputs(n) * engram_qgemm_groups_grouped(k, group)
    var packed = Packed(
      codes: [Int8](repeating: 99, count: engram_qgemm_packed_bytes_grouped(n, k, group)),
      scales: [Float](repeating: .nan, count: groups), sums: [Int32](repeating: 99, count: groups))
    engram_qgemm_pack_grouped(w, n, k, k, group, &packed.codes, &packed.scales, &packed.sums)
    return packed
  }

  /// Code (row j, input p) of a packed matrix, read by the layout's definition.
  private func code(_ packed: Packed, j: Int, p: Int, k: Int, group: Int = 64) -> Int8 {
    let kp = engram_qgemm_padded_inputs_grouped(k, group)
    return packed.codes[(j / 16) * 16 * kp + (p / 4) * 64 + (j % 16) * 4 + p % 4]
  }

  /// The group sums by definition: dot(codes, w), or at two passes 256 · dot(coarse, w) +
  /// dot(fine, w), over each group of `group` inputs, at [(g · m + i) · n + j].
  private func groupSums(
    _ codes: [Int8], _ packed: Packed, m: Int, n: Int, k: Int, passes: Int, group: Int = 64
  ) -> [Int32] {
    let kp = engram_qgemm_padded_inputs_grouped(k, group)
    let groups = engram_qgemm_groups_grouped(k, group)
    var sums = [Int32](repeating: 0, count: groups * m * n)
    for g in 0..<groups {
      for i in 0..<m {
        for j in 0..<n {
          var coarse: Int32 = 0
          var fine: Int32 = 0
          for p in (g * group)..<min(k, g * group + group) {
            let w = Int32(code(packed, j: j, p: p, k: k, group: group))
            coarse += Int32(codes[passes * i * kp + p]) * w
            if passes == 2 { fine += Int32(codes[(2 * i + 1) * kp + p]) * w }
          }
          sums[(g * m + i) * n + j] = passes == 2 ? 256 * coarse + fine : coarse
        }
      }
    }
    return sums
  }

  @Test(
    arguments: [1, 2],
    [
      (1, 1, 1, 64), (3, 5, 7, 64), (6, 16, 4, 64), (7, 17, 33, 64), (13, 64, 384, 64), (25, 100, 70, 64),
      (2, 129, 1536, 64), (1, 1, 1, 128), (7, 17, 33, 128), (13, 64, 384, 128), (25, 100, 200, 128),
      (2, 129, 1536, 128),
    ])
  func everyLevelGivesTheExactIntegerProducts(passes: Int, shape: (m: Int, n: Int, k: Int, group: Int)) {
    let (m, n, k, group) = shape
    let kp = engram_qgemm_padded_inputs_grouped(k, group)
    let x = values(m * k, seed: 1, scale: 6)
    let w = values(n * k, seed: 2)
    let bias = values(n, seed: 5)
    let packed = pack(w, n: n, k: k, group: group)
    // The weights' definition: per row and group of `group` inputs, codes round(w * 127 / max|w|).
    let np = engram_qgemm_padded_outputs(n)
    for j in 0..<n {
      for g in 0..<engram_qgemm_groups_grouped(k, group) {
        let inputs = (g * group)..<min(k, g * group + group)
        let largest = inputs.map { abs(w[j * k + $0]) }.max() ?? 0
        #expect(packed.scales[g * np + j] == largest / 127)
        var sum: Int32 = 0
        for p in inputs {
          let expected = Int8((w[j * k + p] * (127 / largest)).rounded(.toNearestOrEven))
          #expect(code(packed, j: j, p: p, k: k, group: group) == expected)
          sum += Int32(expected)
        }
        #expect(packed.sums[g * np + j] == sum)
      }
    }
    var codes = [Int8](repeating: 0, count: passes * m * kp)
    var scales = [Float](repeating: 0, count: m)
    engram_quantize_rows_path(x, m, k, k, Int32(passes), &codes, kp, &scales, 0)
    // The activations' definition: t = x * 127 / max|x|, coarse rint(t), fine rint((t - rint(t)) * 256).
    for i in 0..<m {
      let largest = (0..<k).map { abs(x[i * k + $0]) }.max() ?? 0
      #expect(scales[i] == (passes == 2 ? largest / 127 / 256 : largest / 127))
      for p in 0..<k {
        let t = x[i * k + p] * (127 / largest)
        let coarse = t.rounded(.toNearestOrEven)
        #expect(codes[passes * i * kp + p] == Int8(coarse))
        if passes == 2 {
          #expect(
            codes[(2 * i + 1) * kp + p]
              == Int8(min(127, max(-127, ((t - coarse) * 256).rounded(.toNearestOrEven)))))
        }
      }
      #expect(codes[(passes * i * kp + k)..<(passes * i * kp + kp)].allSatisfy { $0 == 0 })
    }
    let expected = groupSums(codes, packed, m: m, n: n, k: k, passes: passes, group: group)
    var reference: [Float] = []
    for level in levels {
      var levelCodes = [Int8](repeating: 1, count: passes * m * kp)
      var levelScales = [Float](repeating: 0, count: m)
      engram_quantize_rows_path(x, m, k, k, Int32(passes), &levelCodes, kp, &levelScales, level)
      #expect(levelCodes == codes, "level \(level) quantizes differently")
      #expect(levelScales == scales, "level \(level) scales differently")
      var dots = [Int32](repeating: 0, count: expected.count)
      engram_qgemm_i32_grouped_path(
        codes, m, kp, Int32(passes), packed.codes, group, packed.scales, packed.sums, n, k, 0, n, &dots, n,
        level)
      #expect(dots == expected, "level \(level) integer products")
      // NaN everywhere first: every output is written, none read.
      var out = [Float](repeating: .nan, count: m * n)
      engram_qgemm_f32_grouped_path(
        codes, scales, m, kp, Int32(passes), nil, packed.codes, group, packed.scales, packed.sums, n, k, 0, n,
        bias, &out, n, level)
      if reference.isEmpty { reference = out }
      #expect(out.map(\.bitPattern) == reference.map(\.bitPattern), "level \(level) float outputs")
    }
    // The float output is within the quantization's bound of the float product plus bias: half a
    // weight step (its group's max |w| / 254) times |x|, plus half an activation step (max |x| /
    // 254, or / 254 / 256 at two passes) times |w|, per term.
    for i in 0..<m {
      let largest = (0..<k).map { abs(x[i * k + $0]) }.max() ?? 0
      let activationStep = passes == 2 ? largest / 127 / 256 : largest / 254
      for j in 0..<n {
        let steps = stride(from: 0, to: k, by: group).map { start in
          (start..<min(k, start + group)).map { abs(w[j * k + $0]) }.max()! / 254
        }
        var exact = bias[j]
        var bound: Float = 1e-5
        for p in 0..<k {
          exact += x[i * k + p] * w[j * k + p]
          bound += abs(x[i * k + p]) * steps[p / group] + abs(w[j * k + p]) * activationStep
        }
        #expect(abs(reference[i * n + j] - exact) <= bound, "[\(i), \(j)]")
      }
    }
  }

  @Test func aColumnRangeWritesOnlyItsColumns() {
    let (m, n, k) = (5, 70, 40)
    let kp = engram_qgemm_padded_inputs(k)
    let packed = pack(values(n * k, seed: 3), n: n, k: k)
    var codes = [Int8](repeating: 0, count: m * kp)
    var scales = [Float](repeating: 0, count: m)
    engram_quantize_rows(values(m * k, seed: 4), m, k, k, 1, &codes, kp, &scales)
    var whole = [Float](repeating: 0, count: m * n)
    engram_qgemm_f32_path(
      codes, scales, m, kp, 1, nil, packed.codes, packed.scales, packed.sums, n, k, 0, n, nil, &whole, n, 2)
    for level in levels {
      var part = [Float](repeating: -1, count: m * n)
      engram_qgemm_f32_path(
        codes, scales, m, kp, 1, nil, packed.codes, packed.scales, packed.sums, n, k, 16, 50, nil, &part, n,
        level)
      for i in 0..<m {
        for j in 0..<n {
          #expect(
            part[i * n + j] == ((16..<50).contains(j) ? whole[i * n + j] : -1), "level \(level) [\(i), \(j)]")
        }
      }
    }
  }

  /// Rows dominated by one channel take two passes, the others one; the products through the
  /// row map equal, row for row, the products of each row quantized alone at its passes.
  @Test func mixedRowsTakeTwoPassesOnlyWhereOneChannelDominates() {
    let (m, n, k) = (9, 40, 384)
    let kp = engram_qgemm_padded_inputs(k)
    var x = values(m * k, seed: 6)
    for i in [1, 4, 5] { x[i * k + 7] = 40 }  // crest factor about 19 (at most √384)
    let bias = values(n, seed: 8)
    let packed = pack(values(n * k, seed: 7), n: n, k: k)
    var limits = [Float](repeating: 12, count: m)
    limits[8] = 0  // forced: two passes whatever its crest factor
    var reference: (codes: [Int8], scales: [Float], order: [Int32], single: Int, out: [Float])?
    for level in levels {
      var codes = [Int8](repeating: 0, count: 2 * m * kp)
      var scales = [Float](repeating: 0, count: m)
      var order = [Int32](repeating: -1, count: m)
      let single = engram_quantize_rows_mixed_path(
        x, m, k, k, nil, limits, &codes, kp, &scales, &order, level)
      var out = [Float](repeating: .nan, count: m * n)
      codes.withUnsafeBufferPointer { all in
        scales.withUnsafeBufferPointer { scale in
          order.withUnsafeBufferPointer { rows in
            engram_qgemm_f32_path(
              all.baseAddress, scale.baseAddress, single, kp, 1, rows.baseAddress, packed.codes,
              packed.scales,
              packed.sums, n, k, 0, n, bias, &out, n, level)
            engram_qgemm_f32_path(
              all.baseAddress! + 2 * single * kp, scale.baseAddress! + single, m - single, kp, 2,
              rows.baseAddress! + single, packed.codes, packed.scales, packed.sums, n, k, 0, n, bias, &out, n,
              level)
          }
        }
      }
      if let reference {
        #expect(
          codes == reference.codes && scales == reference.scales, "level \(level) quantizes differently")
        #expect(order == reference.order && single == reference.single, "level \(level) decides differently")
        #expect(out.map(\.bitPattern) == reference.out.map(\.bitPattern), "level \(level) float outputs")
      } else {
        reference = (codes, scales, order, single, out)
      }
    }
    guard let reference else { return }
    // One-pass rows in input order, then the two-pass rows (1, 4, 5 and the forced 8).
    #expect(reference.single == 5)
    #expect(Array(reference.order[0..<5]) == [0, 2, 3, 6, 7])
    #expect(Set(reference.order[5...]) == [1, 4, 5, 8])
    for (position, row) in reference.order.enumerated() {
      let passes = position < reference.single ? 1 : 2
      var codes = [Int8](repeating: 0, count: passes * kp)
      var scale: Float = 0
      engram_quantize_rows(
        Array(x[(Int(row) * k)..<(Int(row) * k + k)]), 1, k, k, Int32(passes), &codes, kp, &scale)
      var alone = [Float](repeating: 0, count: n)
      engram_qgemm_f32_path(
        codes, [scale], 1, kp, Int32(passes), nil, packed.codes, packed.scales, packed.sums, n, k, 0, n, bias,
        &alone,
        n, 0)
      #expect(
        Array(reference.out[(Int(row) * n)..<(Int(row) * n + n)]).map(\.bitPattern)
          == alone.map(\.bitPattern),
        "row \(row)")
    }
  }

  /// A smoothed input (`channels`): every level quantizes x[i, p] · channels[p] exactly as it
  /// quantizes those products given as the input, decisions included; and a factor that shrinks
  /// a dominating channel takes its rows back to one pass.
  @Test func channelFactorsQuantizeTheScaledRows() {
    let (m, k) = (9, 384)
    let kp = engram_qgemm_padded_inputs(k)
    var x = values(m * k, seed: 11)
    for i in [1, 4, 5] { x[i * k + 7] = 40 }
    var channels = values(k, seed: 12).map { 0.5 + abs($0) }
    channels[7] = 1.0 / 16
    var scaled = x
    for i in 0..<m { for p in 0..<k { scaled[i * k + p] = x[i * k + p] * channels[p] } }
    let limits = [Float](repeating: 12, count: m)
    func quantize(_ input: [Float], _ factors: [Float]?, level: Int32) -> ([Int8], [Float], [Int32], Int) {
      var codes = [Int8](repeating: 0, count: 2 * m * kp)
      var scales = [Float](repeating: 0, count: m)
      var order = [Int32](repeating: -1, count: m)
      let single = engram_quantize_rows_mixed_path(
        input, m, k, k, factors, limits, &codes, kp, &scales, &order, level)
      return (codes, scales, order, single)
    }
    let unsmoothed = quantize(x, nil, level: 0)
    #expect(unsmoothed.3 == 6, "rows 1, 4 and 5 at two passes without the factors")
    for level in levels {
      let smoothed = quantize(x, channels, level: level)
      let given = quantize(scaled, nil, level: level)
      #expect(smoothed.0 == given.0 && smoothed.1 == given.1, "level \(level) codes")
      #expect(smoothed.2 == given.2 && smoothed.3 == given.3, "level \(level) decisions")
      #expect(smoothed.3 == m, "level \(level): every row at one pass once channel 7 is shrunk")
    }
  }

  @Test("a code row is cleared from k to k padded to 128 (what either weight group reads), not to its stride")
  func codeRowsAreClearedToTheWidestGroup() {
    let stride = 1536
    for k in [100, 384, 1500] {
      let end = min(stride, (k + 127) / 128 * 128)
      let x = values(3 * k, seed: 11)
      for level in levels {
        for passes in [1, 2] {
          var codes = [Int8](repeating: 99, count: passes * 3 * stride)
          var scales = [Float](repeating: 0, count: 3)
          engram_quantize_rows_path(x, 3, k, k, Int32(passes), &codes, stride, &scales, level)
          for row in 0..<(passes * 3) {
            let start = row * stride
            #expect(codes[(start + k)..<(start + end)].allSatisfy { $0 == 0 }, "k \(k) level \(level)")
            #expect(codes[(start + end)..<(start + stride)].allSatisfy { $0 == 99 }, "k \(k) level \(level)")
          }
          var mixed = [Int8](repeating: 99, count: 2 * 3 * stride)
          var order = [Int32](repeating: 0, count: 3)
          let limits = [Float](repeating: passes == 2 ? 0 : .infinity, count: 3)
          let single = engram_quantize_rows_mixed_path(
            x, 3, k, k, nil, limits, &mixed, stride, &scales, &order, level)
          #expect(single == (passes == 2 ? 0 : 3))
          let rows = passes == 2 ? Array(0..<6) : Array(0..<3)
          for row in rows {
            let start = row * stride
            #expect(mixed[(start + k)..<(start + end)].allSatisfy { $0 == 0 }, "mixed k \(k) level \(level)")
            #expect(mixed[(start + end)..<(start + stride)].allSatisfy { $0 == 99 }, "mixed k \(k)")
          }
        }
      }
    }
  }

  @Test(arguments: [1, 2], [64, 128]) func extremeCodesNeitherSaturateNorOverflow(passes: Int, group: Int) {
    // Every weight at +-127 and activations whose coarse codes are +-127 (the widest pairs
    // vpmaddubsw sums, and the largest coarse sums the shift by 8 takes), and a zero row.
    let (m, n, k) = (4, 16, 1536)
    let kp = engram_qgemm_padded_inputs_grouped(k, group)
    var x = [Float](repeating: 0, count: m * k)
    var w = [Float](repeating: 0, count: n * k)
    for p in 0..<k {
      x[p] = 1
      x[k + p] = p % 2 == 0 ? -1 : 1
      x[2 * k + p] = p % 3 == 0 ? -1 : 0.999
      for j in 0..<(n - 1) { w[j * k + p] = j % 2 == 0 ? -1 : (p % 3 == 0 ? 1 : -1) }
    }
    let packed = pack(w, n: n, k: k, group: group)
    var codes = [Int8](repeating: 0, count: passes * m * kp)
    var scales = [Float](repeating: 0, count: m)
    engram_quantize_rows(x, m, k, k, Int32(passes), &codes, kp, &scales)
    #expect(scales[3] == 0)
    let expected = groupSums(codes, packed, m: m, n: n, k: k, passes: passes, group: group)
    #expect(expected[0] == -127 * 127 * Int32(group) * (passes == 2 ? 256 : 1))
    for level in levels {
      var dots = [Int32](repeating: 0, count: expected.count)
      engram_qgemm_i32_grouped_path(
        codes, m, kp, Int32(passes), packed.codes, group, packed.scales, packed.sums, n, k, 0, n, &dots, n,
        level)
      #expect(dots == expected, "level \(level)")
    }
  }
}
