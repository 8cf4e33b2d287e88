import EngramPostgres
import EngramPostgresTestSupport
import EngramTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Issue 46, finding 4: a PostgreSQL store made with one embedder, users whose memories the
/// CLI made, served by `engram mcp --http --users` and `engram serve --users` (real processes).
/// A new user's memory takes the store's embedder (or `--model`); the servers open each user's
/// memory with the embedder it was made with.
@Suite("Many users and their embedders", .timeLimit(.minutes(8)), .watchdog, .offPool)
struct ManyUsersEmbedderTests {
  /// What each user stores and a question only their memory answers.
  static let facts = [
    "u0": ("I keep bees behind the greenhouse.", "where are the bees kept"),
    "u1": ("My red bicycle is parked at the station.", "where is the bicycle parked"),
    "u2": ("Piano lessons are on Saturday mornings.", "when are the piano lessons"),
  ]

  @Test func usersTheCLIMadeAreServedEachWithTheirOwnEmbedder() async throws {
    try await PostgresTestServer.inDatabase { _, url in
      let scratch = try ScratchFolder()
      func run(_ arguments: [String]) async throws -> EngramBinary.Result {
        try await EngramBinary.run(arguments, environment: ScratchFolder.environment)
      }
      // The store is made with the hashing embedder; no MiniLM in reach (the default).
      let initialized = try await run(["init", "--db", url, "--model", "hashing"])
      #expect(initialized.status == 0, "\(initialized.standardError)")
      let usersFile = scratch.path("users")
      var tokens: [String: String] = [:]
      for user in ["u0", "u1", "u2", "u3"] {
        let added = try await run(["users", "add", user, "--users", usersFile])
        #expect(added.status == 0, "\(added.standardError)")
        tokens[user] = added.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
      }
      // u0 and u1 take the store's embedder; u2 names another (a 64-d hashing embedder).
      for (user, model) in [("u0", nil), ("u1", nil), ("u2", "hashing:64")] as [(String, String?)] {
        let (fact, _) = try #require(Self.facts[user])
        let file = try scratch.write(
          "\(user).jsonl",
          #"{"session": "s", "role": "user", "timestamp": "2024-03-02T18:04:00Z", "content": "\#(fact)"}"#
            + "\n")
        let ingested = try await run(
          ["ingest", "--db", url, "--user", user, file] + (model.map { ["--model", $0] } ?? []))
        #expect(ingested.status == 0, "\(ingested.standardError)")
        // The ingest that made the memory says with which embedder; a second one does not.
        let expected = model ?? "hashing"
        #expect(ingested.standardError.contains("embedder \(expected) ("), "\(ingested.standardError)")
        let again = try await run(["ingest", "--db", url, "--user", user, file])
        #expect(again.status == 0 && !again.standardError.contains("is new"), "\(again.standardError)")
        let stats = try await run(["stats", "--db", url, "--user", user, "--json"])
        #expect(stats.standardOutput.contains(#""embedder_spec":"\#(expected)""#), "\(stats.standardOutput)")
      }
      // --model for a memory made with another embedder is refused, and changes nothing.
      let conflicting = try await run(["remember", "--db", url, "--user", "u2", "--model", "hashing", "x"])
      #expect(conflicting.status == 1 && conflicting.standardError.contains("hashing:64"))

      for command in ["mcp", "serve"] {
        let server = try await ServerProcess.start(
          [command, "--http", "127.0.0.1:0", "--db", url, "--users", usersFile],
          log: scratch.path("\(command).log"))
        for user in ["u0", "u1", "u2"] {
          let (fact, question) = try #require(Self.facts[user])
          let token = try #require(tokens[user])
          let texts =
            command == "mcp"
            ? try await server.mcpSearch(question, token: token)
            : try await server.webSearch(question, token: token)
          // Each user's search answers with their own fact, and only theirs.
          #expect(texts.first == fact, "\(command) \(user): \(texts); log: \(server.log)")
          #expect(!texts.contains { text in Self.facts.values.contains { $0.0 == text && $0.0 != fact } })
        }
        await server.stop()
      }

      // A user the server meets first gets the store's embedder too: the CLI then reads what
      // the server stored.
      let server = try await ServerProcess.start(
        ["mcp", "--http", "127.0.0.1:0", "--db", url, "--users", usersFile], log: scratch.path("u3.log"))
      try await server.mcpRemember(
        "The spare key is under the blue flower pot.", token: try #require(tokens["u3"]))
      #expect(server.log.contains("the memory of user u3 is new: it uses the embedder hashing (the store's)"))
      await server.stop()
      let query = try await run(["query", "--db", url, "--user", "u3", "where is the spare key"])
      #expect(query.status == 0 && query.standardOutput.contains("spare key is under the blue"), "\(query)")
      let stats = try await run(["stats", "--db", url, "--user", "u3", "--json"])
      #expect(stats.standardOutput.contains(#""embedder_spec":"hashing""#), "\(stats.standardOutput)")
    }
  }
}

/// An `engram` server started for a test: its port read from its log, stopped by `stop()`.
struct ServerProcess {
  let process: ChildProcess
  let port: UInt16
  let logPath: String

