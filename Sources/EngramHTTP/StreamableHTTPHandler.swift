import EngramCore
import Foundation
import Synchronization

/// The Streamable HTTP transport of MCP (revision 2025-11-25) without the sockets: turns one
/// HTTP request into one HTTP response. ``HTTPTransport`` feeds it from a listening socket;
/// tests call ``respond(to:)`` directly.
///
/// - One endpoint (`configuration.path`, `/mcp` by default). POST carries one JSON-RPC
///   message; a request gets its response as `application/json` or as a one-event
///   `text/event-stream` (``HTTPTransportConfiguration/ResponseMode``); a notification or a
///   response gets `202 Accepted`. GET answers 405 (this server sends nothing unprompted), as
///   the transport allows. DELETE ends a session. OPTIONS answers a CORS preflight from an
///   allowed origin (403 for others), and answers to such an origin carry
///   `Access-Control-Allow-Origin`, so a browser-based client can read them.
/// - Sessions: `initialize` (sent without `MCP-Session-Id`) creates one with its own
///   ``MCPServer`` and returns its id (256 random bits, hex) in `MCP-Session-Id`; every later
///   request must carry it (400 without, 404 for an ended or unknown one).
///   `MCP-Protocol-Version`, when sent, must be the session's negotiated version (else 400).
/// - Security: ``HTTPAccessPolicy`` (shared with the web app): an `Origin` header must name a
///   loopback host or an allowed origin (else 403, against DNS rebinding); with a bearer token
///   configured, `Authorization: Bearer TOKEN` must match it (compared in constant time; else 401).
/// - Many users: with an ``HTTPUserAdmission``, the bearer token selects the user (401 for
///   none); each request is served by the tools of that user's memory, or answered 503 with
///   `Retry-After` when the user is at a limit. A session belongs to the user who opened it:
///   any other token gets 404 for it, as for an unknown session.
public final class StreamableHTTPHandler: HTTPHandling {
  /// The transport's settings.
  public let configuration: HTTPTransportConfiguration
  private let makeServer: @Sendable () -> MCPServer
  private let admission: (any HTTPUserAdmission)?
  private let log: @Sendable (String) -> Void
  private let sessions = Mutex<[String: Session]>([:])
  private let access: HTTPAccessPolicy

  private struct Session {
    let server: MCPServer
    /// The user who opened it (nil without users).
    let user: String?
    var lastUsed: ContinuousClock.Instant
  }

  /// Creates a handler whose sessions each get a server from `makeServer`; with
  /// `admission`, each request's bearer token selects its user and the tools serving it.
  public init(
    configuration: HTTPTransportConfiguration, log: @escaping @Sendable (String) -> Void,
    admission: (any HTTPUserAdmission)? = nil, makeServer: @escaping @Sendable () -> MCPServer
  ) {
    self.configuration = configuration
    self.access = HTTPAccessPolicy(configuration)
    self.makeServer = makeServer
    self.admission = admission
    self.log = log
  }

  /// Whether requests select their user by token.
  public var servesManyUsers: Bool { admission != nil }

  /// The number of open sessions.
  public var sessionCount: Int { sessions.withLock { $0.count } }

  /// What the transport announces when it starts.
  public var announcement: String { "MCP (Streamable HTTP)" }

  /// The response to `request`.
  public func respond(to request: HTTPRequest) async -> HTTPResponse {
    guard request.path == configuration.path else {
      return .error(404, .invalidRequest("no MCP endpoint at \(request.path); use \(configuration.path)"))
    }
    let unauthorized = HTTPResponse.error(
      401, .invalidRequest("missing or wrong bearer token (Authorization: Bearer ...)"),
      headers: [("WWW-Authenticate", "Bearer realm=\"engram\"")])
    if request.method == "OPTIONS" { return preflight(request) }
    switch access.check(request) {
    case .origin(let origin)?:
      log("refused a request from origin \(origin)")
      return .error(403, .invalidRequest("origin \(origin) is not allowed"))
    case .token?:
      return withCORS(unauthorized, for: request)
    case nil:
      break
    }
    return withCORS(await admitted(request, unauthorized: unauthorized), for: request)
  }

