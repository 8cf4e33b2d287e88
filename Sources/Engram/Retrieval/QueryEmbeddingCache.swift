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
