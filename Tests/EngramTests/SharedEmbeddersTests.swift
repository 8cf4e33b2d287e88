import Engram
import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

/// ``SharedEmbedders``: one embedder per spec, whatever the number of users who ask.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct SharedEmbeddersTests {
  @Test func eachSpecIsLoadedOnceAndSharedByEveryoneWhoAsks() async throws {
    let embedders = SharedEmbedders(environment: [:])
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<200 {
        group.addTask {
          let spec = EmbedderSpec.hashing(dimension: index.isMultiple(of: 2) ? 384 : 64)
          let embedder = try await BlockingWork.run { try embedders.embedder(for: spec) }
          #expect(embedder.dimension == (index.isMultiple(of: 2) ? 384 : 64))
        }
      }
      try await group.waitForAll()
    }
    #expect(embedders.loads == 2)
    #expect(embedders.loadedSpecs == ["hashing", "hashing:64"])
  }

  @Test func aSpecThatFailsToLoadIsTriedAgainAndSaysWhy() throws {
    let embedders = SharedEmbedders(environment: ["ENGRAM_MODEL_DIR": "/nonexistent/engram-model"])
    for _ in 0..<2 {
      #expect(throws: EmbeddingError.self) {
        try embedders.embedder(for: .directory("/nonexistent/engram-model"))
      }
    }
    #expect(embedders.loads == 0)
    #expect(embedders.loadedSpecs.isEmpty)
  }
}
