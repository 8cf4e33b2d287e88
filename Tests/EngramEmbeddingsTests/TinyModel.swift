import Foundation

/// A randomly initialised two-head, one-layer BERT written to a temporary folder, so loader
/// and forward-pass tests run without the real model.
struct TinyModel {
  static let hidden = 8
  static let inner = 16
  static let positions = 16
  static let vocabulary = WordPieceTokenizerTests.vocabulary

  /// Tensor name, shape and dtype; the default is every tensor a 1-layer BERT needs.
  struct Tensor {
    var name: String
    var shape: [Int]
    var dtype = "F32"
  }

  static var tensors: [Tensor] {
    var list = [
      Tensor(name: "embeddings.word_embeddings.weight", shape: [vocabulary.count, hidden]),
      Tensor(name: "embeddings.position_embeddings.weight", shape: [positions, hidden]),
      Tensor(name: "embeddings.token_type_embeddings.weight", shape: [2, hidden]),
      Tensor(name: "embeddings.LayerNorm.weight", shape: [hidden]),
      Tensor(name: "embeddings.LayerNorm.bias", shape: [hidden]),
      Tensor(name: "embeddings.position_ids", shape: [1, positions], dtype: "I64"),
    ]
    let base = "encoder.layer.0."
    for part in [
      "attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
    ] {
      list.append(Tensor(name: base + part + ".weight", shape: [hidden, hidden]))
      list.append(Tensor(name: base + part + ".bias", shape: [hidden]))
    }
    list += [
      Tensor(name: base + "attention.output.LayerNorm.weight", shape: [hidden]),
      Tensor(name: base + "attention.output.LayerNorm.bias", shape: [hidden]),
      Tensor(name: base + "intermediate.dense.weight", shape: [inner, hidden]),
      Tensor(name: base + "intermediate.dense.bias", shape: [inner]),
      Tensor(name: base + "output.dense.weight", shape: [hidden, inner]),
      Tensor(name: base + "output.dense.bias", shape: [hidden]),
      Tensor(name: base + "output.LayerNorm.weight", shape: [hidden]),
      Tensor(name: base + "output.LayerNorm.bias", shape: [hidden]),
    ]
    return list
  }

  /// The safetensors bytes of `tensors` with deterministic pseudo-random values.
  static func safetensors(_ tensors: [Tensor]) -> Data {
    var header: [String: Any] = ["__metadata__": ["format": "pt"]]
    var payload = Data()
    var state: UInt32 = 12_345
    for tensor in tensors {
      let count = tensor.shape.reduce(1, *)
      let begin = payload.count
      switch tensor.dtype {
      case "I64":
        for index in 0..<count {
          withUnsafeBytes(of: Int64(index).littleEndian) { payload.append(contentsOf: $0) }
        }
      case "F16":
        payload.append(Data(count: count * 2))
      default:
        let isGamma = tensor.name.hasSuffix("LayerNorm.weight")
        for _ in 0..<count {
          state = state &* 1_664_525 &+ 1_013_904_223
          let random = Float(state >> 8) / Float(1 << 24) - 0.5
          let value: Float = isGamma ? 1 + 0.1 * random : 0.5 * random
          withUnsafeBytes(of: value.bitPattern.littleEndian) { payload.append(contentsOf: $0) }
        }
      }
      header[tensor.name] = [
        "dtype": tensor.dtype, "shape": tensor.shape, "data_offsets": [begin, payload.count],
      ]
    }
    var json = try! JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
    while json.count % 8 != 0 { json.append(0x20) }
    var file = Data()
    withUnsafeBytes(of: UInt64(json.count).littleEndian) { file.append(contentsOf: $0) }
    file.append(json)
    file.append(payload)
    return file
  }

  /// Writes a complete model folder and returns it; `weights` replaces the safetensors bytes.
  static func write(weights: Data? = nil) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("engram-tiny-\(UUID())")
    let fileManager = FileManager.default
    try fileManager.createDirectory(
      at: folder.appendingPathComponent("1_Pooling"), withIntermediateDirectories: true)
    let config: [String: Any] = [
      "hidden_size": hidden, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": inner,
      "max_position_embeddings": positions, "vocab_size": vocabulary.count, "type_vocab_size": 2,
      "layer_norm_eps": 1e-12, "hidden_act": "gelu",
    ]
    try JSONSerialization.data(withJSONObject: config).write(to: folder.appendingPathComponent("config.json"))
    try Data("{\"max_seq_length\": 12}".utf8).write(
      to: folder.appendingPathComponent("sentence_bert_config.json"))
    try Data("{\"word_embedding_dimension\": 8, \"pooling_mode_mean_tokens\": true}".utf8)
      .write(to: folder.appendingPathComponent("1_Pooling/config.json"))
    try Data((vocabulary.joined(separator: "\n") + "\n").utf8).write(
      to: folder.appendingPathComponent("vocab.txt"))
    try (weights ?? safetensors(tensors)).write(to: folder.appendingPathComponent("model.safetensors"))
    return folder
  }
}
