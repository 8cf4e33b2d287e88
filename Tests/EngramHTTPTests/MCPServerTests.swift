import EngramCore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramHTTP

/// A provider with one echo tool and one that always fails, for driving the server.
struct FakeToolProvider: ToolProvider {
  let tools: [MCPTool] = [
    MCPTool(
      name: "echo", title: "Echo", description: "Returns its text.",
      inputSchema: [
        "type": "object",
        "properties": [
          "text": ["type": "string", "minLength": 1], "times": ["type": "integer", "minimum": 1],
        ],
        "required": ["text"], "additionalProperties": false,
      ],
      outputSchema: ["type": "object", "properties": ["text": ["type": "string"]]],
      annotations: ToolAnnotations(readOnlyHint: true, idempotentHint: true)),
    MCPTool(name: "explode", description: "Always fails."),
  ]

  func call(name: String, arguments: [String: JSONValue]) async throws -> ToolResult {
    switch name {
    case "echo":
      let text = String(
        repeating: arguments["text"]?.stringValue ?? "", count: arguments["times"]?.intValue ?? 1)
      return .structured(["text": .string(text)])
    default:
      throw ToolError("explode always fails; do not call it")
    }
  }
}

/// Collects sent messages.
final class CollectingSink: MessageSink {
  let messages = Mutex<[Data]>([])

  func send(_ message: Data) throws(TransportError) {
    messages.withLock { $0.append(message) }
  }

