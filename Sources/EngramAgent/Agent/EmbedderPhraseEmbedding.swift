import EngramEmbeddings

/// Any engine `Embedder` (MiniLM, hashing, HTTP) as the router's `PhraseEmbedding`.
public struct EmbedderPhraseEmbedding: PhraseEmbedding {
  /// The wrapped embedder.
  public let embedder: any Embedder

  /// Wraps `embedder`.
  public init(_ embedder: any Embedder) { self.embedder = embedder }

  /// One unit vector per text, in order.
  /// - Throws: the embedder's `EmbeddingError` (for example for an empty text).
  public func embed(_ texts: [String]) async throws -> [[Float]] { try await embedder.embed(texts) }
}
