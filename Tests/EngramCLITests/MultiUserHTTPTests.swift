import Engram
import EngramHTTP
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Many users on one MCP endpoint, over real loopback HTTP: the bearer token selects the user,
/// nothing else does; sessions belong to their user; a user past their limit gets 503.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct MultiUserHTTPTests {
  struct Reply {
    var status: Int
    var headers: [String: String]
    var body: String

    var json: JSONValue? { try? JSONValue(parsing: Data(body.utf8)) }
  }

  /// A server over `folder/shared.sqlite` for `users`, with `limits`.
  static func server(_ folder: ScratchFolder, users: UsersFile, limits: UserEngines.Limits = .init()) throws
    -> (HTTPTransport<StreamableHTTPHandler>, UserEngines)
  {
    let path = folder.path("shared.sqlite")
    let engines = UserEngines(users: users, limits: limits) { user in
      var configuration = EngramConfiguration(embedder: try HashingEmbedder(dimension: 64))
      configuration.user = user
      configuration.readerCount = 1
      configuration.cacheSizeKiB = 256
      return try MemoryEngine(path: path, configuration: configuration)
    }
    let transport = try HTTPTransport(
      configuration: HTTPTransportConfiguration(host: "127.0.0.1", port: 0), log: { _ in },
      admission: UserEngineAdmission(engines: engines),
      makeServer: {
        MCPServer(
          info: ServerInfo(name: "engram", version: "test"), provider: NoUserToolProvider(), log: { _ in })
      })
    transport.start()
    return (transport, engines)
  }

  /// POSTs `body` on a new connection (on a thread of its own: the socket calls block).
  static func post(
    port: UInt16, _ body: String, token: String?, session: String? = nil
  ) async -> Reply {
    var head =
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      + "Accept: application/json, text/event-stream\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
    if let token { head += "Authorization: Bearer \(token)\r\n" }
    if let session { head += "MCP-Session-Id: \(session)\r\n" }
    let request = Array((head + "\r\n" + body).utf8)
    let raw = await withCheckedContinuation { continuation in
      Thread { continuation.resume(returning: exchange(port: port, request)) }.start()
    }
    let parts = raw.components(separatedBy: "\r\n\r\n")
    let lines = parts[0].components(separatedBy: "\r\n")
    let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    return Reply(status: status, headers: headers, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
  }

  static func exchange(port: UInt16, _ request: [UInt8]) -> String {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return "" }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { return "" }
    var timeout = timeval(tv_sec: 60, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
      if count <= 0 { break }
      received += buffer[0..<count]
      // Done once the body its Content-Length announces is in (without waiting for the close).
      let text = String(decoding: received, as: UTF8.self)
      if let end = text.range(of: "\r\n\r\n") {
        let head = text[..<end.lowerBound].lowercased()
        if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
          let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)),
          text.utf8.count - text[..<end.upperBound].utf8.count >= length
        {
          break
        }
      }
    }
    return String(decoding: received, as: UTF8.self)
  }

  static let initialize =
    #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#

  static func call(_ name: String, _ arguments: String, id: Int = 2) -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"\#(name)","arguments":\#(arguments)}}"#
  }

  static func open(port: UInt16, token: String) async throws -> String {
    let reply = await post(port: port, initialize, token: token)
    #expect(reply.status == 200)
    return try #require(reply.headers["mcp-session-id"])
  }

  static func texts(_ reply: Reply) -> [String] {
    reply.json?["result"]?["structuredContent"]?["hits"]?.arrayValue?.compactMap { $0["text"]?.stringValue }
      ?? []
  }

  @Test func eachTokenSeesOnlyItsOwnUsersMemories() async throws {
    let scratch = try ScratchFolder()
    var users = UsersFile()
    let ann = try users.add("ann")
    let bob = try users.add("bob")
    let (transport, engines) = try Self.server(scratch, users: users)
    let port = transport.boundPort
    let annSession = try await Self.open(port: port, token: ann)
    let bobSession = try await Self.open(port: port, token: bob)
    for (token, session, text) in [
      (ann, annSession, "Ann keeps bees behind the greenhouse"),
      (bob, bobSession, "Bob keeps goats on the hill"),
    ] {
      let reply = await Self.post(
        port: port, Self.call("memory_remember", #"{"content":"\#(text)"}"#), token: token, session: session)
      #expect(reply.status == 200 && reply.json?["result"]?["isError"] == false)
    }
    // The query names the other user and asks for everything: the token decides.
    let query = Self.call("memory_search", #"{"query":"keeps bees goats ann bob","k":10}"#)
    let annHits = Self.texts(await Self.post(port: port, query, token: ann, session: annSession))
    let bobHits = Self.texts(await Self.post(port: port, query, token: bob, session: bobSession))
    #expect(annHits == ["Ann keeps bees behind the greenhouse"])
    #expect(bobHits == ["Bob keeps goats on the hill"])
    transport.stop()
    await transport.wait()
    await engines.close()
  }

  @Test func aWrongTokenIsRefusedAndASessionServesOnlyItsUser() async throws {
    let scratch = try ScratchFolder()
    var users = UsersFile()
    let ann = try users.add("ann")
    let bob = try users.add("bob")
    let (transport, engines) = try Self.server(scratch, users: users)
    let port = transport.boundPort
    #expect(await Self.post(port: port, Self.initialize, token: nil).status == 401)
    let wrong = await Self.post(port: port, Self.initialize, token: String(ann.reversed()))
    #expect(wrong.status == 401)
    #expect(wrong.headers["www-authenticate"] != nil)
    let annSession = try await Self.open(port: port, token: ann)
    let stats = Self.call("memory_stats", "{}")
    #expect(await Self.post(port: port, stats, token: ann, session: annSession).status == 200)
    // Ann's session with Bob's token: as unknown as any other session id.
    let borrowed = await Self.post(port: port, stats, token: bob, session: annSession)
    #expect(borrowed.status == 404)
    #expect(!borrowed.body.contains("\"result\""))
    transport.stop()
    await transport.wait()
    await engines.close()
  }

  @Test func aUserPastTheirRateGets503WithRetryAfterAndOthersAreServed() async throws {
    let scratch = try ScratchFolder()
    var users = UsersFile()
    let ann = try users.add("ann")
    let bob = try users.add("bob")
    var limits = UserEngines.Limits()
    // One request per 1,000 s after a burst of 2: no machine refills the bucket between the
    // requests of this test (its time limit is 300 s; at 100 s per request, a test started in
    // the first minutes' backlog of a full run once waited that long between two requests).
    limits.requestsPerSecondPerUser = 0.001
    limits.burstPerUser = 2
    let (transport, engines) = try Self.server(scratch, users: users, limits: limits)
    let port = transport.boundPort
    let annSession = try await Self.open(port: port, token: ann)
    let stats = Self.call("memory_stats", "{}")
    #expect(await Self.post(port: port, stats, token: ann, session: annSession).status == 200)
    let refused = await Self.post(port: port, stats, token: ann, session: annSession)
    #expect(refused.status == 503)
    let retryAfter = try #require(refused.headers["retry-after"].flatMap { Int($0) })
    #expect((1...1_000).contains(retryAfter))
    let bobSession = try await Self.open(port: port, token: bob)
    #expect(await Self.post(port: port, stats, token: bob, session: bobSession).status == 200)
    transport.stop()
    await transport.wait()
    await engines.close()
  }
}
