import EngramCore
import Foundation

/// An HTTP/1.1 request as the Streamable HTTP transport reads it.
public struct HTTPRequest: Sendable {
  /// `POST`, `GET`, ... (case-sensitive, as HTTP defines it).
  public var method: String
  /// The request target's path (without the query).
  public var path: String
  /// The request target's query (after `?`, still percent-encoded); empty without one.
  public var query: String
  /// The minor HTTP version (1 for HTTP/1.1, 0 for HTTP/1.0).
  public var minorVersion: Int
  /// Header fields in arrival order, names lowercased.
  public var headers: [(name: String, value: String)]
  /// The body.
  public var body: Data

  /// Creates a request.
  public init(
    method: String, path: String, query: String = "", minorVersion: Int = 1,
    headers: [(name: String, value: String)] = [], body: Data = Data()
  ) {
    self.method = method
    self.path = path
    self.query = query
    self.minorVersion = minorVersion
    self.headers = headers.map { ($0.name.lowercased(), $0.value) }
    self.body = body
  }

  /// The value of header `name` (case-insensitive); repeated fields joined with `, `.
  public func header(_ name: String) -> String? {
    let name = name.lowercased()
    let values = headers.filter { $0.name == name }.map(\.value)
    return values.isEmpty ? nil : values.joined(separator: ", ")
  }

  /// The query's parameters (`+` and percent escapes decoded); a repeated name keeps its last value.
  public var queryParameters: [String: String] {
    var parameters: [String: String] = [:]
    for pair in query.split(separator: "&") where !pair.isEmpty {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
      }
      parameters[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
    }
    return parameters
  }

  /// Whether the client asked to keep the connection open after the response.
  var wantsKeepAlive: Bool {
    let connection = header("connection")?.lowercased() ?? ""
    let tokens = connection.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    return minorVersion >= 1 ? !tokens.contains("close") : tokens.contains("keep-alive")
  }
}

/// An HTTP response of the Streamable HTTP transport.
public struct HTTPResponse: Sendable {
  /// What follows the header block.
  public enum Body: Sendable {
    /// A complete body (possibly empty), sent with `Content-Length`.
    case bytes(Data)
    /// A Server-Sent Events stream (`text/event-stream`, chunked): the headers go out at once,
    /// then comment lines every few seconds while `event` runs (so proxies keep the
    /// connection), then the one `message` event carrying the JSON-RPC response `event`
    /// returns, then the stream ends.
    case eventStream(event: @Sendable () async -> Data)
    /// A body written piece by piece as `produce` makes it (chunked on HTTP/1.1; on HTTP/1.0
    /// the connection's end ends it): server-sent events the web app streams a reply with.
    /// The headers go out at once; `produce` returns when the body is complete.
    case stream(produce: @Sendable (HTTPStreamWriter) async -> Void)
  }

  /// The status code.
  public var status: Int
  /// Header fields besides `Content-Length`, `Transfer-Encoding` and `Connection`.
  public var headers: [(name: String, value: String)]
  /// The body.
  public var body: Body
  /// Close the connection after this response (errors that leave the input unread).
  public var closesConnection: Bool

  /// Creates a response.
  public init(
    status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes(Data()),
    closesConnection: Bool = false
  ) {
    self.status = status
    self.headers = headers
    self.body = body
    self.closesConnection = closesConnection
  }

  /// The value of header `name` (case-insensitive), if set.
  public func header(_ name: String) -> String? {
    headers.first { $0.name.lowercased() == name.lowercased() }?.value
  }

  /// The complete body's bytes (empty for a stream).
  public var bodyBytes: Data {
    if case .bytes(let data) = body { return data }
    return Data()
  }

  /// A JSON body.
  public static func json(_ status: Int, _ body: Data, headers: [(name: String, value: String)] = [])
    -> HTTPResponse
  {
    HTTPResponse(
      status: status, headers: [("Content-Type", "application/json")] + headers, body: .bytes(body))
  }

