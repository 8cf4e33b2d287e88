import EngramEmbeddings
import Foundation
import Synchronization

/// The embedders of many users' memories, loaded once per ``EmbedderSpec`` and shared by every
/// memory made with that spec: a server of 200 users whose memories use MiniLM loads its
/// weights once, not 200 times, and a user whose memory was made with another embedder gets
/// that one (loaded when the first such user opens).
///
/// A spec that fails to load (a model not installed) is not remembered: the next user who
/// needs it tries again, and gets the same clear error while it is still missing.
public final class SharedEmbedders: Sendable {
  /// The environment the embedders are built with (`ENGRAM_MODEL_DIR`, an HTTP embedder's key).
  public let environment: [String: String]
  private let slots = Mutex<[EmbedderSpec: Slot]>([:])
  private let loadCount = Atomic<Int>(0)

  /// One spec's embedder: loaded under the slot's own lock, so users of the same spec wait
  /// for the one load while users of other specs go on.
  private final class Slot: Sendable {
    let embedder = Mutex<(any Embedder)?>(nil)
  }

  /// Shares the embedders it builds with `environment`.
  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.environment = environment
  }

  /// The embedder `spec` builds: the one loaded before, else loaded now (blocking: a model
  /// load reads its weights; call it off the cooperative pool, as `UserEngines`' opener is).
  /// - Throws: what ``EmbedderSpec/makeEmbedder(environment:)`` throws (`EmbeddingError`).
  public func embedder(for spec: EmbedderSpec) throws -> any Embedder {
    let slot = slots.withLock { slots in
      if let slot = slots[spec] { return slot }
      let slot = Slot()
      slots[spec] = slot
      return slot
    }
    return try slot.embedder.withLock { loaded throws -> any Embedder in
      if let loaded { return loaded }
      let embedder = try spec.makeEmbedder(environment: environment)
      loaded = embedder
      loadCount.add(1, ordering: .relaxed)
      return embedder
    }
  }

  /// How many embedders were loaded (one per spec that loaded).
  public var loads: Int { loadCount.load(ordering: .relaxed) }

  /// The specs whose embedder is loaded, in their text form, sorted.
  public var loadedSpecs: [String] {
    let slots = self.slots.withLock { Array($0) }
    return slots.filter { $0.value.embedder.withLock { $0 != nil } }.map(\.key.text).sorted()
  }
}
