import CEngramKernels
import Foundation

/// The weights of a BERT encoder, pointing into a memory-mapped model file.
///
/// Every pointer refers to read-only mapped pages owned by `file`, or to memory this object
/// owns and frees: int8 packs of the linear weights (at `EmbeddingPrecision.int8`, quantized
/// once at load) or, for a model packed in 4-bit blocks, float32 weights dequantized once at
/// load; both live as long as this object. Sendable because nothing in it changes after
/// `init`: the threads of one forward pass all read the same weights.
final class BertModel: @unchecked Sendable {
  /// Where the word vectors are: float32 rows, or rows of 4-bit blocks (see `E5ModelFile`)
  /// dequantized one token at a time, since the table is most of a multilingual model.
  enum WordTable {
    case float32(UnsafePointer<Float>)
    case blocks(UnsafeRawPointer)
  }

  /// One linear layer: `output = input · weightᵀ + bias`, the weight stored [out, in].
  struct Linear: @unchecked Sendable {
    /// float32 rows (mapped, or dequantized into memory the model owns), or int8 rows packed
    /// by `engram_qgemm_pack_grouped` with a scale and a code sum per output row and group of
    /// `group` inputs (64 or 128, `LinearBuilder.group`).
    enum Weights {
      case float32(UnsafePointer<Float>)
      case int8(
        packed: UnsafePointer<Int8>, scales: UnsafePointer<Float>, sums: UnsafePointer<Int32>, group: Int)
    }

    let weights: Weights
    let bias: UnsafePointer<Float>
    let inputWidth: Int
    let outputWidth: Int
    /// When the int8 weights were packed smoothed (`Smoothing`), the factor each input channel
    /// is multiplied by as it is quantized.
    var inputFactors: UnsafePointer<Float>? = nil

    /// The float32 weights; a precondition of the calibration, which runs the float path.
    var floatWeights: UnsafePointer<Float> {
      guard case .float32(let weights) = weights else { preconditionFailure("not a float32 layer") }
      return weights
    }
  }

  struct Layer {
    var query: Linear
    var key: Linear
    var value: Linear
    var attentionOutput: Linear
    var attentionNormGamma: UnsafePointer<Float>
    var attentionNormBeta: UnsafePointer<Float>
    var intermediate: Linear
    var output: Linear
    var outputNormGamma: UnsafePointer<Float>
    var outputNormBeta: UnsafePointer<Float>
  }

  /// Builds the linear layers of one model at one precision, owning what it allocates: int8
  /// packs (weights quantized once, per output row in groups of `group` inputs) and, for the packed e5 file, the float
  /// weights dequantized from its 4-bit blocks when the float path is selected.
  final class LinearBuilder {
    let precision: EmbeddingPrecision
    /// Inputs per weight scale of an int8 pack: 64 (MiniLM), or 128 (`BertModel.e5WeightGroup`).
    let group: Int
    private(set) var allocations: [UnsafeMutableRawPointer] = []

    init(precision: EmbeddingPrecision, group: Int = 64) {
      self.precision = precision
      self.group = group
    }

    /// The layer of float32 `weight` [outputs × inputs]: used in place at `.float32`,
    /// quantized into an int8 pack at `.int8`, its input channels multiplied by the factors of
    /// `smoothing` first when given.
    func linear(
      _ weight: UnsafePointer<Float>, bias: UnsafePointer<Float>, inputs: Int, outputs: Int,
      smoothing: Smoothing? = nil
    ) -> Linear {
      guard precision == .int8 else {
        return Linear(weights: .float32(weight), bias: bias, inputWidth: inputs, outputWidth: outputs)
      }
      if let smoothing {
        let scaled = UnsafeMutablePointer<Float>.allocate(capacity: outputs * inputs)
        defer { scaled.deallocate() }
        smoothing.weightFactors.withUnsafeBufferPointer { factors in
          for row in 0..<outputs {
            let from = weight + row * inputs
            let to = scaled + row * inputs
            for column in 0..<inputs { to[column] = from[column] * factors[column] }
          }
        }
        var layer = linear(UnsafePointer(scaled), bias: bias, inputs: inputs, outputs: outputs)
        layer.inputFactors = smoothing.inputFactors
        return layer
      }
      let groups = engram_qgemm_padded_outputs(outputs) * engram_qgemm_groups_grouped(inputs, group)
      let packedBytes = engram_qgemm_packed_bytes_grouped(outputs, inputs, group)
      // One allocation: the codes, then the scales, then the sums (both 4-byte aligned).
      let storage = UnsafeMutableRawPointer.allocate(byteCount: packedBytes + 8 * groups, alignment: 64)
      allocations.append(storage)
      let packed = storage.bindMemory(to: Int8.self, capacity: packedBytes)
      let scales = (storage + packedBytes).bindMemory(to: Float.self, capacity: groups)
      let sums = (storage + packedBytes + 4 * groups).bindMemory(to: Int32.self, capacity: groups)
      engram_qgemm_pack_grouped(weight, outputs, inputs, inputs, group, packed, scales, sums)
      return Linear(
        weights: .int8(packed: packed, scales: scales, sums: sums, group: group), bias: bias,
        inputWidth: inputs,
        outputWidth: outputs)
    }

