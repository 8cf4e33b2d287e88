import EngramTestSupport
import Foundation
import Testing

/// `engram mcp --http`: the refusals that happen before anything listens (the served protocol is
/// covered by EngramHTTPTests and by scripts/mcp-e2e.sh with the official Python SDK).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct MCPHTTPCommandTests {
  @Test func httpOptionsNeedAValidAddress() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    for arguments in [
      ["--sse"], ["--allow-origin", "https://app.example.com"], ["--http", "nonsense"],
      ["--allow-host", "box.lan"], ["--token-file", "t"],
    ] {
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

  static let initialize =
    #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#
    + #""capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
  static let headers = [
    ("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
  ]

  @Test func aTokenFileGuardsTheEndpointAndAForeignHostIsRefused() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    let file = folder.path("mcp.token")
    let server = try await RunningServer.start(
      ["mcp", "--db", db, "--http", "127.0.0.1:0", "--token-file", file], folder: folder)
    do {
      #expect(
        server.standardError.contains("Authorization: Bearer $(cat \(file))"), "\(server.standardError)")
      let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(
        in: .whitespacesAndNewlines)
      let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
      #expect(mode == 0o600)
      let bare = await server.send("POST", "/mcp", headers: Self.headers, body: Self.initialize)
      #expect(bare.status == 401)
      let wrong = await server.send(
        "POST", "/mcp", headers: Self.headers + [("Authorization", "Bearer \(token)x")], body: Self.initialize
      )
      #expect(wrong.status == 401)
      let good = await server.send(
        "POST", "/mcp", headers: Self.headers + [("Authorization", "Bearer \(token)")], body: Self.initialize)
      #expect(good.status == 200)
      let rebound = await server.send(
        "POST", "/mcp",
        headers: [("Host", "evil.example:\(server.port)"), ("Authorization", "Bearer \(token)")]
          + Self.headers,
        body: Self.initialize)
      #expect(rebound.status == 421)
      #expect(rebound.body.contains("jsonrpc"))
      // A browser-based client on another loopback port may ask first.
      let preflight = await server.send(
        "OPTIONS", "/mcp",
        headers: [("Origin", "http://localhost:6274"), ("Access-Control-Request-Method", "POST")])
      #expect(preflight.status == 204)
      #expect(preflight.header("Access-Control-Allow-Origin") == "http://localhost:6274")
    }
    await server.stop()
  }

  @Test func theEnvironmentTokenStillWorksAndANonLoopbackAddressNeedsAnAllowedHost() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    let token = "environment-token-0123456789"
    let server = try await RunningServer.start(
      ["mcp", "--db", db, "--http", "127.0.0.1:0"], folder: folder, environment: ["ENGRAM_MCP_TOKEN": token])
    let bare = await server.send("POST", "/mcp", headers: Self.headers, body: Self.initialize)
    #expect(bare.status == 401)
    let good = await server.send(
      "POST", "/mcp", headers: Self.headers + [("Authorization", "Bearer \(token)")], body: Self.initialize)
    #expect(good.status == 200)
    await server.stop()
    var environment = ScratchFolder.environment
    environment["ENGRAM_MCP_TOKEN"] = token
    let noHost = try await EngramBinary.run(
      ["mcp", "--db", db, "--http", "0.0.0.0:0"], environment: environment)
    #expect(noHost.status == 64)
    #expect(noHost.standardError.contains("--allow-host"))
  }
}