  /// An error answer: a JSON-RPC error response without an id, as the transport allows.
  static func error(
    _ status: Int, _ error: JSONRPCError, headers: [(name: String, value: String)] = [],
    closesConnection: Bool = false
  ) -> HTTPResponse {
    let message: JSONValue = ["jsonrpc": "2.0", "error": error.json]
    let body = (try? message.serialized()) ?? Data(message.jsonText.utf8)
    var response = json(status, body, headers: headers)
    response.closesConnection = closesConnection
    return response
  }

  /// The reason phrase for `status`.
  static func reason(_ status: Int) -> String {
    switch status {
    case 200: return "OK"
    case 201: return "Created"
    case 303: return "See Other"
    case 304: return "Not Modified"
    case 202: return "Accepted"
    case 204: return "No Content"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 405: return "Method Not Allowed"
    case 406: return "Not Acceptable"
    case 408: return "Request Timeout"
    case 411: return "Length Required"
    case 413: return "Content Too Large"
    case 409: return "Conflict"
    case 421: return "Misdirected Request"
    case 415: return "Unsupported Media Type"
    case 422: return "Unprocessable Content"
    case 431: return "Request Header Fields Too Large"
    case 500: return "Internal Server Error"
    case 501: return "Not Implemented"
    case 503: return "Service Unavailable"
    case 505: return "HTTP Version Not Supported"
    default: return "Status \(status)"
    }
  }
}

/// Where a streamed body (``HTTPResponse/Body/stream(produce:)``) is written: each call sends
/// its bytes at once (one chunk).
public final class HTTPStreamWriter: Sendable {
  private let sink: @Sendable (Data) -> Bool

  /// Creates a writer that hands each piece to `sink`, which returns false once the peer is gone.
  public init(sink: @escaping @Sendable (Data) -> Bool) {
    self.sink = sink
  }

  /// Sends `data`; false when the peer is gone (later writes are dropped).
  @discardableResult
  public func write(_ data: Data) -> Bool {
    data.isEmpty ? true : sink(data)
  }

  /// Sends one server-sent event (`event: NAME`, then `data:` lines of `data`, then a blank line).
  @discardableResult
  public func event(_ name: String, data: String) -> Bool {
    var text = "event: \(name)\n"
    for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
    return write(Data((text + "\n").utf8))
  }
}

/// One handler of the HTTP core: ``HTTPTransport`` reads requests from a socket and writes the
/// responses a handler returns. ``StreamableHTTPHandler`` (MCP) is one; the web app of
/// `engram serve` is another (and routes `/mcp` to the first).
public protocol HTTPHandling: Sendable {
  /// The transport's settings (address, limits, token).
  var configuration: HTTPTransportConfiguration { get }
  /// What the transport announces it serves when it starts (`MCP (Streamable HTTP)`).
  var announcement: String { get }
  /// The response to `request`.
  func respond(to request: HTTPRequest) async -> HTTPResponse
  /// Whether each request's bearer token selects its user (then a non-loopback address
  /// needs no shared token).
  var servesManyUsers: Bool { get }
  /// The longest body accepted for a request with this head (its body not yet read; 413 beyond).
  func maximumBodyBytes(for head: HTTPRequest) -> Int
  /// The answer to a request the transport refuses before the handler sees it, in the
  /// handler's own error shape.
  func errorResponse(status: Int, message: String, for head: HTTPRequest?) -> HTTPResponse
}

extension HTTPHandling {
  /// One user, unless the handler says otherwise.
  public var servesManyUsers: Bool { false }

  /// The longest body accepted for a request with this head (its body not yet read; 413
  /// beyond): `configuration.maximumBodyBytes` unless the handler says otherwise.
  public func maximumBodyBytes(for head: HTTPRequest) -> Int { configuration.maximumBodyBytes }

  /// The answer to a request the transport refuses before the handler sees it (too large,
  /// malformed, too slow, a foreign `Host`), in the handler's own error shape; `head` is the
  /// request as far as it was read. A JSON-RPC error without an id, unless the handler says
  /// otherwise.
  public func errorResponse(status: Int, message: String, for head: HTTPRequest?) -> HTTPResponse {
    .error(status, .invalidRequest(message))
  }
}

