import EngramTestSupport
import Foundation
import Testing

/// `engram mcp --http`: the refusals that happen before anything listens (the served protocol is
/// covered by EngramMCPTests and by scripts/mcp-e2e.sh with the official Python SDK).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct MCPHTTPCommandTests {
  @Test func httpOptionsNeedAValidAddress() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    for arguments in [["--sse"], ["--allow-origin", "https://app.example.com"], ["--http", "nonsense"]] {
      let result = try await EngramBinary.run(
        ["mcp", "--db", db] + arguments, environment: ScratchFolder.environment)
      #expect(result.status == 64, "\(arguments): \(result.standardError)")
      #expect(result.standardError.contains("--http"), "\(arguments)")
    }
  }

  @Test func aNonLoopbackAddressNeedsALongEnoughToken() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    var environment = ScratchFolder.environment
    environment["ENGRAM_MCP_TOKEN"] = ""
    let missing = try await EngramBinary.run(
      ["mcp", "--db", db, "--http", "0.0.0.0:0"], environment: environment)
    #expect(missing.status != 0)
    #expect(missing.standardError.contains("ENGRAM_MCP_TOKEN"))
    environment["ENGRAM_MCP_TOKEN"] = "short"
    let short = try await EngramBinary.run(
      ["mcp", "--db", db, "--http", "0.0.0.0:0"], environment: environment)
    #expect(short.status != 0)
    #expect(short.standardError.contains("at least 16 characters"))
  }
}