    /// The layer of a 4-bit block tensor of the packed e5 file: dequantized into float32 the
    /// model keeps at `.float32`; at `.int8`, dequantized into a scratch buffer and packed.
    func linear(blocks: UnsafeRawPointer, bias: UnsafePointer<Float>, inputs: Int, outputs: Int) -> Linear {
      let count = inputs * outputs
      let floats = UnsafeMutablePointer<Float>.allocate(capacity: count)
      E5ModelFile.dequantize(blocks, count: count, into: floats)
      guard precision == .int8 else {
        allocations.append(UnsafeMutableRawPointer(floats))
        return linear(UnsafePointer(floats), bias: bias, inputs: inputs, outputs: outputs)
      }
      defer { floats.deallocate() }
      return linear(UnsafePointer(floats), bias: bias, inputs: inputs, outputs: outputs)
    }

    /// Frees what this builder allocated (a builder of float layers needed only while packing).
    func deallocate() {
      for allocation in allocations { allocation.deallocate() }
      allocations = []
    }

    /// The smoothing of an input shared by `layers` (float32), from its channel maxima in a
    /// calibration pass; the input factors live as long as the model.
    func smoothing(_ layers: [Linear], activations: [Float]) -> Smoothing {
      let inputs = activations.count
      var weights = [Float](repeating: 0, count: inputs)
      weights.withUnsafeMutableBufferPointer { largest in
        for layer in layers {
          for row in 0..<layer.outputWidth {
            let values = layer.floatWeights + row * inputs
            for column in 0..<inputs { largest[column] = max(largest[column], abs(values[column])) }
          }
        }
      }
      let factors = BertModel.smoothingFactors(activations: activations, weights: weights)
      let inverse = UnsafeMutablePointer<Float>.allocate(capacity: inputs)
      allocations.append(UnsafeMutableRawPointer(inverse))
      for column in 0..<inputs { inverse[column] = 1 / factors[column] }
      return Smoothing(weightFactors: factors, inputFactors: inverse)
    }
  }

  let configuration: BertConfiguration
  /// The mapped model file every pointer (but the dequantized weights) points into.
  let file: MappedFile
  /// How the linear layers compute.
  let precision: EmbeddingPrecision
  /// Memory this object owns (int8 packs, dequantized weights), freed in `deinit`.
  private let allocations: [UnsafeMutableRawPointer]
  let wordEmbeddings: WordTable
  let positionEmbeddings: UnsafePointer<Float>
  let tokenTypeEmbeddings: UnsafePointer<Float>
  let embeddingNormGamma: UnsafePointer<Float>
  let embeddingNormBeta: UnsafePointer<Float>
  let layers: [Layer]

