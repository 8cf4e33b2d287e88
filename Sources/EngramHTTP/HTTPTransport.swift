import Dispatch
import EngramCore
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Settings of the Streamable HTTP transport (`engram mcp --http HOST:PORT`).
public struct HTTPTransportConfiguration: Sendable {
  /// How a request's JSON-RPC response is sent.
  public enum ResponseMode: Sendable, Hashable {
    /// One `application/json` body.
    case json
    /// A `text/event-stream` with one `message` event (comments keep it alive meanwhile).
    case eventStream
  }

  /// The host or address to listen on (`127.0.0.1`, `::1`, `localhost`, `0.0.0.0`, a name).
  public var host: String
  /// The port; 0 picks a free one (see ``HTTPTransport/boundPort``).
  public var port: UInt16
  /// The token clients must send as `Authorization: Bearer TOKEN`; required (at least
  /// ``minimumTokenLength`` characters) unless the address is loopback. Default: none.
  public var bearerToken: String?
  /// Origins allowed besides loopback ones (exact `scheme://host[:port]` strings). Default: none.
  public var allowedOrigins: Set<String> = []
  /// Host names served besides `localhost`, `127.0.0.1` and `[::1]` (`--allow-host`): a request
  /// whose `Host` is none of them is answered 421 before any handler sees it (against DNS
  /// rebinding). A name may carry a port (`name:8930`, then only that port); without one, any.
  /// Required (at least one) when the address is not loopback. Default: none.
  public var allowedHosts: Set<String> = []
  /// The endpoint's path. Default `/mcp`.
  public var path = "/mcp"
  /// The longest request body accepted (413 beyond). Default 4 MiB.
  public var maximumBodyBytes = 4 << 20
  /// The longest header block accepted (431 beyond). Default 16 KiB.
  public var maximumHeaderBytes = 16 << 10
  /// Connections open at once. A connection beyond it takes the place of the longest-waiting
  /// one that has no request being served (idle, or slow to send its request); when every
  /// connection is being served, it is answered 503 and closed. Default 128.
  public var maximumConnections = 128
  /// Connections open at once from one client address; beyond it, that address's own
  /// longest-waiting connection gives way (or 503 when all of them are being served). Default 64.
  public var maximumConnectionsPerAddress = 64
  /// Open sessions kept; the least recently used goes when a new one would exceed it. Default 1000.
  public var maximumSessions = 1000
  /// A session unused this long is ended. Default one hour.
  public var sessionIdleTimeout: Duration = .seconds(3600)
  /// A connection idle this long between requests (or stalled while a response is sent) is
  /// closed. Default 30 s.
  public var connectionIdleTimeout: Duration = .seconds(30)
  /// The time a request's header block has to arrive, from its first byte (408 beyond). Default 5 s.
  public var headerTimeout: Duration = .seconds(5)
  /// The time a request's body has to arrive, from the end of its headers (408 beyond). Default 30 s.
  public var bodyTimeout: Duration = .seconds(30)
  /// Seconds between keep-alive comments on an event stream. Default 15 s.
  public var eventStreamKeepAlive: Duration = .seconds(15)
  /// JSON bodies (default) or event streams.
  public var responseMode: ResponseMode = .json

  /// The shortest bearer token accepted.
  public static let minimumTokenLength = 16

  /// Creates a configuration for `host:port`.
  public init(host: String, port: UInt16, bearerToken: String? = nil) {
    self.host = host
    self.port = port
    self.bearerToken = bearerToken
  }

  /// Parses `HOST:PORT` (`[IPv6]:PORT` for an IPv6 address).
  public static func parse(address: String) throws(HTTPTransportError) -> (host: String, port: UInt16) {
    let host: Substring
    let port: Substring
    if address.hasPrefix("[") {
      guard let close = address.firstIndex(of: "]"), address[address.index(after: close)...].hasPrefix(":")
      else { throw .invalidAddress(address) }
      host = address[address.index(after: address.startIndex)..<close]
      port = address[address.index(close, offsetBy: 2)...]
    } else {
      guard let colon = address.lastIndex(of: ":"), !address[..<colon].contains(":") else {
        throw .invalidAddress(address)
      }
      host = address[..<colon]
      port = address[address.index(after: colon)...]
    }
    guard !host.isEmpty, !port.isEmpty, port.allSatisfy({ ("0"..."9").contains($0) }),
      let number = UInt16(port)
    else {
      throw .invalidAddress(address)
    }
    return (String(host), number)
  }
}

