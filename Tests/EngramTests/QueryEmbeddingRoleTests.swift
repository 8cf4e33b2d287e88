import EngramEmbeddings
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram

/// An embedder that counts which texts it embedded as queries and which as stored texts
/// (multilingual-e5 prefixes them differently).
final class RoleCountingEmbedder: Embedder {
  let base = try! HashingEmbedder(dimension: 64)
  let queries = Mutex<[String]>([])
  let passages = Mutex<[String]>([])

  var modelID: String { base.modelID }
  var dimension: Int { base.dimension }
  var maxSequenceLength: Int { base.maxSequenceLength }

  func embed(_ texts: [String]) async throws -> [[Float]] {
    passages.withLock { $0 += texts }
    return try await base.embed(texts)
  }

  func embedQueries(_ texts: [String]) async throws -> [[Float]] {
    queries.withLock { $0 += texts }
    return try await base.embed(texts)
  }
}

@Suite("Queries and stored texts are embedded in their roles", .timeLimit(.minutes(5)), .watchdog)
struct QueryEmbeddingRoleTests {
  @Test("a search embeds its query with embedQueries, a remembered text with embed")
  func roles() async throws {
    let folder = try TemporaryFolder()
    let embedder = RoleCountingEmbedder()
    let engine = try MemoryEngine(
      path: folder.path("m.sqlite"), configuration: EngramConfiguration(embedder: embedder))
    defer { engine.close() }
    _ = try await engine.memories.remember("Alice goes rock climbing every Saturday")
    _ = try await engine.search("who climbs rocks", k: 1, mode: .vector)
    _ = try await engine.embedQueries(["when is the dentist", "who climbs rocks"])
    #expect(embedder.queries.withLock { $0 } == ["who climbs rocks", "when is the dentist"])
    #expect(embedder.passages.withLock { $0.contains("who climbs rocks") } == false)
    #expect(embedder.passages.withLock { $0.contains { $0.contains("rock climbing") } })
  }
}
