import Engram
import EngramCore
import EngramHTTP
import Foundation

/// `engram serve`'s handler on the HTTP core: the single-page app's files (shipped in the
/// binary), its JSON API under `/api/`, server-sent events for the agent's streamed replies,
/// and MCP at `/mcp` (the handler of `engram mcp --http`), all under one access policy.
///
/// The transport has already refused a foreign `Host` (``HTTPHostRule``). Then:
/// - The secret of the launch (`configuration.bearerToken`, printed in the URL `engram serve`
///   shows): `/?token=SECRET` sets it as an `HttpOnly; SameSite=Strict` cookie and redirects to
///   `/`; every `/api/` request needs that cookie or `Authorization: Bearer SECRET` (401
///   otherwise), and the app's page without the cookie is a short page saying how to get in.
///   `/mcp` takes the secret as a bearer token. With ``ServeContext/servesManyUsers``, a user's
///   bearer token is the secret instead; with no secret (`--no-token`), the API is open.
/// - Origin: a request that carries one must come from this server's own origin (the `Host`
///   it was sent to) or an allowed origin (`--allow-origin`), else 403; a CORS preflight is
///   answered for those origins only.
public final class WebApp: HTTPHandling {
  /// The transport's settings.
  public let configuration: HTTPTransportConfiguration
  private let context: ServeContext
  private let mcp: StreamableHTTPHandler?
  private let log: @Sendable (String) -> Void

  /// The longest `/api/` request body accepted (413 beyond). 64 KiB.
  static let maximumAPIBodyBytes = 64 << 10

  /// The `Content-Security-Policy` of every response: this origin's files only, no inline
  /// script or style, no framing.
  static let contentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

  /// Creates the app (`configuration.path` is the app's root, `/`; `configuration.bearerToken`
  /// the secret of the launch, nil for none); `mcp`, when given, serves `/mcp` with its own
  /// configuration.
  public init(
    configuration: HTTPTransportConfiguration, context: ServeContext, mcp: StreamableHTTPHandler? = nil,
    log: @escaping @Sendable (String) -> Void
  ) {
    self.configuration = configuration
    self.context = context
    self.mcp = mcp
    self.log = log
  }

  /// Whether each request's bearer token selects its user.
  public var servesManyUsers: Bool { context.servesManyUsers }

  /// What the transport announces when it starts.
  public var announcement: String { "the Engram web app" + (mcp == nil ? "" : " (MCP at /mcp)") }

  /// `/mcp` takes MCP's limit; everything else the API's.
  public func maximumBodyBytes(for head: HTTPRequest) -> Int {
    if head.path == "/mcp", let mcp { return mcp.maximumBodyBytes(for: head) }
    return Self.maximumAPIBodyBytes
  }

  /// `/mcp` answers in JSON-RPC's shape; everything else `{"error": SENTENCE}`.
  public func errorResponse(status: Int, message: String, for head: HTTPRequest?) -> HTTPResponse {
    if head?.path == "/mcp", let mcp { return mcp.errorResponse(status: status, message: message, for: head) }
    return Self.error(status, message)
  }

