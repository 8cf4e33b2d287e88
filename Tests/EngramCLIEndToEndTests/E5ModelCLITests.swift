import EngramTestSupport
import Foundation
import Testing

/// `--model e5-small` as a user runs it: the built binary with the installed
/// multilingual-e5-small (`make setup` installs it; a missing model fails these tests).
@Suite("engram with multilingual-e5-small", .timeLimit(.minutes(5)), .watchdog)
struct E5ModelCLITests {
  @Test("init --model e5-small records the spec, and a Chinese paraphrase finds its memory")
  func initAndQuery() async throws {
    let scratch = try ScratchFolder()
    let db = scratch.path("m.sqlite")
    let created = try await engram("init", "--db", db, "--model", "e5-small")
    #expect(created.status == 0, "\(created.standardError)")
    #expect(created.standardOutput.contains("multilingual-e5-small"))
    for text in ["周二上午十点要去看牙医", "The train to Shanghai leaves at noon", "我妹妹的生日是三月三号"] {
      #expect(try await engram("remember", "--db", db, text).status == 0)
    }
    let stats = try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)
    #expect(stats["embedder_spec"] as? String == "e5-small")
    let hits = try jsonLines(
      try await engram("query", "--db", db, "--mode", "vector", "-k", "1", "--json", "我什么时候看牙医")
        .standardOutput)
    #expect(hits.first?["text"] as? String == "周二上午十点要去看牙医")
  }

  @Test("reindex --model e5-small moves a memory to it")
  func reindex() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    #expect(try await engram("remember", "--db", db, "周二上午十点要去看牙医").status == 0)
    let moved = try await engram("reindex", "--db", db, "--model", "e5-small")
    #expect(moved.status == 0, "\(moved.standardError)")
    let stats = try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)
    #expect(stats["embedder_spec"] as? String == "e5-small")
  }

  @Test("a missing model file is one line naming make setup, and no memory is created")
  func missing() async throws {
    let scratch = try ScratchFolder()
    let db = scratch.path("m.sqlite")
    var environment = ScratchFolder.environment
    environment["ENGRAM_E5_MODEL"] = "/nonexistent/e5-small-q4.bin"
    let result = try await EngramBinary.run(
      ["init", "--db", db, "--model", "e5-small"], environment: environment)
    #expect(result.status == 1)
    let lines = result.standardError.split(separator: "\n")
    #expect(lines.count == 1)
    #expect(lines.first?.contains("make setup") == true)
    #expect(!FileManager.default.fileExists(atPath: db))
  }
}
