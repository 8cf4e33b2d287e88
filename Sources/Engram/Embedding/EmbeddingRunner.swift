import EngramCore
import EngramEmbeddings

/// Turns texts into checked vectors: batches for the embedder, refuses what the index
/// cannot hold, and keeps the last query embeddings.
struct EmbeddingRunner: Sendable {
  let embedder: any Embedder
  let batchSize: Int
  /// Recent query embeddings.
  let queryCache = QueryEmbeddingCache()

  /// Embeds texts in batches (of `batchSize`, else the configured size), checking the
  /// embedder's contract and cancellation between batches; the embedder's work runs off the
  /// cooperative pool. Queries go through `Embedder.embedQueries` (a model may embed them
  /// differently).
  func embed(
    _ texts: [String], queries: Bool = false, batchSize: Int? = nil, progress: ((Int) -> Void)? = nil
  ) async throws -> [[Float]] {
    let batchSize = max(1, batchSize ?? self.batchSize)
    var vectors: [[Float]] = []
    vectors.reserveCapacity(texts.count)
    var start = 0
    while start < texts.count {
      if Task.isCancelled { throw EngramError.cancelled }
      let end = min(start + batchSize, texts.count)
      let batch = Array(texts[start..<end])
      let part = try await queries ? embedder.embedQueries(batch) : embedder.embed(batch)
      guard part.count == end - start else {
        throw EngramError.embedderContract(expected: end - start, actual: part.count)
      }
      try Self.check(part, dimension: embedder.dimension, offset: start)
      vectors.append(contentsOf: part)
      start = end
      progress?(start)
    }
    return vectors
  }

  /// Refuses a batch with a vector of the wrong length, with NaN or infinity, or all zero:
  /// the store would keep such a vector but the index cannot hold it, and a later open
  /// would fail to rebuild the index from the store.
  static func check(_ vectors: [[Float]], dimension: Int, offset: Int) throws(EngramError) {
    for (position, vector) in vectors.enumerated() {
      guard vector.count == dimension else {
        throw .embedderContract(expected: dimension, actual: vector.count)
      }
      var squares: Float = 0
      for value in vector {
        guard value.isFinite else { throw .invalidEmbedding(index: offset + position, reason: .nonFinite) }
        squares += value * value
      }
      guard squares > 0, squares.isFinite else {
        throw .invalidEmbedding(index: offset + position, reason: squares > 0 ? .nonFinite : .zero)
      }
    }
  }

  /// The embedding of a query text, from the cache when the same text was embedded lately.
  func embedQuery(_ text: String) async throws -> [Float] {
    if let cached = queryCache.vector(for: text) { return cached }
    let vector = try await embed([text], queries: true)[0]
    queryCache.store(vector, for: text)
    return vector
  }

  /// Embeddings of several query texts (cached ones are reused; the rest in one batch).
  func embedQueries(_ texts: [String]) async throws -> [[Float]] {
    var result = texts.map { queryCache.vector(for: $0) }
    let missing = result.indices.filter { result[$0] == nil }
    if !missing.isEmpty {
      let vectors = try await embed(missing.map { texts[$0] }, queries: true)
      for (position, index) in missing.enumerated() {
        result[index] = vectors[position]
        queryCache.store(vectors[position], for: texts[index])
      }
    }
    return result.map { $0! }
  }
}
