import EngramCore
import EngramEmbeddings
import EngramStore
import EngramVectors
import Foundation
import Synchronization

/// What every part of the engine shares: the store, the vector index keeper, the embedder
/// and the configuration, plus whether the engine is still open.
final class EngineResources: Sendable {
  let path: String
  let configuration: EngramConfiguration
  let store: any MemoryStore
  let vectors: VectorIndexKeeper
  let embedding: EmbeddingRunner
  let speakers = SpeakerDirectory()
  private let closed = Mutex(false)

  init(path: String, configuration: EngramConfiguration, store: any MemoryStore, vectors: VectorIndexKeeper) {
    self.path = path
    self.configuration = configuration
    self.store = store
    self.vectors = vectors
    embedding = EmbeddingRunner(
      embedder: configuration.embedder, batchSize: configuration.embeddingBatchSize)
  }

  /// Marks the engine closed; returns whether it already was.
  func markClosed() -> Bool {
    closed.withLock { closed in
      defer { closed = true }
      return closed
    }
  }

  var isClosed: Bool { closed.withLock { $0 } }
}

/// A part of the engine: it reaches the shared resources by the names the engine's code
/// has always used.
protocol EnginePart: Sendable {
  var resources: EngineResources { get }
}

extension EnginePart {
  var store: any MemoryStore { resources.store }
  var configuration: EngramConfiguration { resources.configuration }
  var embedder: any Embedder { resources.configuration.embedder }
  var vectors: VectorIndexKeeper { resources.vectors }
  var index: VectorIndex { resources.vectors.index }

  func checkOpen() throws(EngramError) {
    if resources.isClosed { throw .closed }
  }

  func embed(_ texts: [String], progress: ((Int) -> Void)? = nil) async throws -> [[Float]] {
    try await resources.embedding.embed(texts, progress: progress)
  }

  /// Runs a write that may change embeddings, tracking the index's generation.
  func writeTracked<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T {
    try vectors.writeTracked(body)
  }

  /// `writeTracked` run off the cooperative pool, for async operations.
  func writeTrackedOffPool<T: Sendable>(_ body: @escaping @Sendable (any StoreSession) throws -> T)
    async throws
    -> T
  {
    let vectors = self.vectors
    return try await BlockingWork.run { try vectors.writeTracked(body) }
  }

  /// Adds stored embeddings to the index after their transaction committed.
  func indexVectors(_ entries: [(kind: ItemKind, id: Int64, metadata: VectorMetadata, vector: [Float])])
    throws
  {
    try vectors.add(entries)
  }

  /// Reloads the index when another process changed the embeddings.
  func refreshIndexIfStale() throws {
    try vectors.refreshIfStale()
  }
}

/// Text checks shared by the parts that accept user text.
enum TextChecks {
  /// Whether `text` is empty or only `CharacterSet.whitespacesAndNewlines`, without
  /// building a trimmed copy (ASCII, the common case, skips the set lookup).
  static func isBlank(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { scalar in
      scalar.isASCII
        ? scalar == " " || (0x09...0x0D).contains(scalar.value)
        : CharacterSet.whitespacesAndNewlines.contains(scalar)
    }
  }
}

/// The speakers of the conversation log, read once and kept until a write may change them
/// (hybrid search boosts turns of the one speaker a query names).
final class SpeakerDirectory: Sendable {
  /// Lowercased name -> name as written; nil until read, or after a write.
  private let names = Mutex<[String: String]?>(nil)

  /// Forgets the cached names (a turn with a speaker was added or removed).
  func invalidate() {
    names.withLock { $0 = nil }
  }

  /// The known single-word speaker names, read from the store when not cached.
  func known(in store: any MemoryStore) throws -> [String: String] {
    if let cached = names.withLock({ $0 }) { return cached }
    let all = try store.readTransaction { try $0.distinctSpeakers() }
    var map: [String: String] = [:]
    for name in all where !name.isEmpty && !name.contains(" ") {
      map[name.lowercased()] = name
    }
    names.withLock { $0 = map }
    return map
  }
}
