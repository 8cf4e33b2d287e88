import Engram
import EngramCore
import EngramMCP
import Foundation

/// `engram serve`'s handler on the HTTP core: the single-page app's files (shipped in the
/// binary), its JSON API under `/api/`, server-sent events for the agent's streamed replies,
/// and MCP at `/mcp` (the handler of `engram mcp --http`), all under one access policy.
///
/// The static files are public (they hold no data) but still obey the Origin rule; every
/// `/api/` request must also pass the bearer-token rule when a token is configured, and is
/// then served with the scope ``ServeContext`` resolves for it.
public final class WebApp: HTTPHandling {
  /// The transport's settings.
  public let configuration: HTTPTransportConfiguration
  private let context: ServeContext
  private let access: HTTPAccessPolicy
  private let mcp: StreamableHTTPHandler?
  private let log: @Sendable (String) -> Void

  /// The longest `/api/` request body accepted (413 beyond). 64 KiB.
  static let maximumAPIBodyBytes = 64 << 10

  /// The `Content-Security-Policy` of every response: this origin's files only, no inline
  /// script or style, no framing.
  static let contentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

  /// Creates the app (`configuration.path` is the app's root, `/`); `mcp`, when given, serves
  /// `/mcp` with its own configuration.
  public init(
    configuration: HTTPTransportConfiguration, context: ServeContext, mcp: StreamableHTTPHandler? = nil,
    log: @escaping @Sendable (String) -> Void
  ) {
    self.configuration = configuration
    self.context = context
    self.access = HTTPAccessPolicy(configuration)
    self.mcp = mcp
    self.log = log
  }

  /// What the transport announces when it starts.
  public var servesManyUsers: Bool { context.servesManyUsers }

  public var announcement: String { "the Engram web app" + (mcp == nil ? "" : " (MCP at /mcp)") }

  /// The response to `request`.
  public func respond(to request: HTTPRequest) async -> HTTPResponse {
    if request.path == "/mcp", let mcp { return await mcp.respond(to: request) }
    var response: HTTPResponse
    if request.path.hasPrefix("/api/") {
      response = await api(request)
    } else {
      response = file(request)
    }
    response.headers += [
      ("Content-Security-Policy", Self.contentSecurityPolicy), ("X-Content-Type-Options", "nosniff"),
      ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
    ]
    return response
  }

  // MARK: Files

  private func file(_ request: HTTPRequest) -> HTTPResponse {
    if let refusal = access.checkOrigin(request) { return refused(refusal) }
    guard request.method == "GET" else {
      return Self.error(405, "\(request.method) is not served here; files are read with GET", allow: "GET")
    }
    guard let asset = WebAssets.asset(at: request.path) else {
      return Self.error(404, "nothing at \(request.path)")
    }
    let headers: [(name: String, value: String)] = [("ETag", asset.etag), ("Cache-Control", "no-cache")]
    if let tags = request.header("if-none-match"),
      tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag })
    {
      return HTTPResponse(status: 304, headers: headers)
    }
    return HTTPResponse(
      status: 200, headers: [("Content-Type", asset.contentType)] + headers, body: .bytes(asset.body))
  }

  // MARK: API

  private func api(_ request: HTTPRequest) async -> HTTPResponse {
    if let refusal = access.check(request) { return refused(refusal) }
    if request.body.count > Self.maximumAPIBodyBytes {
      return Self.error(413, "the body is \(request.body.count) bytes; at most \(Self.maximumAPIBodyBytes)")
    }
    switch await context.admit(request) {
    case .unauthorized:
      var response = Self.error(401, "this request names no user (Authorization: Bearer ...)")
      response.headers.append(("WWW-Authenticate", "Bearer realm=\"engram\""))
      return response
    case .busy(let seconds, let message):
      var response = Self.error(503, message)
      response.headers.append(("Retry-After", String(max(1, seconds))))
      return response
    case .failed(let message):
      return Self.error(500, message)
    case .scope(let scope, let release):
      var response = await WebAPI.respond(to: request, scope: scope)
      // A streamed body holds the user's engine until it has been written.
      switch response.body {
      case .bytes: release()
      case .eventStream(let event):
        response.body = .eventStream {
          let data = await event()
          release()
          return data
        }
      case .stream(let produce):
        response.body = .stream { writer in
          await produce(writer)
          release()
        }
      }
      return response
    }
  }

  private func refused(_ refusal: HTTPAccessPolicy.Refusal) -> HTTPResponse {
    switch refusal {
    case .origin(let origin):
      log("refused a request from origin \(origin)")
      return Self.error(403, "origin \(origin) is not allowed")
    case .token:
      var response = Self.error(401, "missing or wrong bearer token (Authorization: Bearer ...)")
      response.headers.append(("WWW-Authenticate", "Bearer realm=\"engram\""))
      return response
    }
  }

  /// A JSON error: `{"error": MESSAGE}` with `status`.
  static func error(_ status: Int, _ message: String, allow: String? = nil) -> HTTPResponse {
    var response = json(status, ["error": .string(message)])
    if let allow { response.headers.append(("Allow", allow)) }
    return response
  }

  /// A JSON body, never cached.
  static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
    let body = (try? value.serialized()) ?? Data(value.jsonText.utf8)
    return .json(status, body, headers: [("Cache-Control", "no-store")])
  }
}
