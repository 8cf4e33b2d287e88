import EngramTestSupport
import Foundation
import Testing

/// Two `engram mcp` servers writing to one memory file at the same time lose nothing.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct MCPConcurrencyTests {
  /// The JSON-RPC lines of one client: initialize, then `count` remembers.
  static func script(client: String, count: Int) -> String {
    var lines = [
      #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"\#(client)","version":"1"}}}"#,
      #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ]
    for index in 1...count {
      lines.append(
        #"{"jsonrpc":"2.0","id":\#(index),"method":"tools/call","params":{"name":"memory_remember","arguments":{"content":"\#(client) note \#(index)"}}}"#
      )
    }
    return lines.joined(separator: "\n") + "\n"
  }

  @Test func twoServersWritingConcurrentlyKeepEveryMemory() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let binary = try EngramBinary.locate()
    var inputs: [(String, URL)] = []
    for client in ["alpha", "beta"] {
      let input = try scratch.write("\(client).in", Self.script(client: client, count: 50))
      inputs.append((input, URL(fileURLWithPath: scratch.path("\(client).out"))))
    }
    let environment = ProcessInfo.processInfo.environment.merging(ScratchFolder.environment) { $1 }
    let processes = try inputs.map { input, output in
      (
        try ChildProcess(
          binary.path, arguments: ["mcp", "--db", db], environment: environment,
          standardInput: .file(input), standardOutput: .file(output.path)),
        output
      )
    }
    for (process, output) in processes {
      #expect(await process.exit() == .exited(0))
      let responses = try jsonLines(String(decoding: try Data(contentsOf: output), as: UTF8.self))
      #expect(responses.count == 51)
      let failed = responses.filter { (($0["result"] as? [String: Any])?["isError"] as? Bool) == true }
      #expect(failed.isEmpty)
    }
    let stats = try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)
    #expect(stats["memories"] as? Int == 100)
    #expect(stats["embeddings"] as? Int == 100)
    let doctor = try await engram("doctor", "--db", db)
    #expect(doctor.status == 0)
  }
}
