/// Turns texts into unit-length float32 vectors.
///
/// Conformers are safe to share across tasks; each call is independent.
public protocol Embedder: Sendable {
  /// A stable identifier of the model, stored beside each vector
  /// (for example `sentence-transformers/all-MiniLM-L6-v2`, `hashing-v1-384`, `http:nomic-embed-text`).
  var modelID: String { get }
  /// The length of every vector this embedder returns.
  var dimension: Int { get }
  /// The longest input the model reads, in model tokens; longer inputs are truncated.
  var maxSequenceLength: Int { get }
  /// Embeds `texts`, returning one L2-normalized vector of `dimension` floats per text, in order.
  ///
  /// An empty list returns an empty list.
  /// - Throws: `EmbeddingError`.
  func embed(_ texts: [String]) async throws -> [[Float]]
  /// Embeds search queries, for models that embed a query differently from the texts it
  /// searches (multilingual-e5 prefixes `query: ` rather than `passage: `); the default is
  /// `embed(_:)`.
  /// - Throws: `EmbeddingError`.
  func embedQueries(_ texts: [String]) async throws -> [[Float]]
}

extension Embedder {
  /// Embeds queries as `embed(_:)` embeds any text.
  /// - Throws: `EmbeddingError`.
  public func embedQueries(_ texts: [String]) async throws -> [[Float]] {
    try await embed(texts)
  }

  /// Embeds one text.
  /// - Throws: `EmbeddingError`.
  public func embed(_ text: String) async throws -> [Float] {
    let vectors = try await embed([text])
    return vectors[0]
  }
}
