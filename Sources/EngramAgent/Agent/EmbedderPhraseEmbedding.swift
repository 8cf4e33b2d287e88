import Engram

/// Any engine `Embedder` (MiniLM, hashing, HTTP) as the router's `PhraseEmbedding`.
public struct EmbedderPhraseEmbedding: PhraseEmbedding {
  /// The wrapped embedder.
  public let embedder: any Embedder

  /// Wraps `embedder`.
  public init(_ embedder: any Embedder) { self.embedder = embedder }

  /// One unit vector per text, in order.
  /// - Throws: the embedder's `EmbeddingError` (for example for an empty text).
  public func embed(_ texts: [String]) async throws -> [[Float]] { try await embedder.embed(texts) }

  /// The share of word pieces of `text` that are not `[UNK]` (BERT embedders), else nil.
  public func knownFraction(of text: String) -> Double? { Self.knownFraction(of: text, embedder: embedder) }

  static func knownFraction(of text: String, embedder: any Embedder) -> Double? {
    guard let bert = embedder as? BertEmbedder else { return nil }
    let pieces = bert.tokenizer.pieceIDs(text)
    guard !pieces.isEmpty else { return 0 }
    let known = pieces.count { $0 != bert.tokenizer.unknownID }
    return Double(known) / Double(pieces.count)
  }
}

/// The engine's query embeddings as the router's `PhraseEmbedding`: the user's text is
/// embedded once per turn and shared with the memory search.
public struct EnginePhraseEmbedding: PhraseEmbedding {
  /// The engine whose embedder and query cache are used.
  public let engine: MemoryEngine

  /// Wraps `engine`.
  public init(_ engine: MemoryEngine) { self.engine = engine }

  /// One unit vector per text, in order (cached texts are not embedded again).
  public func embed(_ texts: [String]) async throws -> [[Float]] { try await engine.embedQueries(texts) }

  /// The share of word pieces of `text` the engine's embedder knows (BERT embedders), else nil.
  public func knownFraction(of text: String) -> Double? {
    EmbedderPhraseEmbedding.knownFraction(of: text, embedder: engine.embedder)
  }
}
