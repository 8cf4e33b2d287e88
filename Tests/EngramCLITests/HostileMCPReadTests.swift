import Engram
import EngramEmbeddings
import EngramHTTP
import EngramMCP
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Issue 17, finding 6, for MCP: the tools declared read-only answer at once while another
/// process holds the write lock (memory_search used to write access statistics, wait 5 s
/// and fail "locked"); a memory the user cannot write is served read-only.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileMCPReadTests {
  @Test func readToolsAnswerWhileAnotherProcessHoldsTheWriteLock() async throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("m.sqlite")
    // A tool that waited for the lock would fail "locked" after this long.
    let engine = try MemoryEngine(
      path: path,
      configuration: EngramConfiguration(
        embedder: try HashingEmbedder(dimension: 64), busyTimeout: .seconds(3)))
    defer { engine.close() }
    let server = MCPServer(
      info: ServerInfo(name: "engram", version: "test"), provider: EngineToolProvider(engine: engine),
      log: { _ in })
    let id = try await engine.memories.remember("Ann is allergic to peanuts", kind: .fact)

    let other = try Connection(path: path)
    try other.execute("BEGIN IMMEDIATE")
    defer { try? other.execute("ROLLBACK") }
    for (name, arguments) in [
      ("memory_search", ["query": "peanuts"] as JSONValue), ("memory_context", ["query": "peanuts"]),
      ("memory_stats", [:]),
    ] {
      let request: JSONValue = [
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": ["name": .string(name), "arguments": arguments],
      ]
      let line = try #require(await server.handle(line: request.jsonText))
      let result = try #require(try JSONValue.parse(line)["result"])
      #expect(result["isError"] != true, "\(name): \(result)")
      if name == "memory_search" {
        #expect(result["structuredContent"]?["hits"]?[0]?["id"]?.intValue == Int(id))
      }
    }
  }

  @Test func aMemoryTheUserCannotWriteIsServedReadOnly() async throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("memory.sqlite")
    let created = try MemoryEngine(
      path: path, configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    await created.close()
    let writable = CommandContext(
      toolName: "engram", output: CapturedOutput(), error: CapturedOutput(),
      input: LineReader(text: "", showsPrompt: false), terminal: Terminal(), environment: ["ENGRAM_DB": path])
    #expect(writable.databasePath == path)
    #expect(try MCPCommand.servingMode(writable) == .readWrite)
    #expect(chmod(path, 0o444) == 0)
    defer { chmod(path, 0o600) }
    #expect(try MCPCommand.servingMode(writable) == .readOnly)
  }
}