  /// Maps `file` and binds every tensor the configuration implies, checking names, dtypes and shapes.
  /// - Throws: `EmbeddingError` for a missing, damaged or mismatched tensor.
  ///
  /// At `.int8` every linear weight is quantized once here into memory this object owns; the
  /// mapped float weights are then only read again for the embeddings and the norms.
  init(file: URL, configuration: BertConfiguration, precision: EmbeddingPrecision) throws(EmbeddingError) {
    self.configuration = configuration
    self.precision = precision
    let tensors = try SafeTensors(path: file.path)
    self.file = tensors.file
    let builder = LinearBuilder(precision: precision)
    // Checkpoints saved from `BertForX` prefix every name with `bert.`.
    let prefix = tensors.entries["embeddings.word_embeddings.weight"] == nil ? "bert." : ""
    let hidden = configuration.hiddenSize
    let inner = configuration.intermediateSize
    func tensor(_ name: String, _ shape: [Int]) throws(EmbeddingError) -> UnsafePointer<Float> {
      try tensors.float32(prefix + name, shape: shape)
    }
    wordEmbeddings = .float32(
      try tensor("embeddings.word_embeddings.weight", [configuration.vocabularySize, hidden]))
    positionEmbeddings = try tensor(
      "embeddings.position_embeddings.weight", [configuration.maxPositions, hidden])
    tokenTypeEmbeddings = try tensor(
      "embeddings.token_type_embeddings.weight", [configuration.typeVocabularySize, hidden])
    embeddingNormGamma = try tensor("embeddings.LayerNorm.weight", [hidden])
    embeddingNormBeta = try tensor("embeddings.LayerNorm.bias", [hidden])
    var layers: [Layer] = []
    for index in 0..<configuration.layerCount {
      let base = "encoder.layer.\(index)."
      func linear(_ name: String, _ inputs: Int, _ outputs: Int) throws(EmbeddingError) -> Linear {
        builder.linear(
          try tensor(base + name + ".weight", [outputs, inputs]),
          bias: try tensor(base + name + ".bias", [outputs]),
          inputs: inputs, outputs: outputs)
      }
      layers.append(
        Layer(
          query: try linear("attention.self.query", hidden, hidden),
          key: try linear("attention.self.key", hidden, hidden),
          value: try linear("attention.self.value", hidden, hidden),
          attentionOutput: try linear("attention.output.dense", hidden, hidden),
          attentionNormGamma: try tensor(base + "attention.output.LayerNorm.weight", [hidden]),
          attentionNormBeta: try tensor(base + "attention.output.LayerNorm.bias", [hidden]),
          intermediate: try linear("intermediate.dense", hidden, inner),
          output: try linear("output.dense", inner, hidden),
          outputNormGamma: try tensor(base + "output.LayerNorm.weight", [hidden]),
          outputNormBeta: try tensor(base + "output.LayerNorm.bias", [hidden])))
    }
    self.layers = layers
    allocations = builder.allocations
  }

  /// Binds the weights of a packed multilingual-e5-small file: float32 tensors in place, the
  /// layers' 4-bit weights dequantized once at load, into float32 (about 85 MB for e5-small)
  /// at `.float32`, re-quantized to int8 per output row (about 21 MB) at `.int8`; the word
  /// table stays packed.
  ///
  /// With `smoothing` (at `.int8`: the channel maxima of a calibration pass,
  /// `channelMaxima(_:)`, of the model packed without it), the query/key/value and feed-forward
  /// products are packed smoothed (`Smoothing`); the attention output projection, whose input
  /// has no outlier channels, as it is.
  ///
  /// `group` is the int8 packs' inputs per weight scale (`e5WeightGroup`; tests compare 64).
  /// The layers are built on `threads` threads (`map`), each layer's weights on one: the
  /// same bytes in any order, in half the wall time of one thread on two cores.
  init(
    packed: E5ModelFile, configuration: BertConfiguration, precision: EmbeddingPrecision,
    smoothing maxima: [[[Float]]]? = nil, group: Int = BertModel.e5WeightGroup, threads: Int = 1
  ) {
    self.configuration = configuration
    self.precision = precision
    file = packed.file
    wordEmbeddings = .blocks(packed.blocks("emb.word"))
    positionEmbeddings = packed.float32("emb.pos")
    tokenTypeEmbeddings = packed.float32("emb.type")
    embeddingNormGamma = packed.float32("emb.ln.w")
    embeddingNormBeta = packed.float32("emb.ln.b")
    let source = PackedSource(file: packed)
    let built = Self.map(Array(0..<configuration.layerCount), threads: threads, minimumItems: 2) { index in
      let builder = LinearBuilder(precision: precision, group: group)
      let layer = Self.layer(
        index, of: source.file, configuration: configuration, precision: precision, smoothing: maxima,
        builder: builder)
      return BuiltLayer(layer: layer, allocations: builder.allocations)
    }
    layers = built.map(\.layer)
    allocations = built.flatMap(\.allocations)
  }

