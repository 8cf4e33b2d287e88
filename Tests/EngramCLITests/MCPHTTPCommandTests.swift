import Foundation
import Testing

/// `engram mcp --http`: the refusals that happen before anything listens (the served protocol is
/// covered by EngramMCPTests and by scripts/mcp-e2e.sh with the official Python SDK).
@Suite struct MCPHTTPCommandTests {
  @Test func httpOptionsNeedAValidAddress() throws {
    let folder = try ScratchFolder()
    let db = try folder.initializedDatabase()
    for arguments in [["--sse"], ["--allow-origin", "https://app.example.com"], ["--http", "nonsense"]] {
      let result = try EngramBinary.run(
        ["mcp", "--db", db] + arguments, environment: ScratchFolder.environment)
      #expect(result.status == 64, "\(arguments): \(result.standardError)")
      #expect(result.standardError.contains("--http"), "\(arguments)")
    }
  }

  @Test func aNonLoopbackAddressNeedsALongEnoughToken() throws {
    let folder = try ScratchFolder()
    let db = try folder.initializedDatabase()
    var environment = ScratchFolder.environment
    environment["ENGRAM_MCP_TOKEN"] = ""
    let missing = try EngramBinary.run(["mcp", "--db", db, "--http", "0.0.0.0:0"], environment: environment)
    #expect(missing.status != 0)
    #expect(missing.standardError.contains("ENGRAM_MCP_TOKEN"))
    environment["ENGRAM_MCP_TOKEN"] = "short"
    let short = try EngramBinary.run(["mcp", "--db", db, "--http", "0.0.0.0:0"], environment: environment)
    #expect(short.status != 0)
    #expect(short.standardError.contains("at least 16 characters"))
  }
}