  var log: String { ChildProcess.readText(logPath) }

  /// Starts `engram arguments` and waits (up to a minute) for the line that gives its address.
  static func start(_ arguments: [String], log: String) async throws -> ServerProcess {
    let environment = ProcessInfo.processInfo.environment.merging(ScratchFolder.environment) { $1 }
    let process = try ChildProcess(
      try EngramBinary.locate().path, arguments: arguments, environment: environment,
      standardError: .file(log))
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
      let text = ChildProcess.readText(log)
      if let range = text.range(of: "at http://127.0.0.1:") {
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        if let port = UInt16(digits) { return ServerProcess(process: process, port: port, logPath: log) }
      }
      guard process.isRunning else { break }
      try await Task.sleep(for: .milliseconds(50))
    }
    _ = await process.kill()
    throw ScratchFolder.SetupError(message: "\(arguments) did not start: \(ChildProcess.readText(log))")
  }

  /// Stops the server (SIGTERM, then SIGKILL after 20 s).
  func stop() async {
    process.send(SIGTERM)
    if await process.exit(within: .seconds(20)) == nil { _ = await process.kill() }
  }

  /// One HTTP/1.1 exchange on a new connection: the status and the body.
  func request(_ method: String, _ path: String, body: String = "", headers: [(String, String)] = [])
    async -> (status: Int, headers: [String: String], body: String)
  {
    var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    if method == "POST" { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
    let bytes = Array((head + "\r\n" + body).utf8)
    let port = self.port
    let raw = await withCheckedContinuation { continuation in
      Thread { continuation.resume(returning: Self.exchange(port: port, bytes)) }.start()
    }
    let parts = raw.components(separatedBy: "\r\n\r\n")
    let lines = parts[0].components(separatedBy: "\r\n")
    let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    var fields: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    return (status, fields, parts.dropFirst().joined(separator: "\r\n\r\n"))
  }

  /// Sends `request` and reads until the server closes the connection (blocking: on a thread).
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
    }
    return String(decoding: received, as: UTF8.self)
  }

  /// Opens an MCP session with `token`, failing the test with the answer when it is refused.
  func mcpSession(token: String) async throws -> String {
    let initialize =
      #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#
    let reply = await request("POST", "/mcp", body: initialize, headers: mcpHeaders(token: token))
    #expect(reply.status == 200, "initialize: \(reply.status) \(reply.body)")
    return try #require(reply.headers["mcp-session-id"], "initialize: \(reply.status) \(reply.body)")
  }

  func mcpHeaders(token: String, session: String? = nil) -> [(String, String)] {
    [("Accept", "application/json, text/event-stream"), ("Authorization", "Bearer \(token)")]
      + (session.map { [("MCP-Session-Id", $0)] } ?? [])
  }

  /// Calls the tool `name` in a new session of `token`'s user; the result's JSON.
  func mcpCall(_ name: String, _ arguments: [String: Any], token: String) async throws -> [String: Any] {
    let session = try await mcpSession(token: token)
    let call: [String: Any] = [
      "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["name": name, "arguments": arguments],
    ]
    let body = String(decoding: try JSONSerialization.data(withJSONObject: call), as: UTF8.self)
    let reply = await request("POST", "/mcp", body: body, headers: mcpHeaders(token: token, session: session))
    #expect(reply.status == 200, "\(name): \(reply.status) \(reply.body)")
    let json = try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
    let result = try #require(json?["result"] as? [String: Any], "\(name): \(reply.body)")
    #expect(result["isError"] as? Bool != true, "\(name): \(reply.body)")
    return result
  }

  /// The texts `memory_search` finds for `query` in `token`'s user's memory.
  func mcpSearch(_ query: String, token: String) async throws -> [String] {
    let result = try await mcpCall("memory_search", ["query": query, "k": 3], token: token)
    let hits = (result["structuredContent"] as? [String: Any])?["hits"] as? [[String: Any]] ?? []
    return hits.compactMap { $0["text"] as? String }
  }

  /// Stores `content` with `memory_remember` as `token`'s user.
  func mcpRemember(_ content: String, token: String) async throws {
    _ = try await mcpCall("memory_remember", ["content": content], token: token)
  }

  /// The texts the web app's `/api/search` finds for `query` as `token`'s user.
  func webSearch(_ query: String, token: String) async throws -> [String] {
    let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
    let reply = await request(
      "GET", "/api/search?q=\(encoded)&k=3", headers: [("Authorization", "Bearer \(token)")])
    #expect(reply.status == 200, "search: \(reply.status) \(reply.body)")
    let json = try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
    let hits = json?["hits"] as? [[String: Any]] ?? []
    return hits.compactMap { $0["text"] as? String }
  }
}
