import Foundation

/// The shape of a BERT encoder and its sentence-transformers head, read from a model folder.
public struct BertConfiguration: Sendable, Equatable {
  /// How token vectors become one sentence vector (`1_Pooling/config.json`).
  public enum Pooling: String, Sendable {
    /// The mean over real tokens, `[CLS]` and `[SEP]` included.
    case mean
    /// The `[CLS]` token's vector.
    case classToken
  }

  /// Width of every token vector (`hidden_size`).
  public var hiddenSize: Int
  /// Number of transformer layers (`num_hidden_layers`).
  public var layerCount: Int
  /// Attention heads per layer (`num_attention_heads`).
  public var headCount: Int
  /// Width of the feed-forward layer (`intermediate_size`).
  public var intermediateSize: Int
  /// Rows of the position table (`max_position_embeddings`).
  public var maxPositions: Int
  /// Rows of the word table (`vocab_size`).
  public var vocabularySize: Int
  /// Rows of the token-type table (`type_vocab_size`).
  public var typeVocabularySize: Int
  /// LayerNorm epsilon (`layer_norm_eps`, default 1e-12).
  public var layerNormEpsilon: Float
  /// Longest input in tokens, special tokens included (`max_seq_length`, capped by `maxPositions`).
  public var maxSequenceLength: Int
  /// Sentence pooling.
  public var pooling: Pooling
  /// Whether the tokenizer lower-cases and strips accents (`tokenizer_config.json` `do_lower_case`).
  public var lowercases: Bool

  /// A configuration from its values (a model whose shape is not in JSON files).
  init(
    hiddenSize: Int, layerCount: Int, headCount: Int, intermediateSize: Int, maxPositions: Int,
    vocabularySize: Int, typeVocabularySize: Int, layerNormEpsilon: Float, maxSequenceLength: Int,
    pooling: Pooling, lowercases: Bool
  ) {
    self.hiddenSize = hiddenSize
    self.layerCount = layerCount
    self.headCount = headCount
    self.intermediateSize = intermediateSize
    self.maxPositions = maxPositions
    self.vocabularySize = vocabularySize
    self.typeVocabularySize = typeVocabularySize
    self.layerNormEpsilon = layerNormEpsilon
    self.maxSequenceLength = maxSequenceLength
    self.pooling = pooling
    self.lowercases = lowercases
  }

  /// Reads `config.json`, `sentence_bert_config.json`, `1_Pooling/config.json` and (optionally)
  /// `tokenizer_config.json` from `directory`.
  /// - Throws: `EmbeddingError.modelNotFound` / `.invalidConfiguration`.
  public init(directory: URL) throws(EmbeddingError) {
    let config = try Self.readJSON(directory, "config.json")
    let path = directory.appendingPathComponent("config.json").path
    func integer(_ key: String) throws(EmbeddingError) -> Int {
      guard let value = (config[key] as? NSNumber)?.intValue, value > 0 else {
        throw .invalidConfiguration(path: path, reason: "\(key) is missing or not a positive integer")
      }
      return value
    }
    hiddenSize = try integer("hidden_size")
    layerCount = try integer("num_hidden_layers")
    headCount = try integer("num_attention_heads")
    intermediateSize = try integer("intermediate_size")
    maxPositions = try integer("max_position_embeddings")
    vocabularySize = try integer("vocab_size")
    typeVocabularySize = try integer("type_vocab_size")
    layerNormEpsilon = (config["layer_norm_eps"] as? NSNumber)?.floatValue ?? 1e-12
    guard hiddenSize % headCount == 0 else {
      throw .invalidConfiguration(
        path: path, reason: "hidden_size \(hiddenSize) is not a multiple of the heads")
    }
    if let activation = config["hidden_act"] as? String, activation != "gelu" {
      throw .invalidConfiguration(path: path, reason: "hidden_act \(activation) is not supported (only gelu)")
    }
    if let kind = config["position_embedding_type"] as? String, kind != "absolute" {
      throw .invalidConfiguration(path: path, reason: "position_embedding_type \(kind) is not supported")
    }

    let sentence = try Self.readJSON(directory, "sentence_bert_config.json")
    let length = (sentence["max_seq_length"] as? NSNumber)?.intValue ?? maxPositions
    guard length >= 2 else {
      throw .invalidConfiguration(
        path: directory.appendingPathComponent("sentence_bert_config.json").path,
        reason: "max_seq_length \(length)")
    }
    maxSequenceLength = min(length, maxPositions)

    let poolingPath = directory.appendingPathComponent("1_Pooling/config.json").path
    let poolingConfig = try Self.readJSON(directory, "1_Pooling/config.json")
    if (poolingConfig["pooling_mode_mean_tokens"] as? Bool) == true {
      pooling = .mean
    } else if (poolingConfig["pooling_mode_cls_token"] as? Bool) == true {
      pooling = .classToken
    } else {
      throw .invalidConfiguration(path: poolingPath, reason: "only mean or CLS pooling is supported")
    }
    if let width = (poolingConfig["word_embedding_dimension"] as? NSNumber)?.intValue, width != hiddenSize {
      throw .invalidConfiguration(
        path: poolingPath, reason: "word_embedding_dimension \(width) ≠ \(hiddenSize)")
    }

    let tokenizerFile = directory.appendingPathComponent("tokenizer_config.json")
    if FileManager.default.fileExists(atPath: tokenizerFile.path) {
      let tokenizer = try Self.readJSON(directory, "tokenizer_config.json")
      lowercases = (tokenizer["do_lower_case"] as? Bool) ?? true
    } else {
      lowercases = true
    }
  }

  static func readJSON(_ directory: URL, _ name: String) throws(EmbeddingError) -> [String: Any] {
    let url = directory.appendingPathComponent(name)
    guard let data = FileManager.default.contents(atPath: url.path) else {
      throw .modelNotFound(directory: directory.path, missingFile: name)
    }
    guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      throw .invalidConfiguration(path: url.path, reason: "not a JSON object")
    }
    return object
  }
}
