import EngramTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Probes of the hostile round that held on the code they were tried on, kept as tests so
/// they keep holding: private modes under umask 000, malformed JSONL named by line with
/// nothing stored, abusive MCP messages each answered while the server keeps serving.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileHeldProbesTests {
  @Test func filesStayPrivateUnderUmaskZero() async throws {
    let scratch = try ScratchFolder()
    let db = scratch.path("open.sqlite")
    let binary = try EngramBinary.locate().path
    let script =
      "umask 000; \"$0\" init --db \"$1\" --model hashing && \"$0\" remember --db \"$1\" 'a private note'"
    let result = try await EngramBinary.run(
      URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script, binary, db], input: nil,
      environment: ProcessInfo.processInfo.environment.merging(ScratchFolder.environment) { $1 },
      directory: nil)
    #expect(result.status == 0, "\(result.standardError)")
    for suffix in ["", "-wal", "-shm", ".vectors"] where FileManager.default.fileExists(atPath: db + suffix) {
      let mode = try #require(
        try FileManager.default.attributesOfItem(atPath: db + suffix)[.posixPermissions] as? Int)
      #expect(mode & 0o077 == 0, "\(suffix): \(String(mode, radix: 8))")
    }
  }

  @Test func malformedJSONLIsNamedByLineAndNothingIsStored() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let lines = [
      #"{"role":"user","content":"first"}"#, #"{"role":"user","content":"second"}"#,
      #"{"role":"user","content":"third"}"#, #"{"role":"user","content":"#,
    ]
    let file = try scratch.write("bad.jsonl", lines.joined(separator: "\n") + "\n")
    let result = try await engram("ingest", "--db", db, file)
    #expect(result.status == 1)
    #expect(result.standardError.contains("bad.jsonl:4:"), "\(result.standardError)")
    let stats = try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)
    #expect(stats["messages"] as? Int == 0)
  }

  @Test func abusiveMCPMessagesAreEachAnsweredAndServingGoesOn() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let abusive: [(line: String, code: Int?)] = [
      ("not json at all", -32700),
      (#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#, -32600),
      (#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#, -32600),
      (#"{"jsonrpc":"1.0","id":3,"method":"tools/list"}"#, -32600),
      (#"{"jsonrpc":"2.0","id":4}"#, -32600),
      (#"{"jsonrpc":"2.0","id":5,"method":17}"#, -32600),
      (#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1,2]}"#, -32602),
      (#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#, -32601),
      (#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}"#, -32602),
      (String(repeating: "[", count: 100_000), -32700),
      ("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\u{0}\"}", -32700),
    ]
    var lines = abusive.map(\.line)
    // Invalid tool arguments are a tool result with isError, not a protocol error.
    lines.append(
      #"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"x","k":0}}}"#
    )
    lines.append(#"{"jsonrpc":"2.0","id":12,"method":"tools/list"}"#)
    let result = try await engram("mcp", "--db", db, input: lines.joined(separator: "\n") + "\n")
    #expect(result.status == 0, "\(result.standardError)")
    let responses = try jsonLines(result.standardOutput)
    #expect(responses.count == lines.count)
    for (index, probe) in abusive.enumerated() where index < responses.count {
      let error = responses[index]["error"] as? [String: Any]
      #expect(error?["code"] as? Int == probe.code, "\(probe.line.prefix(60)): \(responses[index])")
    }
    #expect(((responses.dropLast().last?["result"] as? [String: Any])?["isError"] as? Bool) == true)
    #expect((responses.last?["result"] as? [String: Any])?["tools"] != nil)
  }
}