/// Which `Host` a server answers (against DNS rebinding: a page of a name rebound to this
/// machine sends that name): `localhost`, `127.0.0.1` and `[::1]`, alone or with the server's
/// port, and the names of ``HTTPTransportConfiguration/allowedHosts`` (with any port, or the
/// one they name). Names compare case-insensitively; a missing `Host` is refused.
public struct HTTPHostRule: Sendable {
  private let loopback: Set<String>
  private let names: Set<String>
  private let port: UInt16

  /// The rule of a server at `port` with `configuration.allowedHosts`.
  public init(configuration: HTTPTransportConfiguration, port: UInt16) {
    self.port = port
    loopback = ["localhost", "127.0.0.1", "[::1]"]
    names = Set(configuration.allowedHosts.map { $0.lowercased() })
  }

  /// Whether a request with this `Host` header is served.
  public func serves(_ host: String?) -> Bool {
    guard let host = host?.trimmingCharacters(in: .whitespaces).lowercased(), !host.isEmpty else {
      return false
    }
    if names.contains(host) { return true }
    // Split off a port: the last ':' after any IPv6 bracket.
    var name = host
    var hostPort: String?
    if let colon = host.lastIndex(of: ":"), !host[colon...].contains("]") {
      name = String(host[..<colon])
      hostPort = String(host[host.index(after: colon)...])
    }
    if let hostPort, UInt16(hostPort) == nil { return false }
    if loopback.contains(name) { return hostPort.map { UInt16($0) == port } ?? true }
    return names.contains(name)
  }
}

/// Reads HTTP/1.1 requests from a byte source, one after another on a kept-alive connection,
/// within size limits and deadlines.
struct HTTPRequestReader {
  /// What reading produced.
  enum Outcome {
    /// A complete request.
    case request(HTTPRequest)
    /// The peer closed (or went idle) between requests.
    case closed
    /// The request cannot be served: answer `status` with `message` (in the handler's error
    /// shape; `head` is the request as far as it was read) and close the connection.
    case reject(status: Int, message: String, head: HTTPRequest?)
  }

  /// How long each part may take.
  struct Timeouts {
    /// Between requests, for the first byte of the next one.
    var idle: Duration
    /// From a request's first byte to the end of its header block.
    var header: Duration
    /// From the end of the header block to the end of the body.
    var body: Duration
  }

  /// Reads up to `count` bytes into the buffer, giving up at the deadline; returns 0 at end of
  /// input, -1 on error or when the deadline passed.
  let read: (UnsafeMutableRawPointer, Int, ContinuousClock.Instant) -> Int
  /// Sends `HTTP/1.1 100 Continue` (for `Expect: 100-continue`).
  let sendContinue: () -> Void
  let maximumHeaderBytes: Int
  /// The longest body accepted for a request with this head.
  let bodyLimit: (HTTPRequest) -> Int
  let timeouts: Timeouts
  /// Bytes read past the previous request.
  private var pending: [UInt8] = []

  init(
    maximumHeaderBytes: Int, timeouts: Timeouts, bodyLimit: @escaping (HTTPRequest) -> Int,
    read: @escaping (UnsafeMutableRawPointer, Int, ContinuousClock.Instant) -> Int,
    sendContinue: @escaping () -> Void
  ) {
    self.maximumHeaderBytes = maximumHeaderBytes
    self.timeouts = timeouts
    self.bodyLimit = bodyLimit
    self.read = read
    self.sendContinue = sendContinue
  }

  /// Reads more bytes before `deadline`: true when some came, false at end of input, on an
  /// error or when the deadline passed.
  private mutating func fill(before deadline: ContinuousClock.Instant) -> Bool {
    var chunk = [UInt8](repeating: 0, count: 16_384)
    let count = chunk.withUnsafeMutableBytes { read($0.baseAddress!, $0.count, deadline) }
    guard count > 0 else { return false }
    pending += chunk[0..<count]
    return true
  }

  private static func reject(_ status: Int, _ message: String, _ head: HTTPRequest? = nil) -> Outcome {
    .reject(status: status, message: message, head: head)
  }

