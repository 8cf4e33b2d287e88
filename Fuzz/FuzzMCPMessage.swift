// libFuzzer entry: the MCP server answers any line with one JSON-RPC line (or nothing, for a
// notification), never crashing and never emitting a newline. Built by scripts/fuzz.sh.
import Engram
import EngramHTTP
import Foundation
import Synchronization

struct EchoProvider: ToolProvider {
  let tools: [MCPTool] = [
    MCPTool(
      name: "echo", description: "Returns its text.",
      inputSchema: [
        "type": "object", "properties": ["text": ["type": "string", "minLength": 1]], "required": ["text"],
        "additionalProperties": false,
      ])
  ]

  func call(name: String, arguments: [String: JSONValue]) async throws -> ToolResult {
    .structured(["text": arguments["text"] ?? .null])
  }
}

let mcpServer = MCPServer(
  info: ServerInfo(name: "engram", version: "0"), provider: EchoProvider(), log: { _ in })

final class Answer: @unchecked Sendable {
  var line: String?
  let done = DispatchSemaphore(value: 0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMCPMessage(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let line = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
  let answer = Answer()
  Task.detached {
    answer.line = await mcpServer.handle(line: line)
    answer.done.signal()
  }
  answer.done.wait()
  if let response = answer.line {
    precondition(!response.contains("\n"), "a response spans lines")
    precondition((try? JSONValue(parsing: Data(response.utf8))) != nil, "a response is not JSON")
  }
  return 0
}
