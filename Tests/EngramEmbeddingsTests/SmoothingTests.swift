import EngramTestSupport
import Testing

@testable import EngramEmbeddings

/// The int8 products' smoothing (`BertModel.Smoothing`): per-input-channel factors moved from
/// the activations to the weights, chosen from a float pass over built-in calibration texts.
@Suite(.timeLimit(.minutes(10)), .watchdog) struct SmoothingTests {
  /// The e5-small fixture's passages, as the embedder's token-id sequences, longer than
  /// `BertModel.twoPassLength` (a shorter one takes two passes on every row, smoothed or not).
  static func passages(_ embedder: E5Embedder, count: Int) -> [[Int32]] {
    let sequences = E5EmbedderTests.fixture.texts.filter { $0.embedderRole == .passage }.map {
      [embedder.tokenizer.vocabulary.bos] + embedder.pieceIDs($0.text, as: .passage)
        + [embedder.tokenizer.vocabulary.eos]
    }
    return Array(sequences.filter { $0.count > BertModel.twoPassLength }.prefix(count))
  }

  @Test("e5-small: smoothed, far fewer rows take two int8 passes, and the vectors are no farther from float")
  func e5FewerTwoPassRows() throws {
    let float = try InstalledE5.embedder(precision: .float32)
    let smoothed = try InstalledE5.embedder(precision: .int8).model
    #expect(smoothed.layers.allSatisfy { $0.output.inputFactors != nil && $0.query.inputFactors != nil })
    // The int8 model as it was before smoothing: the same weights, packed as they are.
    let plain = BertModel(
      packed: try E5ModelFile(path: float.file.path), configuration: float.configuration, precision: .int8)
    let sequences = Self.passages(float, count: 96)
    let reference = float.model.forward(sequences, threads: 1, normalizes: true)
    func run(_ model: BertModel) -> (probe: BertModel.ActivationProbe, worst: Float, meanGap: Double) {
      let probe = BertModel.ActivationProbe(configuration: model.configuration)
      let vectors = model.forward(sequences, threads: 1, normalizes: true, probe: probe)
      let similarities = zip(vectors, reference).map { cosine($0, $1) }
      let gap = similarities.reduce(0) { $0 + Double(1 - $1) } / Double(similarities.count)
      return (probe, similarities.min() ?? 0, gap)
    }
    let before = run(plain)
    let after = run(smoothed)
    let tokens = sequences.reduce(0) { $0 + $1.count } * float.configuration.layerCount
    #expect(before.probe.rows == [tokens, tokens, tokens])
    #expect(after.probe.rows == before.probe.rows)
    let share = { (probe: BertModel.ActivationProbe, product: Int) in
      Double(probe.twoPassRows[product]) / Double(probe.rows[product])
    }
    // Every product sends fewer rows to two passes (the rest: mostly `<s>` and `</s>`, two of
    // these texts' 18 tokens on average), in all less than half as many.
    #expect(share(before.probe, 2) > 0.2, "before: \(before.probe.twoPassRows)")
    #expect(share(after.probe, 2) < share(before.probe, 2) * 0.6, "after: \(after.probe.twoPassRows)")
    for product in 0..<2 {
      #expect(after.probe.twoPassRows[product] < before.probe.twoPassRows[product], "product \(product)")
    }
    #expect(
      after.probe.twoPassRows.reduce(0, +) * 2 < before.probe.twoPassRows.reduce(0, +),
      "before \(before.probe.twoPassRows), after \(after.probe.twoPassRows)")
    // Less integer work, numbers no worse: the mean distance to float does not grow.
    #expect(after.meanGap <= before.meanGap, "mean 1 - cosine \(after.meanGap) against \(before.meanGap)")
    #expect(after.worst >= 0.999, "worst cosine \(after.worst) (before: \(before.worst))")
  }

  @Test(
    "a channel the calibration saw small counts at the median channel; factors have a geometric mean of 1")
  func factorsAreBounded() {
    let activations: [Float] = [1, 1, 1, 16, 0.0001]
    let weights: [Float] = [1, 1, 1, 1, 1]
    let factors = BertModel.smoothingFactors(activations: activations, weights: weights)
    let product = factors.reduce(1, *)
    #expect(abs(product - 1) < 1e-4)
    // 16 against 1: a factor 4 (α 0.5) apart; the tiny channel is counted at the median, 1.
    #expect(abs(factors[3] / factors[0] - 4) < 1e-4)
    #expect(factors[4] == factors[0])
  }
}
