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

  @Test("e5-small packs int8 weights in groups of 128 inputs (MiniLM: 64), about as close to float as 64")
  func e5WeightGroups() throws {
    func groups(_ model: BertModel) -> Set<Int> {
      Set(
        model.layers.flatMap {
          [$0.query, $0.key, $0.value, $0.attentionOutput, $0.intermediate, $0.output].map { dense -> Int in
            guard case .int8(_, _, _, let group) = dense.weights else { return 0 }
            return group
          }
        })
    }
    let float = try InstalledE5.embedder(precision: .float32)
    let shipped = try InstalledE5.embedder(precision: .int8).model
    #expect(groups(shipped) == [128])
    let minilm = try InstalledModel.embedder()
    let minilmModel = try BertModel(
      file: minilm.directory.appendingPathComponent("model.safetensors"), configuration: minilm.configuration,
      precision: .int8)
    #expect(groups(minilmModel) == [64])
    // The same model in groups of 64, smoothed from its own calibration pass as a load does.
    let packed = try E5ModelFile(path: float.file.path)
    let calibration = BertModel.calibrationTexts.map {
      [float.tokenizer.vocabulary.bos] + float.tokenizer.pieceIDs(E5Embedder.Role.passage.prefix + $0)
        + [float.tokenizer.vocabulary.eos]
    }
    let maxima = BertModel(packed: packed, configuration: float.configuration, precision: .int8, group: 64)
      .channelMaxima(calibration)
    let sixtyFour = BertModel(
      packed: packed, configuration: float.configuration, precision: .int8, smoothing: maxima, group: 64)
    #expect(groups(sixtyFour) == [64])
    let sequences = Self.passages(float, count: 96)
    let reference = float.model.forward(sequences, threads: 1, normalizes: true)
    func distance(_ model: BertModel) -> (worst: Float, meanGap: Double) {
      let similarities = zip(model.forward(sequences, threads: 1, normalizes: true), reference).map {
        cosine($0, $1)
      }
      return (
        similarities.min() ?? 0, similarities.reduce(0) { $0 + Double(1 - $1) } / Double(similarities.count)
      )
    }
    let coarse = distance(shipped)
    let fine = distance(sixtyFour)
    // Measured: worst cosine 0.99981 (64: 0.99985), mean 1 - cosine 9.16e-5 (64: 8.05e-5, +14%).
    #expect(coarse.worst >= 0.999, "worst cosine \(coarse.worst) (groups of 64: \(fine.worst))")
    #expect(
      coarse.meanGap <= fine.meanGap * 1.2, "mean 1 - cosine \(coarse.meanGap) against \(fine.meanGap) at 64")
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
