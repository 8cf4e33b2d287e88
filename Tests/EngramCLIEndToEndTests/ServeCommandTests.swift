import EngramTestSupport
import Foundation
import Testing

/// `engram serve`: the refusals that happen before anything listens (the app itself is covered
/// by WebAPITests and, in a real browser, by scripts/web-e2e.sh).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ServeCommandTests {
  @Test func badOptionsAreUsageErrors() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    let cases: [([String], String)] = [
      (["--http", "nonsense"], "--http"), (["--llm-model", "m"], "--llm"),
      (["--llm", "http://192.0.2.1:11434", "--llm-model", "m"], "plain http"),
    ]
    for (arguments, named) in cases {
      let result = try await EngramBinary.run(
        ["serve", "--db", db] + arguments, environment: ScratchFolder.environment)
      #expect(result.status == 64, "\(arguments): \(result.standardError)")
      #expect(result.standardError.contains(named), "\(arguments): \(result.standardError)")
    }
  }

  @Test func aNonLoopbackAddressNeedsAToken() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    var environment = ScratchFolder.environment
    environment["ENGRAM_MCP_TOKEN"] = ""
    let result = try await EngramBinary.run(
      ["serve", "--db", db, "--http", "0.0.0.0:0"], environment: environment)
    #expect(result.status == 1)
    #expect(result.standardError.contains("ENGRAM_MCP_TOKEN"))
  }
}