  /// The response to `request`.
  public func respond(to request: HTTPRequest) async -> HTTPResponse {
    if request.path == "/mcp", let mcp { return await mcp.respond(to: request) }
    var response: HTTPResponse
    if let origin = request.header("origin"), !servesOrigin(origin, request) {
      log("refused a request from origin \(origin)")
      response = Self.error(403, "origin \(origin) is not allowed")
    } else if request.method == "OPTIONS" {
      response = preflight(request)
    } else if request.path.hasPrefix("/api/") {
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

  // MARK: Access

  /// Whether `origin` is this server's own (the `Host` the request was sent to, which the
  /// transport has checked) or one allowed by `--allow-origin`.
  private func servesOrigin(_ origin: String, _ request: HTTPRequest) -> Bool {
    if configuration.allowedOrigins.contains(origin) { return true }
    guard let host = request.header("host") else { return false }
    return HTTPAccessPolicy.isSameOrigin(origin, host: host)
  }

  /// A CORS preflight from an origin this server serves (the check is done): what it may send.
  private func preflight(_ request: HTTPRequest) -> HTTPResponse {
    guard let origin = request.header("origin") else {
      return Self.error(405, "OPTIONS is a CORS preflight; send it with Origin", allow: "GET, POST")
    }
    return HTTPResponse(
      status: 204,
      headers: [
        ("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true"),
        ("Access-Control-Allow-Methods", "GET, POST"),
        ("Access-Control-Allow-Headers", "Authorization, Content-Type"), ("Access-Control-Max-Age", "600"),
        ("Vary", "Origin"),
      ])
  }

  /// The cookie carrying the secret of the launch: one name per port (cookies are not kept
  /// apart by port, so two servers on one machine would otherwise overwrite each other's).
  static func cookieName(_ request: HTTPRequest) -> String {
    guard let host = request.header("host"), let colon = host.lastIndex(of: ":"),
      !host[colon...].contains("]"), let port = UInt16(host[host.index(after: colon)...])
    else { return "engram_auth" }
    return "engram_auth_\(port)"
  }

  /// The value of cookie `name` in the request, if any.
  static func cookie(_ name: String, in request: HTTPRequest) -> String? {
    for pair in (request.header("cookie") ?? "").split(separator: ";") {
      let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
      if parts.count == 2, parts[0] == name { return parts[1] }
    }
    return nil
  }

  /// Whether the request carries the secret of the launch (as its cookie or a bearer token);
  /// true when there is no secret.
  private func carriesSecret(_ request: HTTPRequest) -> Bool {
    guard let secret = configuration.bearerToken else { return true }
    let expected = Array(secret.utf8)
    if let cookie = Self.cookie(Self.cookieName(request), in: request),
      HTTPAccessPolicy.constantTimeEqual(Array(cookie.utf8), expected)
    {
      return true
    }
    return HTTPAccessPolicy.isAuthorized(request.header("authorization"), token: secret)
  }

  // MARK: Files

  private func file(_ request: HTTPRequest) -> HTTPResponse {
    guard request.method == "GET" else {
      return Self.error(405, "\(request.method) is not served here; files are read with GET", allow: "GET")
    }
    guard let asset = WebAssets.asset(at: request.path) else {
      return Self.error(404, "nothing at \(request.path)")
    }
    // The page (not its scripts and styles, which hold no data) needs the secret of the launch.
    if asset.contentType.hasPrefix("text/html"), let secret = configuration.bearerToken {
      if let offered = request.queryParameters["token"] {
        guard HTTPAccessPolicy.constantTimeEqual(Array(offered.utf8), Array(secret.utf8)) else {
          return Self.page(
            401, "This link's token is not this server's (it may be from an earlier launch).")
        }
        // The cookie carries the secret from now on; the address bar drops it.
        return HTTPResponse(
          status: 303,
          headers: [
            ("Location", request.path),
            ("Set-Cookie", "\(Self.cookieName(request))=\(secret); Path=/; HttpOnly; SameSite=Strict"),
            ("Cache-Control", "no-store"),
          ])
      }
      guard carriesSecret(request) || servesManyUsers else {
        return Self.page(401, "This page needs the secret of its launch.")
      }
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
    guard servesManyUsers || carriesSecret(request) else {
      var response = Self.error(
        401,
        "this request lacks the secret of the launch: open the URL `engram serve` printed "
          + "(or send Authorization: Bearer SECRET)")
      response.headers.append(("WWW-Authenticate", "Bearer realm=\"engram\""))
      return response
    }
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

  /// A short HTML page saying `problem` and how to get in.
  static func page(_ status: Int, _ problem: String) -> HTTPResponse {
    let html = """
      <!doctype html>
      <html lang="en"><head><meta charset="utf-8"><title>Engram</title></head>
      <body><h1>Engram</h1><p>\(problem)</p>
      <p>Open the address <code>engram serve</code> printed when it started
      (<code>http://127.0.0.1:PORT/?token=...</code>): it lets this browser in.
      With <code>--token-file FILE</code> the secret stays the same across restarts.</p>
      </body></html>

      """
    return HTTPResponse(
      status: status,
      headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")],
      body: .bytes(Data(html.utf8)))
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
