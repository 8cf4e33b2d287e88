/// Turns phrases into vectors for semantic routing; the engine plugs in its MiniLM embedder.
public protocol PhraseEmbedding: Sendable {
  /// One vector per text, all of the same dimension, in input order.
  func embed(_ texts: [String]) async throws -> [[Float]]
  /// The share of `text`'s tokens the model knows (not `[UNK]`), or nil when it cannot tell.
  /// Similarity must not decide on text that is mostly unknown tokens.
  func knownFraction(of text: String) -> Double?
}

extension PhraseEmbedding {
  /// Unknown by default.
  public func knownFraction(of text: String) -> Double? { nil }
}

/// Errors of semantic routing.
public enum RouterError: Error, Sendable, Hashable {
  /// The embedding returned `got` vectors for `expected` texts.
  case embeddingCountMismatch(expected: Int, got: Int)
  /// A vector had dimension `got` where `expected` was established.
  case embeddingDimensionMismatch(expected: Int, got: Int)
  /// A vector was empty, all zero, or contained NaN or infinity.
  case invalidEmbedding(index: Int)
}