  /// The next request.
  mutating func next() -> Outcome {
    // The header block, up to the blank line: the first byte within the idle time, the rest
    // within the header time from the first byte.
    var end: Int?
    var searched = 0
    var headerDeadline: ContinuousClock.Instant? = pending.isEmpty ? nil : .now + timeouts.header
    while end == nil {
      if let found = Self.headerEnd(in: pending, from: max(0, searched - 3)) {
        end = found
        break
      }
      searched = pending.count
      if pending.count > maximumHeaderBytes {
        return Self.reject(431, "the request's header block is over \(maximumHeaderBytes) bytes")
      }
      guard fill(before: headerDeadline ?? .now + timeouts.idle) else {
        if pending.isEmpty { return .closed }
        if let headerDeadline, ContinuousClock.now >= headerDeadline {
          return Self.reject(408, "the request's headers took longer than \(Self.describe(timeouts.header))")
        }
        return Self.reject(400, "the connection ended inside a request")
      }
      if headerDeadline == nil { headerDeadline = .now + timeouts.header }
    }
    guard let end, end <= maximumHeaderBytes else {
      return Self.reject(431, "the request's header block is over \(maximumHeaderBytes) bytes")
    }
    let head = String(decoding: pending[0..<end], as: UTF8.self)
    pending.removeFirst(end + 4)
    var lines = head.components(separatedBy: "\r\n")
    let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
    guard requestLine.count == 3, !requestLine[0].isEmpty, !requestLine[1].isEmpty else {
      return Self.reject(400, "malformed request line")
    }
    let minorVersion: Int
    switch requestLine[2] {
    case "HTTP/1.1": minorVersion = 1
    case "HTTP/1.0": minorVersion = 0
    default: return Self.reject(505, "only HTTP/1.1 and HTTP/1.0 are served")
    }
    var headers: [(name: String, value: String)] = []
    for line in lines {
      guard let colon = line.firstIndex(of: ":"), line.first != " ", line.first != "\t" else {
        return Self.reject(400, "malformed header line")
      }
      let name = line[..<colon]
      guard !name.isEmpty,
        name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_!#$%&'*+.^`|~".contains($0)) })
      else { return Self.reject(400, "malformed header name") }
      headers.append((String(name), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
    }
    let target = requestLine[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    var request = HTTPRequest(
      method: String(requestLine[0]), path: String(target[0]),
      query: target.count > 1 ? String(target[1]) : "",
      minorVersion: minorVersion, headers: headers)

    if request.header("transfer-encoding") != nil {
      return Self.reject(501, "Transfer-Encoding is not supported; send Content-Length", request)
    }
    var length = 0
    if let lengthField = request.header("content-length") {
      let values = Set(lengthField.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
      guard values.count == 1, let value = values.first, !value.isEmpty, value.count <= 18,
        value.allSatisfy(\.isWholeNumber), let parsed = Int(value)
      else { return Self.reject(400, "invalid Content-Length", request) }
      length = parsed
    } else if request.method == "POST" {
      return Self.reject(411, "a POST needs Content-Length", request)
    }
    let limit = bodyLimit(request)
    if length > limit {
      return Self.reject(
        413, "the body is \(length) bytes, over the \(LineInput.describe(bytes: limit)) limit", request)
    }
    if length > pending.count, request.header("expect")?.lowercased() == "100-continue" { sendContinue() }
    let bodyDeadline = ContinuousClock.now + timeouts.body
    while pending.count < length {
      guard fill(before: bodyDeadline) else {
        if ContinuousClock.now >= bodyDeadline {
          return Self.reject(
            408, "the request's body took longer than \(Self.describe(timeouts.body))", request)
        }
        return Self.reject(400, "the connection ended inside the body", request)
      }
    }
    request.body = Data(pending[0..<length])
    pending.removeFirst(length)
    return .request(request)
  }

  /// `5 s`, `1.5 s`.
  private static func describe(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let value = Double(seconds) + Double(attoseconds) / 1e18
    return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
  }

  /// The offset of the first `\r\n\r\n` at or after `start`.
  private static func headerEnd(in bytes: [UInt8], from start: Int) -> Int? {
    guard bytes.count >= 4 else { return nil }
    var index = start
    while index + 3 < bytes.count {
      if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
        return index
      }
      index += 1
    }
    return nil
  }
}