/// Why the HTTP transport could not start.
public enum HTTPTransportError: Error, Sendable, Hashable, CustomStringConvertible {
  /// Not `HOST:PORT`.
  case invalidAddress(String)
  /// The host did not resolve.
  case unresolvable(host: String, reason: String)
  /// A non-loopback address without a bearer token.
  case tokenRequired(host: String)
  /// A bearer token shorter than the minimum.
  case tokenTooShort(minimum: Int)
  /// A non-loopback address without a host name to serve (`--allow-host`).
  case allowedHostRequired(host: String)
  /// A socket call failed.
  case socketFailed(call: String, errno: Int32)

  public var description: String {
    switch self {
    case .invalidAddress(let address):
      return "'\(address)' is not HOST:PORT (for example 127.0.0.1:8080 or [::1]:8080)"
    case .unresolvable(let host, let reason):
      return "cannot resolve '\(host)': \(reason)"
    case .tokenRequired(let host):
      return
        "serving on \(host), which is not a loopback address, needs a bearer token: set ENGRAM_MCP_TOKEN "
        + "or give --token-file (at least \(HTTPTransportConfiguration.minimumTokenLength) characters)"
    case .tokenTooShort(let minimum):
      return "the bearer token (ENGRAM_MCP_TOKEN) must have at least \(minimum) characters"
    case .allowedHostRequired(let host):
      return
        "serving on \(host), which is not a loopback address, needs --allow-host NAME: the host name "
        + "clients use to reach this server (requests for any other name are refused)"
    case .socketFailed(let call, let code):
      return "\(call) failed: \(String(cString: strerror(code)))"
    }
  }
}

/// An HTTP/1.1 server for one ``HTTPHandling`` handler (``StreamableHTTPHandler`` for MCP, the
/// web app of `engram serve`): a listening socket, one thread per connection (blocking reads
/// never hold a thread of the cooperative pool), keep-alive, size limits, deadlines for a
/// request's headers and body, connection caps that slow clients cannot fill (see
/// ``HTTPTransportConfiguration/maximumConnections``), the `Host` rule (``HTTPHostRule``) before
/// any handler, and bodies streamed as the handler produces them. TLS is left to a reverse
/// proxy (see docs/mcp.md).
public final class HTTPTransport<Handler: HTTPHandling>: Sendable {
  /// The protocol logic.
  public let handler: Handler
  private let listener: Int32
  /// The port actually bound.
  public let boundPort: UInt16
  /// Whether the address is a loopback one.
  public let isLoopback: Bool
  private let log: @Sendable (String) -> Void
  private let state = Mutex<State>(State())
  private let finished = DispatchSemaphore(value: 0)

  private struct State {
    var stopped = false
    var connections: [Int32: Connection] = [:]

    /// The connections still counted (not already told to give way).
    func open(from address: String? = nil) -> [(descriptor: Int32, connection: Connection)] {
      connections.filter { !$0.value.evicted && (address == nil || $0.value.address == address) }
        .map { ($0.key, $0.value) }
    }

    /// The connection that gives way to a new one: among `candidates`, the one without a
    /// request being served that has waited longest.
    static func victim(among candidates: [(descriptor: Int32, connection: Connection)]) -> Int32? {
      candidates.filter { !$0.connection.serving }.min { $0.connection.since < $1.connection.since }?
        .descriptor
    }
  }

  /// What the accept loop knows of one open connection.
  private struct Connection {
    /// The client's address (without the port).
    var address: String
    /// Whether a complete request is being answered (it is never made to give way then).
    var serving = false
    /// When it last started waiting for a request.
    var since: ContinuousClock.Instant
    /// Told to give way to a newer connection (its socket is shut down).
    var evicted = false
  }

