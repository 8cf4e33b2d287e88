import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramHTTP

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The HTTP server around the handler, over real loopback sockets.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HTTPTransportTests {
  static func transport(_ configure: (inout HTTPTransportConfiguration) -> Void = { _ in }) throws
    -> HTTPTransport<StreamableHTTPHandler>
  {
    var configuration = HTTPTransportConfiguration(host: "127.0.0.1", port: 0)
    configure(&configuration)
    let transport = try HTTPTransport(configuration: configuration, log: { _ in }) {
      MCPServer(
        info: ServerInfo(name: "engram", version: "0.1.0"), provider: FakeToolProvider(), log: { _ in })
    }
    transport.start()
    return transport
  }

  /// A connected socket to 127.0.0.1:`port`, or nil when nothing listens there.
  static func connectTo(port: UInt16) -> Int32? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(descriptor)
      return nil
    }
    return descriptor
  }

  /// Sends `request` on a new connection and returns everything read until the server closes
  /// it (or 120 s pass: the whole suite can keep the cooperative pool busy for a long time).
  /// The blocking socket calls run on a thread of their own: tests run in
  /// parallel on the cooperative pool, which the server's handler needs too.
  static func exchange(port: UInt16, _ request: [UInt8]) async throws -> String {
    await withCheckedContinuation { continuation in
      Thread { continuation.resume(returning: blockingExchange(port: port, request)) }.start()
    }
  }

  static func blockingExchange(port: UInt16, _ request: [UInt8], timeoutSeconds: Int = 120) -> String {
    guard let descriptor = connectTo(port: port) else { return "" }
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
      if count <= 0 { break }
      received += buffer[0..<count]
    }
    return String(decoding: received, as: UTF8.self)
  }

  static func post(_ body: String, close: Bool = true, extra: String = "") -> String {
    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      + "Accept: application/json, text/event-stream\r\nContent-Length: \(body.utf8.count)\r\n" + extra
      + (close ? "Connection: close\r\n" : "") + "\r\n" + body
  }

  static let initialize =
    #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#

  @Test func aNonLoopbackAddressNeedsAToken() throws {
    let unprotected = #expect(throws: HTTPTransportError.self) {
      _ = try HTTPTransport(
        configuration: HTTPTransportConfiguration(host: "0.0.0.0", port: 0), log: { _ in },
        makeServer: { MCPServer(info: ServerInfo(name: "x", version: "0"), provider: FakeToolProvider()) })
    }
    #expect(unprotected == .tokenRequired(host: "0.0.0.0"))
    #expect(unprotected.map { "\($0)".contains("ENGRAM_MCP_TOKEN") } == true)
    let short = #expect(throws: HTTPTransportError.self) {
      _ = try HTTPTransport(
        configuration: HTTPTransportConfiguration(host: "0.0.0.0", port: 0, bearerToken: "short"),
        log: { _ in },
        makeServer: { MCPServer(info: ServerInfo(name: "x", version: "0"), provider: FakeToolProvider()) })
    }
    #expect(short == .tokenTooShort(minimum: HTTPTransportConfiguration.minimumTokenLength))
    var configuration = HTTPTransportConfiguration(host: "0.0.0.0", port: 0, bearerToken: "0123456789abcdef")
    let unnamed = #expect(throws: HTTPTransportError.self) {
      _ = try HTTPTransport(
        configuration: configuration, log: { _ in },
        makeServer: { MCPServer(info: ServerInfo(name: "x", version: "0"), provider: FakeToolProvider()) })
    }
    #expect(unnamed == .allowedHostRequired(host: "0.0.0.0"))
    #expect(unnamed.map { "\($0)".contains("--allow-host") } == true)
    configuration.allowedHosts = ["box.lan"]
    let protected = try HTTPTransport(
      configuration: configuration, log: { _ in },
      makeServer: { MCPServer(info: ServerInfo(name: "x", version: "0"), provider: FakeToolProvider()) })
    #expect(!protected.isLoopback)
    let loopback = try Self.transport()
    #expect(loopback.isLoopback)
    loopback.stop()
  }

  @Test func aForeignHostIsRefusedBeforeAnyHandler() async throws {
    let transport = try Self.transport { $0.allowedHosts = ["box.lan", "proxy.example:8443"] }
    defer { transport.stop() }
    let port = transport.boundPort
    func status(host: String?) async -> Int {
      let request =
        "POST /mcp HTTP/1.1\r\n" + (host.map { "Host: \($0)\r\n" } ?? "")
        + "Content-Type: application/json\r\nAccept: */*\r\nContent-Length: \(Self.initialize.utf8.count)\r\n"
        + "Connection: close\r\n\r\n" + Self.initialize
      return await RawHTTP.exchange(port: port, request).status
    }
    for served in [
      "127.0.0.1", "127.0.0.1:\(port)", "localhost:\(port)", "LOCALHOST:\(port)", "[::1]:\(port)", "box.lan",
      "box.lan:9999", "proxy.example:8443",
    ] {
      #expect(await status(host: served) == 200, "\(served)")
    }
    for foreign in [
      nil, "", "evil.example", "evil.example:\(port)", "127.0.0.1:\(port == 1 ? 2 : 1)", "127.0.0.2:\(port)",
      "proxy.example:9999", "localhost.evil.example", "127.0.0.1:x",
    ] {
      #expect(await status(host: foreign) == 421, "\(foreign ?? "no Host")")
    }
    #expect(transport.handler.sessionCount == 8)
  }

  /// `count` connections to `port`, each having sent a request line and one header and no more
  /// (opened on a thread of their own, in order).
  static func stall(_ count: Int, port: UInt16) async -> [Int32] {
    await withCheckedContinuation { continuation in
      Thread {
        let descriptors = (0..<count).compactMap { _ in RawHTTP.connect(port: port) }
        for descriptor in descriptors {
          RawHTTP.send(descriptor, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        }
        continuation.resume(returning: descriptors)
      }.start()
    }
  }

  @Test func halfFinishedConnectionsDoNotStarveOthers() async throws {
    // No header deadline in reach: the connection caps alone must keep room for others.
    let transport = try Self.transport { $0.headerTimeout = .seconds(600) }
    defer { transport.stop() }
    let port = transport.boundPort
    // More connections than the server and one address may hold, each stopped inside its headers.
    let stalled = await Self.stall(150, port: port)
    defer { for descriptor in stalled { close(descriptor) } }
    #expect(stalled.count == 150)
    let answer = await RawHTTP.exchange(port: port, Self.post(Self.initialize), seconds: 20)
    #expect(answer.status == 200)
  }

  @Test func aConnectionSlowToFinishItsHeadersIsAnswered408AndClosed() async throws {
    let transport = try Self.transport { $0.headerTimeout = .milliseconds(300) }
    defer { transport.stop() }
    let answer = await RawHTTP.exchange(
      port: transport.boundPort, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", seconds: 60)
    #expect(answer.status == 408)
  }

  @Test func anAddressOverItsCapGivesUpItsOldestWaitingConnection() async throws {
    let transport = try Self.transport {
      $0.maximumConnectionsPerAddress = 3
      $0.headerTimeout = .seconds(600)
    }
    defer { transport.stop() }
    let port = transport.boundPort
    let stalled = await Self.stall(3, port: port)
    defer { for descriptor in stalled { close(descriptor) } }
    let answer = await RawHTTP.exchange(port: port, Self.post(Self.initialize), seconds: 20)
    #expect(answer.status == 200)
    // The oldest of the three was closed to make room (long before its header deadline); the
    // newest still waits.
    let closed = await withCheckedContinuation { continuation in
      Thread {
        var probe = pollfd(fd: stalled[0], events: Int16(POLLIN), revents: 0)
        guard poll(&probe, 1, 20_000) == 1 else { return continuation.resume(returning: false) }
        var byte: UInt8 = 0
        continuation.resume(returning: recv(stalled[0], &byte, 1, 0) <= 0)
      }.start()
    }
    #expect(closed)
    var probe = pollfd(fd: stalled[2], events: Int16(POLLIN), revents: 0)
    #expect(poll(&probe, 1, 0) == 0)
  }

  @Test(arguments: [
    ("127.0.0.1:8080", "127.0.0.1", 8080), ("[::1]:0", "::1", 0), ("localhost:80", "localhost", 80),
    ("0.0.0.0:65535", "0.0.0.0", 65535),
  ])
  func addressesParse(address: String, host: String, port: Int) throws {
    let parsed = try HTTPTransportConfiguration.parse(address: address)
    #expect(parsed.host == host && Int(parsed.port) == port)
  }

  @Test(arguments: ["8080", "host:", ":80", "::1:80", "h:65536", "[::1]80", "h:+80", "h:８０"])
  func badAddressesAreRefused(address: String) {
    #expect(throws: HTTPTransportError.invalidAddress(address)) {
      _ = try HTTPTransportConfiguration.parse(address: address)
    }
  }

  @Test func servesAndKeepsConnectionsAlive() async throws {
    let transport = try Self.transport()
    defer { transport.stop() }
    // Two requests on one connection; the second asks to close it.
    let raw = Self.post(Self.initialize, close: false) + Self.post(Self.initialize)
    let answer = try await Self.exchange(port: transport.boundPort, Array(raw.utf8))
    #expect(answer.components(separatedBy: "HTTP/1.1 200 OK").count == 3)
    #expect(answer.contains("Connection: keep-alive"))
    #expect(answer.contains("MCP-Session-Id: "))
    #expect(transport.handler.sessionCount == 2)
  }

  /// Requests are answered while every thread of the cooperative pool is blocked (an app
  /// embedding the server, or a test process waiting on its children): the handlers run on
  /// the transport's own executor.
  ///
  /// The test itself runs off the pool (`.offPool`): it holds every pool thread only for the
  /// exchange, and waits for them without holding one. (It used to hold its own pool thread
  /// while waiting up to 60 s for the others, which stalled the whole run that long on a
  /// busy 2-core machine.)
  @Test(.offPool) func answersWhileEveryCooperativeThreadIsBlocked() throws {
    let transport = try Self.transport()
    defer { transport.stop() }
    let threads = ProcessInfo.processInfo.activeProcessorCount
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    // Detached tasks do not inherit the test's executor: each takes a thread of the pool.
    for _ in 0..<threads {
      Task.detached {
        started.signal()
        release.wait()
      }
    }
    defer { for _ in 0..<threads { release.signal() } }
    for _ in 0..<threads {
      try #require(started.wait(timeout: .now() + 240) == .success, "a pool thread never came free")
    }
    let answer = Self.blockingExchange(
      port: transport.boundPort, Array(Self.post(Self.initialize).utf8), timeoutSeconds: 20)
    #expect(answer.hasPrefix("HTTP/1.1 200 OK"))
  }

  @Test func oversizedAndUnsupportedRequestsAreRefused() async throws {
    let transport = try Self.transport { $0.maximumBodyBytes = 1024 }
    defer { transport.stop() }
    let port = transport.boundPort
    let big = String(repeating: " ", count: 2048)
    let tooLarge = try await Self.exchange(port: port, Array(Self.post(big).utf8))
    #expect(tooLarge.hasPrefix("HTTP/1.1 413 "))
    #expect(tooLarge.contains("-32600"))
    let chunked =
      "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: */*\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    #expect(try await Self.exchange(port: port, Array(chunked.utf8)).hasPrefix("HTTP/1.1 501 "))
    let noLength = "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\r\n"
    #expect(try await Self.exchange(port: port, Array(noLength.utf8)).hasPrefix("HTTP/1.1 411 "))
    let hugeHeader = "GET /mcp HTTP/1.1\r\nX-Filler: \(String(repeating: "a", count: 20_000))\r\n\r\n"
    #expect(try await Self.exchange(port: port, Array(hugeHeader.utf8)).hasPrefix("HTTP/1.1 431 "))
    #expect(try await Self.exchange(port: port, Array("GARBAGE\r\n\r\n".utf8)).hasPrefix("HTTP/1.1 400 "))
    #expect(
      try await Self.exchange(port: port, Array("GET /mcp HTTP/2.0\r\n\r\n".utf8)).hasPrefix("HTTP/1.1 505 "))
    let badLength = "POST /mcp HTTP/1.1\r\nContent-Length: -5\r\n\r\n"
    #expect(try await Self.exchange(port: port, Array(badLength.utf8)).hasPrefix("HTTP/1.1 400 "))
    // The server is still serving.
    #expect(
      try await Self.exchange(port: port, Array(Self.post(Self.initialize).utf8)).hasPrefix("HTTP/1.1 200 "))
  }

  @Test func expectContinueIsAnsweredBeforeTheBody() async throws {
    let transport = try Self.transport()
    defer { transport.stop() }
    let port = transport.boundPort
    let (interim, final) = await withCheckedContinuation { continuation in
      Thread {
        guard let descriptor = Self.connectTo(port: port) else {
          continuation.resume(returning: ("", ""))
          return
        }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Self.post(Self.initialize, extra: "Expect: 100-continue\r\n")
        let split = request.range(of: "\r\n\r\n")!.upperBound
        let head = Array(request[..<split].utf8)
        _ = head.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        let interim = String(decoding: buffer[0..<max(0, count)], as: UTF8.self)
        let body = Array(request[split...].utf8)
        _ = body.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var rest: [UInt8] = []
        while true {
          let got = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
          if got <= 0 { break }
          rest += buffer[0..<got]
        }
        continuation.resume(returning: (interim, String(decoding: rest, as: UTF8.self)))
      }.start()
    }
    #expect(interim == "HTTP/1.1 100 Continue\r\n\r\n")
    #expect(final.hasPrefix("HTTP/1.1 200 OK"))
  }

  /// A handler whose answer is a body written in three pieces, with the query echoed.
  struct PiecesHandler: HTTPHandling {
    var configuration = HTTPTransportConfiguration(host: "127.0.0.1", port: 0)
    var announcement: String { "pieces" }
    func respond(to request: HTTPRequest) async -> HTTPResponse {
      let query = request.queryParameters["say"] ?? ""
      return HTTPResponse(
        status: 200, headers: [("Content-Type", "text/event-stream")],
        body: .stream { writer in
          writer.event("piece", data: "one")
          try? await Task.sleep(for: .milliseconds(20))
          writer.event("piece", data: "two\nlines")
          writer.write(Data(query.utf8))
        })
    }
  }

  @Test func streamedBodiesAreChunkedInPiecesAndEnd() async throws {
    let transport = try HTTPTransport(handler: PiecesHandler(), log: { _ in })
    transport.start()
    defer { transport.stop() }
    let answer = try await Self.exchange(
      port: transport.boundPort,
      Array("GET /?say=hello%20there HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
    #expect(answer.hasPrefix("HTTP/1.1 200 OK"))
    #expect(answer.contains("Transfer-Encoding: chunked"))
    #expect(answer.contains("event: piece\ndata: one\n\n"))
    #expect(answer.contains("event: piece\ndata: two\ndata: lines\n\n"))
    #expect(answer.contains("hello there"))
    #expect(answer.hasSuffix("0\r\n\r\n"))
  }

  @Test func eventStreamsAreChunkedAndEnd() async throws {
    let transport = try Self.transport { $0.responseMode = .eventStream }
    defer { transport.stop() }
    let answer = try await Self.exchange(port: transport.boundPort, Array(Self.post(Self.initialize).utf8))
    #expect(answer.hasPrefix("HTTP/1.1 200 OK"))
    #expect(answer.contains("Content-Type: text/event-stream"))
    #expect(answer.contains("Transfer-Encoding: chunked"))
    #expect(answer.contains("event: message\ndata: {"))
    #expect(answer.hasSuffix("0\r\n\r\n"))
  }

  @Test func aTokenIsCheckedOnTheWire() async throws {
    let transport = try Self.transport { $0.bearerToken = "wire-token-0123456789" }
    defer { transport.stop() }
    let port = transport.boundPort
    #expect(
      try await Self.exchange(port: port, Array(Self.post(Self.initialize).utf8)).hasPrefix("HTTP/1.1 401 "))
    let authorized = Self.post(Self.initialize, extra: "Authorization: Bearer wire-token-0123456789\r\n")
    #expect(try await Self.exchange(port: port, Array(authorized.utf8)).hasPrefix("HTTP/1.1 200 "))
  }

  @Test func tooManyConnectionsGet503() async throws {
    let transport = try Self.transport { $0.maximumConnections = 0 }
    defer { transport.stop() }
    #expect(
      try await Self.exchange(port: transport.boundPort, Array(Self.post(Self.initialize).utf8)).hasPrefix(
        "HTTP/1.1 503 "))
  }

  @Test func stopEndsWaiting() async throws {
    let transport = try Self.transport()
    transport.stop()
    // `wait()` returns, well before a generous deadline. (No check that the port then refuses
    // connections: tests running in parallel bind ephemeral ports, and one once took this
    // port as soon as it was free.)
    let first = await withTaskGroup(of: String.self) { group in
      group.addTask {
        await transport.wait()
        return "waited"
      }
      group.addTask {
        try? await Task.sleep(for: .seconds(60))
        return "deadline"
      }
      let first = await group.next()
      group.cancelAll()
      return first
    }
    #expect(first == "waited")
  }
}
