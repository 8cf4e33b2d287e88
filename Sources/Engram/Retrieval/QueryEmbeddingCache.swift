import Synchronization

/// The last few query embeddings, so that one agent turn (context, routing, recall) embeds
/// the user's text once.
///
/// - Complexity: O(capacity) per lookup; the capacity is small.
final class QueryEmbeddingCache: Sendable {
  private struct Entry: Sendable {
    var text: String
    var vector: [Float]
  }

  private let entries = Mutex<[Entry]>([])
  let capacity: Int

  init(capacity: Int = 32) {
    self.capacity = capacity
  }

  /// The cached vector for `text`, moved to the front, or nil.
  func vector(for text: String) -> [Float]? {
    entries.withLock { entries in
      guard let index = entries.firstIndex(where: { $0.text == text }) else { return nil }
      let entry = entries.remove(at: index)
      entries.insert(entry, at: 0)
      return entry.vector
    }
  }

  /// Remembers `vector` for `text`, dropping the least recently used entry when full.
  func store(_ vector: [Float], for text: String) {
    entries.withLock { entries in
      entries.removeAll { $0.text == text }
      entries.insert(Entry(text: text, vector: vector), at: 0)
      if entries.count > capacity { entries.removeLast(entries.count - capacity) }
    }
  }

  /// Forgets everything (another embedder).
  func removeAll() {
    entries.withLock { $0.removeAll() }
  }
}

extension MemoryEngine {
  /// The embedding of a query text, from the cache when the same text was embedded lately.
  public func embedQuery(_ text: String) async throws -> [Float] {
    if let cached = queryCache.vector(for: text) { return cached }
    let vector = try await embed([text])[0]
    queryCache.store(vector, for: text)
    return vector
  }

  /// Embeddings of several query texts (cached ones are reused; the rest in one batch).
  public func embedQueries(_ texts: [String]) async throws -> [[Float]] {
    var result = texts.map { queryCache.vector(for: $0) }
    let missing = result.indices.filter { result[$0] == nil }
    if !missing.isEmpty {
      let vectors = try await embed(missing.map { texts[$0] })
      for (position, index) in missing.enumerated() {
        result[index] = vectors[position]
        queryCache.store(vectors[position], for: texts[index])
      }
    }
    return result.map { $0! }
  }
}