  var decoded: [JSONValue] {
    messages.withLock { $0 }.compactMap { try? JSONValue(parsing: $0) }
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct MCPServerTests {
  let server = MCPServer(
    info: ServerInfo(name: "engram", version: "0.1.0", title: "Engram", instructions: "Use memory_search."),
    provider: FakeToolProvider(), log: { _ in })

  func send(_ line: String) async throws -> JSONValue? {
    guard let response = await server.handle(line: line) else { return nil }
    #expect(!response.contains("\n"))
    return try JSONValue(parsing: Data(response.utf8))
  }

  func request(_ method: String, id: JSONValue = 1, params: JSONValue? = nil) async throws -> JSONValue {
    var message: [String: JSONValue] = ["jsonrpc": "2.0", "id": id, "method": .string(method)]
    if let params { message["params"] = params }
    return try #require(try await send(JSONValue.object(message).jsonText))
  }

  @Test func initializeAcceptsASupportedVersion() async throws {
    let response = try await request(
      "initialize",
      params: [
        "protocolVersion": "2025-06-18", "capabilities": [:], "clientInfo": ["name": "test", "version": "1"],
      ])
    #expect(response["id"] == 1)
    #expect(response["jsonrpc"] == "2.0")
    let result = try #require(response["result"])
    #expect(result["protocolVersion"] == "2025-06-18")
    #expect(result["capabilities"] == ["tools": ["listChanged": false]])
    #expect(result["serverInfo"] == ["name": "engram", "version": "0.1.0", "title": "Engram"])
    #expect(result["instructions"] == "Use memory_search.")
    #expect(await server.negotiatedProtocolVersion == "2025-06-18")
    #expect(await server.clientInfo?["name"] == "test")
  }

  @Test(arguments: ["2024-11-05", "2099-01-01", ""])
  func initializeAnswersUnsupportedVersionsWithTheLatest(requested: String) async throws {
    let response = try await request(
      "initialize", id: "init", params: ["protocolVersion": .string(requested), "capabilities": [:]])
    #expect(response["id"] == "init")
    #expect(response["result"]?["protocolVersion"] == "2025-11-25")
  }

  @Test func initializeWithoutAVersionIsBadParams() async throws {
    let response = try await request("initialize", params: ["capabilities": [:]])
    #expect(response["error"]?["code"] == -32602)
    #expect(response["result"] == nil)
    #expect(await server.negotiatedProtocolVersion == nil)
  }

  @Test func initializedNotificationGetsNoResponse() async throws {
    #expect(await server.isInitialized == false)
    let response = try await send(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
    #expect(response == nil)
    #expect(await server.isInitialized)
  }

  @Test func unknownNotificationsAndClientResponsesGetNoResponse() async throws {
    #expect(try await send(#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}"#) == nil)
    #expect(try await send(#"{"jsonrpc":"2.0","method":"tools/call"}"#) == nil)
    #expect(try await send(#"{"jsonrpc":"2.0","id":7,"result":{}}"#) == nil)
    #expect(try await send("   ") == nil)
  }

  @Test func pingReturnsAnEmptyResult() async throws {
    let response = try await request("ping", id: 42)
    #expect(response == ["jsonrpc": "2.0", "id": 42, "result": [:]])
  }

  @Test func toolsListDescribesEveryTool() async throws {
    let response = try await request("tools/list", params: [:])
    let tools = try #require(response["result"]?["tools"]?.arrayValue)
    #expect(tools.count == 2)
    #expect(tools[0]["name"] == "echo")
    #expect(tools[0]["title"] == "Echo")
    #expect(tools[0]["inputSchema"]?["required"] == ["text"])
    #expect(tools[0]["outputSchema"]?["type"] == "object")
    #expect(tools[0]["annotations"] == ["readOnlyHint": true, "idempotentHint": true])
    #expect(tools[1]["annotations"] == nil)
    #expect(tools[1]["inputSchema"] == ["type": "object", "properties": [:]])
  }

  @Test func toolsListRejectsANonStringCursor() async throws {
    let response = try await request("tools/list", params: ["cursor": 3])
    #expect(response["error"]?["code"] == -32602)
  }

  @Test func toolsCallReturnsStructuredContentAndText() async throws {
    let response = try await request(
      "tools/call", params: ["name": "echo", "arguments": ["text": "ab", "times": 2]])
    let result = try #require(response["result"])
    #expect(result["isError"] == false)
    #expect(result["structuredContent"] == ["text": "abab"])
    #expect(result["content"] == [["type": "text", "text": #"{"text":"abab"}"#]])
  }

  @Test func toolFailureIsAnErrorResultNotAProtocolError() async throws {
    let response = try await request("tools/call", params: ["name": "explode"])
    #expect(response["error"] == nil)
    #expect(response["result"]?["isError"] == true)
    #expect(response["result"]?["content"]?[0]?["text"] == "explode always fails; do not call it")
  }

  @Test func invalidArgumentsAreAnActionableErrorResult() async throws {
    let response = try await request(
      "tools/call", params: ["name": "echo", "arguments": ["times": "two", "colour": "red"]])
    #expect(response["error"] == nil)
    let result = try #require(response["result"])
    #expect(result["isError"] == true)
    let text = try #require(result["content"]?[0]?["text"]?.stringValue)
    #expect(text.contains("missing required 'text'"))
    #expect(text.contains("'times' must be an integer"))
    #expect(text.contains("unknown 'colour' (allowed: text, times)"))
  }

  @Test func unknownToolIsInvalidParams() async throws {
    let response = try await request("tools/call", params: ["name": "nope", "arguments": [:]])
    #expect(response["error"]?["code"] == -32602)
    #expect(response["error"]?["message"]?.stringValue?.contains("nope") == true)
  }

  @Test(arguments: [
    ["arguments": ["text": "x"]] as JSONValue,  // no name
    ["name": 5] as JSONValue,
    ["name": "echo", "arguments": ["text"]] as JSONValue,
  ])
  func malformedToolCallsAreInvalidParams(params: JSONValue) async throws {
    let response = try await request("tools/call", params: params)
    #expect(response["error"]?["code"] == -32602)
  }

  @Test func paramsThatAreNotAnObjectAreInvalidParams() async throws {
    let response = try await request("ping", params: [1, 2])
    #expect(response["error"]?["code"] == -32602)
  }

  @Test func unknownMethodIsMethodNotFound() async throws {
    let response = try await request("resources/list", id: "r1")
    #expect(response["id"] == "r1")
    #expect(response["error"]?["code"] == -32601)
  }

  @Test(arguments: [#"{"jsonrpc":"2.0","id":1,"method":"#, "not json", "\u{FF}"])
  func unparsableLinesAreParseErrorsWithNullID(line: String) async throws {
    let response = try #require(try await send(line))
    #expect(response["id"] == .null)
    #expect(response["error"]?["code"] == -32700)
  }

  @Test func invalidUTF8IsAParseError() async throws {
    let response = try #require(await server.handle(message: Data([0x7B, 0x22, 0xC3, 0x28, 0x22, 0x7D])))
    #expect(try JSONValue(parsing: response)["error"]?["code"] == -32700)
  }

  @Test(arguments: [
    #"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, "[]", "42", #""ping""#,
    #"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, #"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
    #"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
  ])
  func invalidRequestsGetInvalidRequestWithNullID(line: String) async throws {
    let response = try #require(try await send(line))
    #expect(response["error"]?["code"] == -32600)
    #expect(response["id"] == .null)
  }

  @Test(arguments: [
    #"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, #"{"id":3,"method":"ping"}"#,
    #"{"jsonrpc":"2.0","id":3}"#, #"{"jsonrpc":"2.0","id":3,"method":7}"#,
  ])
  func invalidRequestsWithAnIDEchoIt(line: String) async throws {
    let response = try #require(try await send(line))
    #expect(response["error"]?["code"] == -32600)
    #expect(response["id"] == 3)
  }

  @Test func serveAnswersInOrderAndStopsAtEndOfInput() async throws {
    let lines = [
      #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#,
      #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
      "",
      #"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
      #"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
      "garbage",
    ]
    let input = AsyncStream<Data> { continuation in
      for line in lines { continuation.yield(Data(line.utf8)) }
      continuation.finish()
    }
    let sink = CollectingSink()
    try await server.serve(lines: input, sink: sink)
    let responses = sink.decoded
    #expect(responses.count == 4)
    #expect(responses.map { $0["id"] } == [1, 2, 3, .null])
    #expect(responses[2]["result"]?["structuredContent"] == ["text": "hi"])
    #expect(responses[3]["error"]?["code"] == -32700)
    #expect(await server.isInitialized)
  }

  @Test func serveStopsWhenTheSinkFails() async throws {
    struct BrokenSink: MessageSink {
      func send(_ message: Data) throws(TransportError) { throw .writeFailed(errno: EPIPE) }
    }
    let input = AsyncStream<Data> { continuation in
      continuation.yield(Data(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.utf8))
      continuation.finish()
    }
    await #expect(throws: TransportError.writeFailed(errno: EPIPE)) {
      try await server.serve(lines: input, sink: BrokenSink())
    }
  }
}