  /// Resolves and binds `handler.configuration`'s address, checking the token rules; call
  /// ``start()`` to serve.
  /// - Throws: ``HTTPTransportError``.
  public init(handler: Handler, log: @escaping @Sendable (String) -> Void) throws(HTTPTransportError) {
    let configuration = handler.configuration
    if let token = configuration.bearerToken, token.count < HTTPTransportConfiguration.minimumTokenLength {
      throw .tokenTooShort(minimum: HTTPTransportConfiguration.minimumTokenLength)
    }
    var hints = addrinfo.streamHints(flags: AI_PASSIVE | AI_NUMERICSERV)
    var results: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(configuration.host, String(configuration.port), &hints, &results)
    guard status == 0, let first = results else {
      throw .unresolvable(host: configuration.host, reason: String(cString: gai_strerror(status)))
    }
    defer { freeaddrinfo(results) }
    // Loopback only when every address the name resolves to is loopback.
    var loopback = true
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let entry = cursor {
      if !Self.isLoopback(entry.pointee.ai_addr) { loopback = false }
      cursor = entry.pointee.ai_next
    }
    if !loopback && configuration.bearerToken == nil && !handler.servesManyUsers {
      throw .tokenRequired(host: configuration.host)
    }
    if !loopback && configuration.allowedHosts.isEmpty {
      throw .allowedHostRequired(host: configuration.host)
    }

    let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
    guard descriptor >= 0 else { throw .socketFailed(call: "socket", errno: errno) }
    var on: Int32 = 1
    setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    guard bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
      let code = errno
      close(descriptor)
      throw .socketFailed(call: "bind to \(configuration.host):\(configuration.port)", errno: code)
    }
    guard listen(descriptor, 128) == 0 else {
      let code = errno
      close(descriptor)
      throw .socketFailed(call: "listen", errno: code)
    }
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    boundPort = withUnsafePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        if Int32(address.pointee.sa_family) == AF_INET6 {
          return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
            UInt16(bigEndian: $0.pointee.sin6_port)
          }
        }
        return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
          UInt16(bigEndian: $0.pointee.sin_port)
        }
      }
    }
    listener = descriptor
    isLoopback = loopback
    self.log = log
    self.handler = handler
  }

  private static func isLoopback(_ address: UnsafeMutablePointer<sockaddr>?) -> Bool {
    guard let address else { return false }
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
      return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
        UInt32(bigEndian: $0.pointee.sin_addr.s_addr) >> 24 == 127
      }
    case AF_INET6:
      return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
        withUnsafeBytes(of: pointer.pointee.sin6_addr) { bytes in
          bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
        }
      }
    default:
      return false
    }
  }

  /// The endpoint's URL (`http://HOST:PORT/mcp`).
  public var url: String { baseURL + handler.configuration.path }

  /// The server's root URL (`http://HOST:PORT`).
  public var baseURL: String {
    let host = handler.configuration.host
    let shown = host.contains(":") ? "[\(host)]" : host
    return "http://\(shown):\(boundPort)"
  }

  /// Starts accepting connections on a thread of its own and returns.
  public func start() {
    // A client that disconnects mid-response must end that write with EPIPE, not the process.
    signal(SIGPIPE, SIG_IGN)
    let thread = Thread { [self] in acceptLoop() }
    thread.name = "engram-mcp-http"
    thread.start()
    log(
      "serving \(handler.announcement) at \(url)"
        + (handler.servesManyUsers
          ? " (a user's bearer token selects the user)"
          : handler.configuration.bearerToken == nil ? "" : " (bearer token required)")
    )
  }

  /// Stops accepting, closes the open connections and lets ``wait()`` return.
  public func stop() {
    let stopping = state.withLock { state -> Bool in
      guard !state.stopped else { return false }
      state.stopped = true
      // Under the lock, so no descriptor is one a finished connection has closed (see `admit`).
      for descriptor in state.connections.keys { shutdown(descriptor, Int32(SHUT_RDWR)) }
      return true
    }
    guard stopping else { return }
    shutdown(listener, Int32(SHUT_RDWR))
  }

  /// Waits (off the cooperative pool) until ``stop()`` ends the accept loop.
  public func wait() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let thread = Thread { [self] in
        finished.wait()
        finished.signal()
        continuation.resume()
      }
      thread.start()
    }
  }

  /// Serves until SIGINT or SIGTERM, then stops.
  public func runUntilSignalled() async {
    start()
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let sources = [SIGINT, SIGTERM].map { number in
      let source = DispatchSource.makeSignalSource(signal: number)
      source.setEventHandler { [self] in
        log("signal \(number): stopping")
        stop()
      }
      source.resume()
      return source
    }
    await wait()
    for source in sources { source.cancel() }
    log("stopped")
  }

  private func acceptLoop() {
    while true {
      var peer = sockaddr_storage()
      var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
      let connection = withUnsafeMutablePointer(to: &peer) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &peerLength) }
      }
      if connection < 0 {
        if errno == EINTR || errno == ECONNABORTED { continue }
        if state.withLock({ $0.stopped }) { break }
        if errno == EMFILE || errno == ENFILE {
          log("accept: out of file descriptors; retrying")
          usleep(100_000)  // the accept loop's own thread
          continue
        }
        log("accept failed: \(String(cString: strerror(errno)))")
        break
      }
      let address = Self.describe(peer)
      let admitted = admit(connection, from: address)
      guard admitted else {
        var response = handler.errorResponse(
          status: 503, message: "too many connections; retry shortly", for: nil)
        response.closesConnection = true
        Self.write(response, to: connection, minorVersion: 1, keepAlive: false)
        close(connection)
        continue
      }
      let thread = Thread { [self] in
        serve(connection: connection)
        state.withLock { _ = $0.connections.removeValue(forKey: connection) }
        close(connection)
      }
      thread.name = "engram-mcp-http-connection"
      thread.start()
    }
    close(listener)
    finished.signal()
  }

  /// Counts `connection` in, making room when the server or `address` is at its limit by
  /// shutting down the longest-waiting connection that has no request being served; false
  /// when there is no room (every connection in the way is being served) or the server stopped.
  private func admit(_ connection: Int32, from address: String) -> Bool {
    let configuration = handler.configuration
    return state.withLock { state -> Bool in
      guard !state.stopped else { return false }
      var victim: Int32?
      let mine = state.open(from: address)
      if mine.count >= configuration.maximumConnectionsPerAddress {
        guard let oldest = State.victim(among: mine) else { return false }
        victim = oldest
      } else if state.open().count >= configuration.maximumConnections {
        // The address holding the most connections gives one up.
        let counts = Dictionary(grouping: state.open(), by: \.connection.address)
        let ordered = counts.values.sorted { $0.count > $1.count }
        guard let oldest = ordered.lazy.compactMap({ State.victim(among: $0) }).first else {
          return false
        }
        victim = oldest
      }
      if let victim {
        state.connections[victim]?.evicted = true
        // Under the lock: the victim's thread closes its descriptor only after taking it out
        // of the table, so the number cannot have been reused by anything else yet.
        shutdown(victim, Int32(SHUT_RDWR))
      }
      state.connections[connection] = Connection(address: address, since: .now)
      return true
    }
  }

  /// The numeric address of a peer, without its port.
  private static func describe(_ peer: sockaddr_storage) -> String {
    var peer = peer
    var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    let length = socklen_t(
      Int32(peer.ss_family) == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    let status = withUnsafePointer(to: &peer) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getnameinfo($0, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
      }
    }
    guard status == 0 else { return "?" }
    return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  private func serve(connection: Int32) {
    let configuration = handler.configuration
    var timeout = Self.timeval(configuration.connectionIdleTimeout)
    setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var reader = HTTPRequestReader(
      maximumHeaderBytes: configuration.maximumHeaderBytes,
      timeouts: .init(
        idle: configuration.connectionIdleTimeout, header: configuration.headerTimeout,
        body: configuration.bodyTimeout),
      bodyLimit: { [handler] head in handler.maximumBodyBytes(for: head) },
      read: { buffer, count, deadline in Self.receive(connection, buffer, count, before: deadline) },
      sendContinue: { _ = Self.send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), to: connection) })
    let hosts = HTTPHostRule(configuration: configuration, port: boundPort)
    while !state.withLock({ $0.stopped }) {
      let outcome = reader.next()
      switch outcome {
      case .closed:
        return
      case .reject(let status, let message, let head):
        var response = handler.errorResponse(status: status, message: message, for: head)
        response.closesConnection = true
        Self.write(response, to: connection, minorVersion: 1, keepAlive: false)
        Self.lingeringClose(connection)
        return
      case .request(let request):
        // Only a connection with nothing being served gives way (one lingering after a
        // refusal does: it is done).
        state.withLock { $0.connections[connection]?.serving = true }
        guard hosts.serves(request.header("host")) else {
          let named = request.header("host").map { "'\($0)'" } ?? "no host"
          log("refused a request for \(named) (not a host this server serves; see --allow-host)")
          var response = handler.errorResponse(
            status: 421,
            message: "this server does not serve \(named); use http://127.0.0.1:\(boundPort) "
              + "or a name given with --allow-host", for: request)
          response.closesConnection = true
          Self.write(response, to: connection, minorVersion: request.minorVersion, keepAlive: false)
          return
        }
        let response = Self.blocking { [handler] in await handler.respond(to: request) }
        let keepAlive = request.wantsKeepAlive && !response.closesConnection
        guard write(response, to: connection, request: request, keepAlive: keepAlive), keepAlive else {
          return
        }
        state.withLock {
          $0.connections[connection]?.serving = false
          $0.connections[connection]?.since = .now
        }
      }
    }
  }

  /// `recv(2)` that gives up at `deadline` (-1, as for an error); 0 at end of input.
  private static func receive(
    _ connection: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int,
    before deadline: ContinuousClock.Instant
  ) -> Int {
    while true {
      let left = ContinuousClock.now.duration(to: deadline)
      guard left > .zero else { return -1 }
      let (seconds, attoseconds) = left.components
      let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
      var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, milliseconds)
      if ready < 0 && errno == EINTR { continue }
      if ready < 0 { return -1 }
      if ready == 0 { continue }
      let got = recv(connection, buffer, count, 0)
      if got < 0 && errno == EINTR { continue }
      return got
    }
  }

  /// Writes `response`, streaming an event stream or a streamed body; false when the peer is gone.
  private func write(_ response: HTTPResponse, to connection: Int32, request: HTTPRequest, keepAlive: Bool)
    -> Bool
  {
    if case .stream(let produce) = response.body {
      return writeStream(response, produce: produce, to: connection, request: request, keepAlive: keepAlive)
    }
    guard case .eventStream(let produce) = response.body else {
      return Self.write(response, to: connection, minorVersion: request.minorVersion, keepAlive: keepAlive)
    }
    // HTTP/1.0 has no chunked encoding: the stream then ends with the connection.
    let chunked = request.minorVersion >= 1
    var head = "HTTP/1.\(request.minorVersion) \(response.status) \(HTTPResponse.reason(response.status))\r\n"
    for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
    head += chunked ? "Transfer-Encoding: chunked\r\n" : ""
    head += "Connection: \(keepAlive && chunked ? "keep-alive" : "close")\r\n\r\n"
    var alive = Self.send(Array(head.utf8), to: connection)
    func sendChunk(_ bytes: [UInt8]) {
      guard alive else { return }
      alive = Self.send(
        chunked ? Array("\(String(bytes.count, radix: 16))\r\n".utf8) + bytes + [13, 10] : bytes,
        to: connection)
    }
    // On the connection's own thread, which may wait (the handler runs on the executor).
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Data?>(nil)
    Task(executorPreference: ConnectionWorkExecutor.shared) {
      let event = await produce()
      result.withLock { $0 = event }
      done.signal()
    }
    // Comments keep proxies from closing a stream that waits on a slow tool; a client that
    // went away does not cancel the request (the transport says disconnection is not
    // cancellation), so the wait goes on.
    let interval = handler.configuration.eventStreamKeepAlive
    let (seconds, attoseconds) = interval.components
    let milliseconds = max(10, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    while done.wait(timeout: .now() + .milliseconds(milliseconds)) == .timedOut {
      sendChunk(Array(": keep-alive\n\n".utf8))
    }
    let event = result.withLock { $0 } ?? Data()
    sendChunk(Array("event: message\ndata: ".utf8) + Array(event) + Array("\n\n".utf8))
    if chunked && alive { alive = Self.send(Array("0\r\n\r\n".utf8), to: connection) }
    return alive && chunked
  }

  /// Writes the head of a streamed body, then each piece `produce` writes as one chunk, then
  /// the last chunk; false when the peer is gone or the connection must close.
  private func writeStream(
    _ response: HTTPResponse, produce: @escaping @Sendable (HTTPStreamWriter) async -> Void,
    to connection: Int32,
    request: HTTPRequest, keepAlive: Bool
  ) -> Bool {
    let chunked = request.minorVersion >= 1
    var head = "HTTP/1.\(request.minorVersion) \(response.status) \(HTTPResponse.reason(response.status))\r\n"
    for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
    head += chunked ? "Transfer-Encoding: chunked\r\n" : ""
    head += "Connection: \(keepAlive && chunked ? "keep-alive" : "close")\r\n\r\n"
    let alive = Mutex(Self.send(Array(head.utf8), to: connection))
    let writer = HTTPStreamWriter { data in
      alive.withLock { alive in
        guard alive else { return false }
        let bytes = Array(data)
        alive = Self.send(
          chunked ? Array("\(String(bytes.count, radix: 16))\r\n".utf8) + bytes + [13, 10] : bytes,
          to: connection)
        return alive
      }
    }
    Self.blocking { await produce(writer) }
    return alive.withLock { alive in
      if chunked && alive { alive = Self.send(Array("0\r\n\r\n".utf8), to: connection) }
      return alive && chunked
    }
  }

  /// Ends the sending side, then reads and drops what the client still sends (a body over the
  /// limit, say) for a bounded time and amount, so it gets to read the error instead of a reset.
  private static func lingeringClose(_ connection: Int32) {
    shutdown(connection, Int32(SHUT_WR))
    var timeout = timeval(.seconds(2))
    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var drained = 0
    let deadline = ContinuousClock.now.advanced(by: .seconds(5))
    while drained < 64 << 20, ContinuousClock.now < deadline {
      let got = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
      if got < 0 && errno == EINTR { continue }
      if got <= 0 { break }
      drained += got
    }
  }

  @discardableResult
  private static func write(
    _ response: HTTPResponse, to connection: Int32, minorVersion: Int, keepAlive: Bool
  ) -> Bool {
    let body = response.bodyBytes
    var head = "HTTP/1.\(minorVersion) \(response.status) \(HTTPResponse.reason(response.status))\r\n"
    for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
    head += "Content-Length: \(body.count)\r\nConnection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
    return send(Array(head.utf8) + Array(body), to: connection)
  }

  /// Sends all of `bytes`; false when the peer is gone or the send timed out.
  private static func send(_ bytes: [UInt8], to connection: Int32) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes[offset...].withUnsafeBytes { Glibc_send(connection, $0.baseAddress, $0.count) }
      if sent < 0 {
        if errno == EINTR { continue }
        return false
      }
      offset += sent
    }
    return true
  }

  /// Runs `work` on the transport's own executor (`ConnectionWorkExecutor`) and waits for
  /// it on this connection thread.
  /// Called only on a connection's own thread (never a cooperative one), which may wait.
  private static func blocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<T?>(nil)
    Task(executorPreference: ConnectionWorkExecutor.shared) {
      let value = await work()
      result.withLock { $0 = value }
      done.signal()
    }
    done.wait()
    return result.withLock { $0 }!
  }

  private static func timeval(_ duration: Duration) -> timeval {
    let (seconds, attoseconds) = duration.components
    #if canImport(Glibc)
      return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    #else
      return Darwin.timeval(tv_sec: Int(seconds), tv_usec: Int32(attoseconds / 1_000_000_000_000))
    #endif
  }
}