  /// The answer to a CORS preflight (`OPTIONS` from a page of an allowed origin, such as a
  /// browser-based MCP inspector on another loopback port): what it may send; 403 for any
  /// other origin.
  private func preflight(_ request: HTTPRequest) -> HTTPResponse {
    guard let origin = request.header("origin"), access.checkOrigin(request) == nil else {
      return .error(
        403, .invalidRequest("OPTIONS is answered only for an Origin this server serves"),
        headers: [("Vary", "Origin")])
    }
    return HTTPResponse(
      status: 204,
      headers: [
        ("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
        ("Access-Control-Allow-Methods", "POST, DELETE"),
        (
          "Access-Control-Allow-Headers",
          "Authorization, Content-Type, Accept, MCP-Session-Id, MCP-Protocol-Version, Last-Event-ID"
        ),
        ("Access-Control-Max-Age", "600"),
      ])
  }

  /// `response`, readable by the page that sent `request` when its origin is allowed.
  private func withCORS(_ response: HTTPResponse, for request: HTTPRequest) -> HTTPResponse {
    guard let origin = request.header("origin") else { return response }
    var response = response
    response.headers += [
      ("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
      ("Access-Control-Expose-Headers", "MCP-Session-Id, WWW-Authenticate"),
    ]
    return response
  }

  private func admitted(_ request: HTTPRequest, unauthorized: HTTPResponse) async -> HTTPResponse {
    var ticket: HTTPAdmissionTicket?
    if let admission {
      guard let token = Self.bearerToken(request.header("authorization")) else { return unauthorized }
      switch await admission.admit(token: token) {
      case .admitted(let admitted): ticket = admitted
      case .unauthorized: return unauthorized
      case .busy(let seconds, let message):
        return .error(503, .invalidRequest(message), headers: [("Retry-After", String(max(1, seconds)))])
      case .failed(let message): return .error(500, .invalidRequest(message))
      }
    }
    let response: HTTPResponse
    switch request.method {
    case "POST":
      response = await post(request, ticket: ticket)
    case "DELETE":
      response = delete(request, user: ticket?.user)
    default:
      response = Self.methodNotAllowed(request)
    }
    // An event stream's producer holds the ticket until it has run.
    if case .bytes = response.body { ticket?.release() }
    return response
  }

  private static func methodNotAllowed(_ request: HTTPRequest) -> HTTPResponse {
    .error(
      405, .invalidRequest("\(request.method) is not served here; POST messages, DELETE to end a session"),
      headers: [("Allow", "POST, DELETE")])
  }

  /// The token of `Authorization: Bearer TOKEN`, or nil.
  public static func bearerToken(_ authorization: String?) -> String? {
    guard let authorization else { return nil }
    let parts = authorization.split(separator: " ", maxSplits: 1)
    guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
    let token = parts[1].trimmingCharacters(in: .whitespaces)
    return token.isEmpty ? nil : token
  }

  // MARK: POST

  private func post(_ request: HTTPRequest, ticket: HTTPAdmissionTicket?) async -> HTTPResponse {
    let contentType = Self.mediaType(request.header("content-type"))
    guard contentType == "application/json" else {
      return .error(415, .invalidRequest("Content-Type must be application/json"))
    }
    let accepted = Set(
      (request.header("accept") ?? "").split(separator: ",").map { Self.mediaType(String($0)) })
    let acceptsAll = accepted.contains("*/*")
    guard acceptsAll || (accepted.contains("application/json") && accepted.contains("text/event-stream"))
    else {
      return .error(406, .invalidRequest("Accept must list application/json and text/event-stream"))
    }
    let message: JSONValue
    do {
      message = try JSONValue(parsing: request.body)
    } catch {
      return .error(400, .parseError(error.isNestedTooDeep ? error.reason : nil))
    }
    guard case .object(let members) = message else {
      if case .array = message { return .error(400, .invalidRequest("batch requests are not supported")) }
      return .error(400, .invalidRequest("a message must be a JSON object"))
    }
    let method = members["method"]?.stringValue
    let isRequest = method != nil && members["id"] != nil
    if method == nil && members["result"] == nil && members["error"] == nil {
      return .error(400, .invalidRequest("not a JSON-RPC request, notification or response"))
    }
    let version = request.header("mcp-protocol-version")
    if let version, !MCPServer.supportedProtocolVersions.contains(version) {
      return .error(
        400,
        .invalidRequest(
          "unsupported MCP-Protocol-Version \(version); supported: "
            + MCPServer.supportedProtocolVersions.joined(separator: ", ")))
    }
    let sessionID = request.header("mcp-session-id")

    if method == "initialize" {
      guard sessionID == nil else {
        return .error(400, .invalidRequest("initialize starts a new session: send it without MCP-Session-Id"))
      }
      guard isRequest else {
        return .error(400, .invalidRequest("initialize must be a request (with an id)"))
      }
      let server = makeServer()
      guard let response = await handle(request.body, server: server, ticket: ticket) else {
        return .error(500, .invalidRequest("initialize produced no response"))
      }
      let succeeded = (try? JSONValue(parsing: response))?["result"] != nil
      var headers: [(name: String, value: String)] = []
      if succeeded {
        let id = Self.newSessionID()
        open(session: id, server: server, user: ticket?.user)
        headers.append(("MCP-Session-Id", id))
      }
      return reply(response, headers: headers)
    }

    guard let sessionID else {
      return .error(
        400, .invalidRequest("missing MCP-Session-Id: send initialize first and use the id it returns"))
    }
    guard let server = touch(session: sessionID, user: ticket?.user) else {
      return .error(
        404, .invalidRequest("unknown or ended session; send initialize again without MCP-Session-Id"))
    }
    if let version, let negotiated = await server.negotiatedProtocolVersion, version != negotiated {
      return .error(
        400, .invalidRequest("MCP-Protocol-Version \(version) differs from the session's \(negotiated)"))
    }
    guard isRequest else {
      _ = await handle(request.body, server: server, ticket: ticket)
      return HTTPResponse(status: 202)
    }
    switch configuration.responseMode {
    case .json:
      guard let response = await handle(request.body, server: server, ticket: ticket) else {
        return HTTPResponse(status: 202)
      }
      return reply(response)
    case .eventStream:
      let body = request.body
      return HTTPResponse(
        status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")],
        body: .eventStream(event: {
          defer { ticket?.release() }
          return await Self.handle(body, server: server, ticket: ticket) ?? Data()
        }))
    }
  }

  /// `server`'s answer to `body`, with the admitted user's tools when there is a ticket.
  private func handle(_ body: Data, server: MCPServer, ticket: HTTPAdmissionTicket?) async -> Data? {
    await Self.handle(body, server: server, ticket: ticket)
  }

  private static func handle(_ body: Data, server: MCPServer, ticket: HTTPAdmissionTicket?) async -> Data? {
    guard let ticket else { return await server.handle(message: body) }
    return await server.handle(message: body, provider: ticket.provider)
  }

  /// The response to a request whose JSON-RPC answer is known, in the configured form.
  private func reply(_ response: Data, headers: [(name: String, value: String)] = []) -> HTTPResponse {
    switch configuration.responseMode {
    case .json:
      return .json(200, response, headers: headers)
    case .eventStream:
      return HTTPResponse(
        status: 200,
        headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")] + headers,
        body: .eventStream(event: { response }))
    }
  }

  // MARK: DELETE

  private func delete(_ request: HTTPRequest, user: String?) -> HTTPResponse {
    guard let sessionID = request.header("mcp-session-id") else {
      return .error(400, .invalidRequest("missing MCP-Session-Id: name the session to end"))
    }
    let removed = sessions.withLock { sessions -> Session? in
      guard sessions[sessionID]?.user == user else { return nil }
      return sessions.removeValue(forKey: sessionID)
    }
    guard removed != nil else { return .error(404, .invalidRequest("unknown or ended session")) }
    log("session ended by the client")
    return HTTPResponse(status: 204)
  }

  // MARK: Sessions

  private func open(session id: String, server: MCPServer, user: String?) {
    let now = ContinuousClock.now
    let evicted = sessions.withLock { sessions -> Int in
      let idle = sessions.filter { now - $0.value.lastUsed > configuration.sessionIdleTimeout }.map(\.key)
      for key in idle { sessions.removeValue(forKey: key) }
      var evicted = idle.count
      while sessions.count >= configuration.maximumSessions,
        let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key
      {
        sessions.removeValue(forKey: oldest)
        evicted += 1
      }
      sessions[id] = Session(server: server, user: user, lastUsed: now)
      return evicted
    }
    if evicted > 0 { log("ended \(evicted) idle or least recently used session(s)") }
  }

  /// The session's server, when it exists and belongs to `user`.
  private func touch(session id: String, user: String?) -> MCPServer? {
    let now = ContinuousClock.now
    return sessions.withLock { sessions -> MCPServer? in
      guard var session = sessions[id], session.user == user else { return nil }
      if now - session.lastUsed > configuration.sessionIdleTimeout {
        sessions.removeValue(forKey: id)
        return nil
      }
      session.lastUsed = now
      sessions[id] = session
      return session.server
    }
  }

  /// 32 random bytes from the system's cryptographic generator, as 64 hex digits.
  public static func newSessionID() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<4).map { _ in
      let hex = String(generator.next() as UInt64, radix: 16)
      return String(repeating: "0", count: 16 - hex.count) + hex
    }.joined()
  }

  // MARK: Checks

  /// `type/subtype` of a media type, lowercased, without parameters.
  public static func mediaType(_ field: String?) -> String {
    guard let field else { return "" }
    return (field.split(separator: ";").first.map(String.init) ?? "").trimmingCharacters(in: .whitespaces)
      .lowercased()
  }

  /// Whether `origin` names a loopback host (any port, http or https) or is allowed by name.
  func isAllowed(origin: String) -> Bool { access.isAllowed(origin: origin) }

  /// Whether `authorization` is `Bearer TOKEN` with `token` (see ``HTTPAccessPolicy``).
  static func isAuthorized(_ authorization: String?, token: String) -> Bool {
    HTTPAccessPolicy.isAuthorized(authorization, token: token)
  }

  /// Byte equality that reads every byte of `candidate` whatever the first difference.
  static func constantTimeEqual(_ candidate: [UInt8], _ expected: [UInt8]) -> Bool {
    HTTPAccessPolicy.constantTimeEqual(candidate, expected)
  }
}
