import Foundation

extension BertModel {
  /// What a forward pass observes of the inputs of the three products whose rows may take two
  /// int8 passes (query/key/value, feed-forward input, feed-forward output projection), per
  /// layer: each input channel's largest magnitude (to choose smoothing factors from a float
  /// pass) and, on the int8 path, how many rows were quantized and how many took two passes.
  /// One thread writes it (the pass it is given to runs on one thread).
  final class ActivationProbe: @unchecked Sendable {
    /// The products observed, in the order of a layer.
    static let products = 3
    /// maxima[layer][product][channel].
    private(set) var maxima: [[[Float]]]
    /// Rows quantized, and of them at two passes, per product (summed over layers).
    private(set) var rows = [Int](repeating: 0, count: products)
    private(set) var twoPassRows = [Int](repeating: 0, count: products)

    init(configuration: BertConfiguration) {
      let widths = [configuration.hiddenSize, configuration.hiddenSize, configuration.intermediateSize]
      maxima = (0..<configuration.layerCount).map { _ in widths.map { [Float](repeating: 0, count: $0) } }
    }

    /// Folds `rows` rows of `width` floats into the channel maxima of `product` at `layer`.
    func observe(layer: Int, product: Int, _ x: UnsafePointer<Float>, rows: Int, width: Int) {
      maxima[layer][product].withUnsafeMutableBufferPointer { largest in
        for row in 0..<rows {
          let values = x + row * width
          for channel in 0..<width { largest[channel] = max(largest[channel], abs(values[channel])) }
        }
      }
    }

    /// Counts a quantized input of `product`: `rows` rows, `single` of them at one pass.
    func count(product: Int, rows: Int, single: Int) {
      self.rows[product] += rows
      twoPassRows[product] += rows - single
    }
  }

  /// Per-input-channel smoothing of an int8 product (SmoothQuant, Xiao et al. 2023): the
  /// weights' input channel j is packed multiplied by s_j and the activations' channel j is
  /// quantized multiplied by 1 / s_j, so the product is the same while a channel that carries
  /// outliers in every row (e5-small's feed-forward and attention inputs: a few fixed channels
  /// ten times the rest) no longer sets each row's scale alone. Fewer rows exceed the crest
  /// factor that sends them to two passes (e5-small on a LoCoMo conversation: 25.7% of the
  /// feed-forward output projection's rows -> 8.0%, 14.1% -> 4.2% at the feed-forward input),
  /// and the products' error against float falls as well (see
  /// `docs/benchmarks.md`, "Smoothed int8 products").
  struct Smoothing {
    /// s_j, by which the weights' input channel j is multiplied before packing.
    let weightFactors: [Float]
    /// 1 / s_j, by which the activations' channel j is multiplied when quantized.
    let inputFactors: UnsafePointer<Float>
  }

  /// Each input channel's largest magnitude at the three products of every layer
  /// (`ActivationProbe.maxima`) in one single-threaded pass over `calibration` (token-id
  /// sequences, specials included).
  func channelMaxima(_ calibration: [[Int32]]) -> [[[Float]]] {
    let probe = ActivationProbe(configuration: configuration)
    _ = forward(calibration, threads: 1, normalizes: false, probe: probe)
    return probe.maxima
  }

  /// The migration strength α of s_j = (a_j / w_j)^α, a_j the activation channel's largest
  /// magnitude and w_j the weights' (over every output row): 0.5 splits each channel's range
  /// evenly between the two sides.
  static let smoothingStrength: Float = 0.5

  /// s_j for a product's input channels from the calibration's channel maxima (`activations`)
  /// and the weights' (`weights`), normalized to a geometric mean of 1. A channel the
  /// calibration saw small is counted at the median channel's magnitude: its factor would
  /// otherwise blow up activations the calibration text did not bring out.
  static func smoothingFactors(activations: [Float], weights: [Float]) -> [Float] {
    let median = activations.sorted()[activations.count / 2]
    var factors = zip(activations, weights).map { activation, weight -> Float in
      let a = max(activation, median)
      guard a > 0, weight > 0 else { return 1 }
      return Float(pow(Double(a / weight), Double(smoothingStrength)))
    }
    let logMean = factors.reduce(0) { $0 + log(Double($1)) } / Double(factors.count)
    let norm = Float(exp(-logMean))
    for index in factors.indices { factors[index] *= norm }
    return factors
  }

  /// Texts of the smoothing calibration (`channelMaxima(_:)`): chat turns of the
  /// shape ingest embeds (time, speaker, reply), a note, a question, in English, Chinese,
  /// Japanese, Korean and Spanish, and mixed scripts. Written for this purpose, from no evaluation set; the factors need the
  /// channels' typical ranges, not any particular text (the crest test still sends a row the
  /// smoothing misses to two passes).
  static let calibrationTexts = [
    "[9:14 am on 3 March, 2024] Maya: I finally signed up for the pottery class at the community "
      + "centre, Thursdays at seven. My first bowl came out lopsided but I love it anyway! "
      + "(replying to: Did you ever try that class you kept talking about?)",
    "[6:02 pm on 17 October, 2023] Tom: We drove up to the lake with the kids last weekend; the "
      + "rain stopped just in time for a swim, and Leo caught his first fish.",
    "Remember that the dentist moved my appointment to Tuesday 11:30, and bring the insurance card.",
    "What did Priya say about her new job in Seattle, and when does she start?",
    "[8:45 pm on 2 June, 2024] 小王：周末我们去了杭州，西湖边的茶馆特别安静，下次你也一起来吧。"
      + "（回复：你们假期有什么安排？）",
    "提醒我明天下午三点给妈妈打电话，顺便问问她的体检结果。",
    "[7:30 am on 12 January, 2024] Kenji: 今朝は雪で電車が遅れたので、駅前のカフェで本を読んでいました。",
    "[11:05 pm on 5 May, 2024] Jiwoo: 내일 회의는 오후 두 시로 바뀌었어요. 자료는 오늘 밤에 보낼게요.",
    "[4:20 pm on 9 August, 2023] Lucía: Mañana vamos al mercado y luego a casa de mi abuela para la cena.",
    "Meeting notes: budget review moved to Q3 (≈ $12,400 left); 张经理 wants the draft by Friday, "
      + "see https://example.com/plan-v2 and email ops@example.com 😊",
  ]
}