extension HTTPTransport where Handler == StreamableHTTPHandler {
  /// Resolves and binds the address for MCP, every session getting a server from `makeServer`.
  /// With `admission`, each request's bearer token selects its user (see
  /// ``StreamableHTTPHandler``): a non-loopback address then needs no shared token.
  /// - Throws: ``HTTPTransportError``.
  public convenience init(
    configuration: HTTPTransportConfiguration, log: @escaping @Sendable (String) -> Void,
    admission: (any HTTPUserAdmission)? = nil, makeServer: @escaping @Sendable () -> MCPServer
  ) throws(HTTPTransportError) {
    try self.init(
      handler: StreamableHTTPHandler(
        configuration: configuration, log: log, admission: admission, makeServer: makeServer),
      log: log)
  }
}

/// `send(2)` with MSG_NOSIGNAL where it exists (a closed peer gives EPIPE, never SIGPIPE).
private func Glibc_send(_ socket: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
  #if canImport(Glibc)
    return send(socket, buffer, count, Int32(MSG_NOSIGNAL))
  #else
    return send(socket, buffer, count, 0)
  #endif
}

/// Where the HTTP transport runs its handlers: threads of its own (a concurrent dispatch
/// queue), not the cooperative pool. A host process whose pool threads are all blocked (an
/// embedding app, or a test process waiting on children) then still answers requests;
/// default actors the handlers call run there too (a task's executor preference).
final class ConnectionWorkExecutor: TaskExecutor {
  static let shared = ConnectionWorkExecutor()
  private let queue = DispatchQueue(label: "engram-mcp-http-work", attributes: .concurrent)

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }
}