  /// The packed file, read (never changed) by the threads that build the layers.
  private struct PackedSource: @unchecked Sendable {
    let file: E5ModelFile
  }

  /// One layer and the memory its builder allocated for it (the model owns it once built).
  private struct BuiltLayer: @unchecked Sendable {
    let layer: Layer
    let allocations: [UnsafeMutableRawPointer]
  }

  /// Layer `index` of the packed file, its int8 packs (or dequantized weights) from `builder`.
  private static func layer(
    _ index: Int, of packed: E5ModelFile, configuration: BertConfiguration, precision: EmbeddingPrecision,
    smoothing maxima: [[[Float]]]?, builder: LinearBuilder
  ) -> Layer {
    let hidden = configuration.hiddenSize
    let inner = configuration.intermediateSize
    let p = "l\(index)."
    func linear(_ name: String, _ inputs: Int, _ outputs: Int) -> Linear {
      builder.linear(
        blocks: packed.blocks(p + name + ".w"), bias: packed.float32(p + name + ".b"), inputs: inputs,
        outputs: outputs)
    }
    let attentionNormGamma = packed.float32(p + "aln.w")
    let attentionNormBeta = packed.float32(p + "aln.b")
    let outputNormGamma = packed.float32(p + "oln.w")
    let outputNormBeta = packed.float32(p + "oln.b")
    if let maxima, precision == .int8 {
      // The layer's float weights, dequantized while it is packed.
      let floats = LinearBuilder(precision: .float32)
      defer { floats.deallocate() }
      func float(_ name: String, _ inputs: Int, _ outputs: Int) -> Linear {
        floats.linear(
          blocks: packed.blocks(p + name + ".w"), bias: packed.float32(p + name + ".b"), inputs: inputs,
          outputs: outputs)
      }
      let (query, key, value) = (
        float("q", hidden, hidden), float("k", hidden, hidden), float("v", hidden, hidden)
      )
      let (intermediate, output) = (float("fi", hidden, inner), float("fo", inner, hidden))
      let attention = builder.smoothing([query, key, value], activations: maxima[index][0])
      let gelu = builder.smoothing([intermediate], activations: maxima[index][1])
      let projection = builder.smoothing([output], activations: maxima[index][2])
      func pack(_ dense: Linear, _ smoothing: Smoothing) -> Linear {
        builder.linear(
          dense.floatWeights, bias: dense.bias, inputs: dense.inputWidth, outputs: dense.outputWidth,
          smoothing: smoothing)
      }
      return Layer(
        query: pack(query, attention), key: pack(key, attention), value: pack(value, attention),
        attentionOutput: linear("ao", hidden, hidden), attentionNormGamma: attentionNormGamma,
        attentionNormBeta: attentionNormBeta, intermediate: pack(intermediate, gelu),
        output: pack(output, projection), outputNormGamma: outputNormGamma, outputNormBeta: outputNormBeta)
    }
    return Layer(
      query: linear("q", hidden, hidden), key: linear("k", hidden, hidden),
      value: linear("v", hidden, hidden),
      attentionOutput: linear("ao", hidden, hidden),
      attentionNormGamma: packed.float32(p + "aln.w"), attentionNormBeta: packed.float32(p + "aln.b"),
      intermediate: linear("fi", hidden, inner), output: linear("fo", inner, hidden),
      outputNormGamma: packed.float32(p + "oln.w"), outputNormBeta: packed.float32(p + "oln.b"))
  }

  deinit { for allocation in allocations { allocation.deallocate() } }

  /// Inputs per weight scale of multilingual-e5-small's int8 packs: 128, where MiniLM keeps 64.
  /// A product's float work is one conversion and one fused multiply-add per token, output and
  /// group, beside 16 (64 inputs) or 32 (128) VNNI instructions' share: at 64 that work took
  /// about 8% of a one-pass product's time (`docs/benchmarks.md`, "Weight groups of 128").
  /// e5's weights come from 4-bit blocks of 32, so either grid is finer than the file's.
  static let e5WeightGroup = 128
}
