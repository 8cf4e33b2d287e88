import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Issue 37, finding 5: after another process re-embeds the memory with another model, a
/// long-running engine (an MCP server, say) said nothing: vector search returned no hits and
/// hybrid quietly became keyword. Its searches now fail with a sentence instead.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileReindexElsewhereTests {
  @Test func aSearchAfterAnotherProcessSwitchedModelsSaysSoInsteadOfFindingNothing() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    // The long-running engine, with a hashing embedder of 256 dimensions.
    let server = try MemoryEngine(path: path, configuration: hashingConfiguration(dimension: 256))
    defer { server.close() }
    let id = try await server.memories.remember("Ann tunes pianos on Saturdays", kind: .fact)
    #expect(try await server.search("pianos", k: 1, mode: .vector, recordAccess: false).first?.id == id)

    // Another engine on its own connections (as another process is) re-embeds with 64.
    let other = try await MemoryEngine.reindex(
      path: path, configuration: hashingConfiguration(dimension: 64), embedderSpec: "hashing:64")
    await other.close()

    for mode in [SearchMode.vector, .hybrid] {
      await #expect {
        _ = try await server.search("pianos", k: 1, mode: mode, recordAccess: false)
      } throws: { error in
        guard case .embedderChangedElsewhere(_, 64)? = error as? EngramError else { return false }
        // A sentence a person reads, naming what to do.
        return String(describing: error).contains("restart")
      }
    }
    // What the engine reports of its vectors would be stale: asking says so too.
    await #expect {
      try await server.maintenance.checkEmbedderCurrent()
    } throws: { error in
      guard case .embedderChangedElsewhere(_, 64)? = error as? EngramError else { return false }
      return String(describing: error).contains("restart")
    }
    // A keyword search needs no vectors and still answers.
    #expect(try await server.search("pianos", k: 1, mode: .keyword, recordAccess: false).first?.id == id)
  }
}
