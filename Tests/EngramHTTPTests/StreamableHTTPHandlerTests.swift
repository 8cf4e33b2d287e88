import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramHTTP

/// The Streamable HTTP protocol rules, request by request (no sockets).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct StreamableHTTPHandlerTests {
  static let token = "test-token-0123456789"

  static func handler(
    token: String? = StreamableHTTPHandlerTests.token, mode: HTTPTransportConfiguration.ResponseMode = .json,
    maximumSessions: Int = 1000, allowedOrigins: Set<String> = []
  ) -> StreamableHTTPHandler {
    var configuration = HTTPTransportConfiguration(host: "127.0.0.1", port: 0, bearerToken: token)
    configuration.responseMode = mode
    configuration.maximumSessions = maximumSessions
    configuration.allowedOrigins = allowedOrigins
    return StreamableHTTPHandler(configuration: configuration, log: { _ in }) {
      MCPServer(
        info: ServerInfo(name: "engram", version: "0.1.0"), provider: FakeToolProvider(), log: { _ in })
    }
  }

  static let initialize =
    #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#

  static func post(
    _ body: String, session: String? = nil, version: String? = nil,
    token: String? = StreamableHTTPHandlerTests.token,
    extra: [(String, String)] = []
  ) -> HTTPRequest {
    var headers: [(name: String, value: String)] = [
      ("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
    ]
    if let token { headers.append(("Authorization", "Bearer \(token)")) }
    if let session { headers.append(("MCP-Session-Id", session)) }
    if let version { headers.append(("MCP-Protocol-Version", version)) }
    headers += extra.map { (name: $0.0, value: $0.1) }
    return HTTPRequest(method: "POST", path: "/mcp", headers: headers, body: Data(body.utf8))
  }

  static func json(_ response: HTTPResponse) throws -> JSONValue {
    try JSONValue(parsing: response.bodyBytes)
  }

  /// Initializes a session; returns its id.
  static func open(_ handler: StreamableHTTPHandler) async throws -> String {
    let response = await handler.respond(to: post(initialize))
    #expect(response.status == 200)
    return try #require(response.header("MCP-Session-Id"))
  }

  @Test func initializeOpensASessionWithASecureID() async throws {
    let handler = Self.handler()
    let response = await handler.respond(to: Self.post(Self.initialize))
    #expect(response.status == 200)
    #expect(response.header("Content-Type") == "application/json")
    let id = try #require(response.header("MCP-Session-Id"))
    #expect(id.count == 64 && id.allSatisfy(\.isHexDigit))
    #expect(try Self.json(response)["result"]?["protocolVersion"] == "2025-11-25")
    let second = try await Self.open(handler)
    #expect(second != id)
    #expect(handler.sessionCount == 2)
  }

  @Test func aFailedInitializeOpensNoSession() async throws {
    let handler = Self.handler()
    let response = await handler.respond(
      to: Self.post(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#))
    #expect(response.status == 200)
    #expect(try Self.json(response)["error"]?["code"] == .int(JSONRPCError.invalidParamsCode))
    #expect(response.header("MCP-Session-Id") == nil)
    #expect(handler.sessionCount == 0)
  }

  @Test func requestsNeedTheirSession() async throws {
    let handler = Self.handler()
    let session = try await Self.open(handler)
    let list = #"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
    #expect(await handler.respond(to: Self.post(list)).status == 400)
    #expect(
      await handler.respond(to: Self.post(list, session: String(repeating: "a", count: 64))).status == 404)
    let listed = await handler.respond(to: Self.post(list, session: session, version: "2025-11-25"))
    #expect(listed.status == 200)
    #expect(try Self.json(listed)["result"]?["tools"]?[0]?["name"] == "echo")
    let call =
      #"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#
    let called = await handler.respond(to: Self.post(call, session: session))
    #expect(try Self.json(called)["result"]?["structuredContent"]?["text"] == "hi")
    // initialize inside a session is refused: a new session starts without the header.
    #expect(await handler.respond(to: Self.post(Self.initialize, session: session)).status == 400)
  }

  @Test func notificationsAndResponsesAreAccepted() async throws {
    let handler = Self.handler()
    let session = try await Self.open(handler)
    let notification = await handler.respond(
      to: Self.post(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, session: session))
    #expect(notification.status == 202)
    #expect(notification.bodyBytes.isEmpty)
    let response = await handler.respond(
      to: Self.post(#"{"jsonrpc":"2.0","id":9,"result":{}}"#, session: session))
    #expect(response.status == 202)
  }

  @Test func theProtocolVersionHeaderIsChecked() async throws {
    let handler = Self.handler()
    let session = try await Self.open(handler)
    let ping = #"{"jsonrpc":"2.0","id":2,"method":"ping"}"#
    #expect(await handler.respond(to: Self.post(ping, session: session, version: "1999-01-01")).status == 400)
    // Supported, but not what this session negotiated.
    #expect(await handler.respond(to: Self.post(ping, session: session, version: "2025-06-18")).status == 400)
    #expect(await handler.respond(to: Self.post(ping, session: session, version: "2025-11-25")).status == 200)
    #expect(await handler.respond(to: Self.post(ping, session: session)).status == 200)
  }

  @Test func theBearerTokenIsRequiredWhenConfigured() async throws {
    let handler = Self.handler()
    let missing = await handler.respond(to: Self.post(Self.initialize, token: nil))
    #expect(missing.status == 401)
    #expect(missing.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
    #expect(await handler.respond(to: Self.post(Self.initialize, token: Self.token + "x")).status == 401)
    #expect(
      await handler.respond(to: Self.post(Self.initialize, token: String(Self.token.dropLast()))).status
        == 401)
    #expect(await handler.respond(to: Self.post(Self.initialize, token: "")).status == 401)
    let basic = Self.post(Self.initialize, token: nil, extra: [("Authorization", "Basic \(Self.token)")])
    #expect(await handler.respond(to: basic).status == 401)
    let lowercase = Self.post(Self.initialize, token: nil, extra: [("Authorization", "bearer \(Self.token)")])
    #expect(await handler.respond(to: lowercase).status == 200)
    // Without a configured token (loopback), none is asked for.
    #expect(await Self.handler(token: nil).respond(to: Self.post(Self.initialize, token: nil)).status == 200)
  }

  @Test(arguments: [
    ("http://evil.example", 403), ("null", 403), ("http://127.0.0.1.evil.example", 403),
    ("file://localhost", 403),
    ("http://localhost:3000", 200), ("https://127.0.0.1", 200), ("http://[::1]:8080", 200),
    ("https://app.example.com", 200),
  ])
  func originsAreChecked(origin: String, status: Int) async throws {
    let handler = Self.handler(allowedOrigins: ["https://app.example.com"])
    let response = await handler.respond(to: Self.post(Self.initialize, extra: [("Origin", origin)]))
    #expect(response.status == status)
  }

  @Test func otherMethodsPathsAndMediaTypesAreRefused() async throws {
    let handler = Self.handler()
    let auth: [(name: String, value: String)] = [("Authorization", "Bearer \(Self.token)")]
    let get = await handler.respond(to: HTTPRequest(method: "GET", path: "/mcp", headers: auth))
    #expect(get.status == 405)
    #expect(get.header("Allow") == "POST, DELETE")
    #expect(await handler.respond(to: HTTPRequest(method: "PUT", path: "/mcp", headers: auth)).status == 405)
    var elsewhere = Self.post(Self.initialize)
    elsewhere.path = "/other"
    #expect(await handler.respond(to: elsewhere).status == 404)
    let text = Self.post(Self.initialize, extra: [])
    var plain = text
    plain.headers = plain.headers.filter { $0.name != "content-type" } + [("content-type", "text/plain")]
    #expect(await handler.respond(to: plain).status == 415)
    var charset = text
    charset.headers =
      charset.headers.filter { $0.name != "content-type" } + [
        ("content-type", "application/json; charset=utf-8")
      ]
    #expect(await handler.respond(to: charset).status == 200)
    var jsonOnly = text
    jsonOnly.headers = jsonOnly.headers.filter { $0.name != "accept" } + [("accept", "application/json")]
    #expect(await handler.respond(to: jsonOnly).status == 406)
    var anything = text
    anything.headers = anything.headers.filter { $0.name != "accept" } + [("accept", "*/*")]
    #expect(await handler.respond(to: anything).status == 200)
  }

  @Test func malformedMessagesGetJSONRPCErrorsWithoutID() async throws {
    let handler = Self.handler()
    let session = try await Self.open(handler)
    for (body, code) in [
      ("{not json", JSONRPCError.parseErrorCode),
      ("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600),
      ("42", -32600), (#"{"jsonrpc":"2.0","id":1}"#, -32600),
    ] {
      let response = await handler.respond(to: Self.post(body, session: session))
      #expect(response.status == 400, "\(body)")
      let error = try Self.json(response)
      #expect(error["error"]?["code"] == .int(code), "\(body)")
      #expect(error["id"] == nil)
    }
  }

  @Test func deleteEndsASession() async throws {
    let handler = Self.handler()
    let session = try await Self.open(handler)
    let auth: [(name: String, value: String)] = [("Authorization", "Bearer \(Self.token)")]
    #expect(
      await handler.respond(to: HTTPRequest(method: "DELETE", path: "/mcp", headers: auth)).status == 400)
    let deleted = await handler.respond(
      to: HTTPRequest(method: "DELETE", path: "/mcp", headers: auth + [("MCP-Session-Id", session)]))
    #expect(deleted.status == 204)
    #expect(handler.sessionCount == 0)
    #expect(
      await handler.respond(to: Self.post(#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, session: session))
        .status == 404)
    let again = await handler.respond(
      to: HTTPRequest(method: "DELETE", path: "/mcp", headers: auth + [("MCP-Session-Id", session)]))
    #expect(again.status == 404)
  }

  @Test func theLeastRecentlyUsedSessionGoesAtTheLimit() async throws {
    let handler = Self.handler(maximumSessions: 2)
    let first = try await Self.open(handler)
    let second = try await Self.open(handler)
    let ping = #"{"jsonrpc":"2.0","id":2,"method":"ping"}"#
    // Using the first makes the second the least recently used.
    #expect(await handler.respond(to: Self.post(ping, session: first)).status == 200)
    _ = try await Self.open(handler)
    #expect(handler.sessionCount == 2)
    #expect(await handler.respond(to: Self.post(ping, session: second)).status == 404)
    #expect(await handler.respond(to: Self.post(ping, session: first)).status == 200)
  }

  @Test func eventStreamModeSendsTheResponseAsOneEvent() async throws {
    let handler = Self.handler(mode: .eventStream)
    let response = await handler.respond(to: Self.post(Self.initialize))
    #expect(response.status == 200)
    #expect(response.header("Content-Type") == "text/event-stream")
    let session = try #require(response.header("MCP-Session-Id"))
    let call =
      #"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hey"}}}"#
    let streamed = await handler.respond(to: Self.post(call, session: session))
    guard case .eventStream(let produce) = streamed.body else {
      Issue.record("expected an event stream")
      return
    }
    let event = try JSONValue(parsing: await produce())
    #expect(event["id"] == 3)
    #expect(event["result"]?["structuredContent"]?["text"] == "hey")
    // Notifications are still 202 without a body.
    let notification = await handler.respond(
      to: Self.post(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, session: session))
    #expect(notification.status == 202)
  }

  @Test func tokensCompareWhole() {
    let equal = StreamableHTTPHandler.constantTimeEqual
    #expect(equal(Array("abc".utf8), Array("abc".utf8)))
    #expect(!equal(Array("abd".utf8), Array("abc".utf8)))
    #expect(!equal(Array("ab".utf8), Array("abc".utf8)))
    #expect(!equal(Array("abcabc".utf8), Array("abc".utf8)))
    #expect(!equal([], Array("abc".utf8)))
    #expect(!equal(Array("abc".utf8), []))
    #expect(equal([], []))
  }

  @Test func aPreflightIsAnsweredForAllowedOriginsOnly() async throws {
    let handler = Self.handler()
    func preflight(_ origin: String?) async -> HTTPResponse {
      var headers = [(name: "Access-Control-Request-Method", value: "POST")]
      if let origin { headers.append((name: "Origin", value: origin)) }
      return await handler.respond(to: HTTPRequest(method: "OPTIONS", path: "/mcp", headers: headers))
    }
    let local = await preflight("http://localhost:6274")
    #expect(local.status == 204)
    #expect(local.header("Access-Control-Allow-Origin") == "http://localhost:6274")
    #expect(local.header("Access-Control-Allow-Headers")?.contains("MCP-Session-Id") == true)
    #expect(await preflight("http://evil.example").status == 403)
    #expect(await preflight(nil).status == 403)
    // The answer itself is readable by that page.
    let answer = await handler.respond(
      to: Self.post(Self.initialize, extra: [("Origin", "http://localhost:6274")]))
    #expect(answer.status == 200)
    #expect(answer.header("Access-Control-Allow-Origin") == "http://localhost:6274")
    #expect(answer.header("Access-Control-Expose-Headers")?.contains("MCP-Session-Id") == true)
  }

  @Test func aMessageNestedTooDeepIsSaidToBe() async throws {
    let handler = Self.handler()
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    let response = await handler.respond(to: Self.post(deep))
    #expect(response.status == 400)
    let error = try JSONValue(parsing: response.bodyBytes)["error"]
    #expect(error?["code"]?.intValue == JSONRPCError.parseErrorCode)
    #expect(error?["message"]?.stringValue?.contains("nested more than") == true)
  }
}
