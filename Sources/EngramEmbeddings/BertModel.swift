import Foundation

/// The weights of a BERT encoder, pointing into a memory-mapped model file.
///
/// Every pointer refers to read-only mapped pages owned by `file`, or (for a model packed in
/// 4-bit blocks) to float32 weights dequantized once at load into memory this object owns
/// and frees; both live as long as this object. Sendable because nothing in it changes after
/// `init`: the threads of one forward pass all read the same weights.
final class BertModel: @unchecked Sendable {
  /// Where the word vectors are: float32 rows, or rows of 4-bit blocks (see `E5ModelFile`)
  /// dequantized one token at a time, since the table is most of a multilingual model.
  enum WordTable {
    case float32(UnsafePointer<Float>)
    case blocks(UnsafeRawPointer)
  }

  struct Layer {
    var query: UnsafePointer<Float>
    var queryBias: UnsafePointer<Float>
    var key: UnsafePointer<Float>
    var keyBias: UnsafePointer<Float>
    var value: UnsafePointer<Float>
    var valueBias: UnsafePointer<Float>
    var attentionOutput: UnsafePointer<Float>
    var attentionOutputBias: UnsafePointer<Float>
    var attentionNormGamma: UnsafePointer<Float>
    var attentionNormBeta: UnsafePointer<Float>
    var intermediate: UnsafePointer<Float>
    var intermediateBias: UnsafePointer<Float>
    var output: UnsafePointer<Float>
    var outputBias: UnsafePointer<Float>
    var outputNormGamma: UnsafePointer<Float>
    var outputNormBeta: UnsafePointer<Float>
  }

  let configuration: BertConfiguration
  /// The mapped model file every pointer (but the dequantized weights) points into.
  let file: MappedFile
  /// Dequantized weights this object owns, freed in `deinit`.
  private let ownedWeights: UnsafeMutableBufferPointer<Float>?
  let wordEmbeddings: WordTable
  let positionEmbeddings: UnsafePointer<Float>
  let tokenTypeEmbeddings: UnsafePointer<Float>
  let embeddingNormGamma: UnsafePointer<Float>
  let embeddingNormBeta: UnsafePointer<Float>
  let layers: [Layer]

  /// Maps `file` and binds every tensor the configuration implies, checking names, dtypes and shapes.
  /// - Throws: `EmbeddingError` for a missing, damaged or mismatched tensor.
  init(file: URL, configuration: BertConfiguration) throws(EmbeddingError) {
    self.configuration = configuration
    let tensors = try SafeTensors(path: file.path)
    self.file = tensors.file
    ownedWeights = nil
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
      layers.append(
        Layer(
          query: try tensor(base + "attention.self.query.weight", [hidden, hidden]),
          queryBias: try tensor(base + "attention.self.query.bias", [hidden]),
          key: try tensor(base + "attention.self.key.weight", [hidden, hidden]),
          keyBias: try tensor(base + "attention.self.key.bias", [hidden]),
          value: try tensor(base + "attention.self.value.weight", [hidden, hidden]),
          valueBias: try tensor(base + "attention.self.value.bias", [hidden]),
          attentionOutput: try tensor(base + "attention.output.dense.weight", [hidden, hidden]),
          attentionOutputBias: try tensor(base + "attention.output.dense.bias", [hidden]),
          attentionNormGamma: try tensor(base + "attention.output.LayerNorm.weight", [hidden]),
          attentionNormBeta: try tensor(base + "attention.output.LayerNorm.bias", [hidden]),
          intermediate: try tensor(base + "intermediate.dense.weight", [inner, hidden]),
          intermediateBias: try tensor(base + "intermediate.dense.bias", [inner]),
          output: try tensor(base + "output.dense.weight", [hidden, inner]),
          outputBias: try tensor(base + "output.dense.bias", [hidden]),
          outputNormGamma: try tensor(base + "output.LayerNorm.weight", [hidden]),
          outputNormBeta: try tensor(base + "output.LayerNorm.bias", [hidden])))
    }
    self.layers = layers
  }

  /// Binds the weights of a packed multilingual-e5-small file: float32 tensors in place, the
  /// layers' 4-bit weights dequantized once into one float32 buffer (about 85 MB for
  /// e5-small), the word table left packed.
  init(packed: E5ModelFile, configuration: BertConfiguration) {
    self.configuration = configuration
    file = packed.file
    let hidden = configuration.hiddenSize
    let inner = configuration.intermediateSize
    let perLayer = 4 * hidden * hidden + 2 * hidden * inner
    let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: perLayer * configuration.layerCount)
    ownedWeights = buffer
    var next = buffer.baseAddress!
    func dequantized(_ name: String, _ count: Int) -> UnsafePointer<Float> {
      let target = next
      E5ModelFile.dequantize(packed.blocks(name), count: count, into: target)
      next += count
      return UnsafePointer(target)
    }
    wordEmbeddings = .blocks(packed.blocks("emb.word"))
    positionEmbeddings = packed.float32("emb.pos")
    tokenTypeEmbeddings = packed.float32("emb.type")
    embeddingNormGamma = packed.float32("emb.ln.w")
    embeddingNormBeta = packed.float32("emb.ln.b")
    layers = (0..<configuration.layerCount).map { index in
      let p = "l\(index)."
      return Layer(
        query: dequantized(p + "q.w", hidden * hidden), queryBias: packed.float32(p + "q.b"),
        key: dequantized(p + "k.w", hidden * hidden), keyBias: packed.float32(p + "k.b"),
        value: dequantized(p + "v.w", hidden * hidden), valueBias: packed.float32(p + "v.b"),
        attentionOutput: dequantized(p + "ao.w", hidden * hidden),
        attentionOutputBias: packed.float32(p + "ao.b"),
        attentionNormGamma: packed.float32(p + "aln.w"), attentionNormBeta: packed.float32(p + "aln.b"),
        intermediate: dequantized(p + "fi.w", inner * hidden), intermediateBias: packed.float32(p + "fi.b"),
        output: dequantized(p + "fo.w", hidden * inner), outputBias: packed.float32(p + "fo.b"),
        outputNormGamma: packed.float32(p + "oln.w"), outputNormBeta: packed.float32(p + "oln.b"))
    }
  }

  deinit { ownedWeights?.deallocate() }
}
