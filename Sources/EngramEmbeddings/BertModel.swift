import Foundation

/// The weights of a BERT encoder, pointing into the memory-mapped safetensors file.
///
/// Every pointer refers to read-only mapped pages owned by `tensors`, which lives as long
/// as this object; nothing is copied. Sendable because nothing in it changes after `init`:
/// the threads of one forward pass all read the same weights.
final class BertModel: @unchecked Sendable {
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
  let tensors: SafeTensors
  let wordEmbeddings: UnsafePointer<Float>
  let positionEmbeddings: UnsafePointer<Float>
  let tokenTypeEmbeddings: UnsafePointer<Float>
  let embeddingNormGamma: UnsafePointer<Float>
  let embeddingNormBeta: UnsafePointer<Float>
  let layers: [Layer]

  /// Maps `file` and binds every tensor the configuration implies, checking names, dtypes and shapes.
  /// - Throws: `EmbeddingError` for a missing, damaged or mismatched tensor.
  init(file: URL, configuration: BertConfiguration) throws(EmbeddingError) {
    self.configuration = configuration
    tensors = try SafeTensors(path: file.path)
    // Checkpoints saved from `BertForX` prefix every name with `bert.`.
    let prefix = tensors.entries["embeddings.word_embeddings.weight"] == nil ? "bert." : ""
    let tensors = self.tensors
    let hidden = configuration.hiddenSize
    let inner = configuration.intermediateSize
    func tensor(_ name: String, _ shape: [Int]) throws(EmbeddingError) -> UnsafePointer<Float> {
      try tensors.float32(prefix + name, shape: shape)
    }
    wordEmbeddings = try tensor("embeddings.word_embeddings.weight", [configuration.vocabularySize, hidden])
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
}
