import Engram
import EngramPostgres
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// `engram-bench serve`: many users in one `engram mcp --http --users FILE` process against
/// today's single-user server, under the same clients and mix.
///
/// Builds N users with M turns each (hashing embedder by default; `--model minilm`), then
/// runs C long-lived clients (keep-alive connections), each sending for S seconds a mix of
/// 80% `memory_search` and 20% `memory_remember` as a random user (its token), against the
/// server in a separate process. Reports operations/s, latency percentiles, the server's
/// peak RSS against `--cache-mb`, errors and 503s, hits of another user (every stored text
/// names its owner) and acknowledged writes not found afterwards. The baseline, in the same
/// run, is `engram mcp --http --user ID` over one user's memory of the same size, all
/// clients on that user.
enum ServeSuite {
  static let vocabulary = [
    "garden", "tomato", "bees", "climbing", "saturday", "dentist", "lisbon", "tram", "river", "evening",
    "coffee", "station", "taxi", "walking", "kilometre", "job", "may", "gym", "membership", "book",
    "weekend", "piano", "lesson", "sister", "brother", "birthday", "cake", "train", "ticket", "holiday",
    "beach", "mountain", "ski", "snow", "rain", "umbrella", "cat", "dog", "vet", "doctor", "allergy",
    "pollen", "recipe", "soup", "bread", "oven", "bicycle", "repair", "tyre", "office", "meeting",
    "project", "deadline", "report", "budget", "invoice", "bank", "loan", "house", "roof", "window",
    "paint", "blue", "green", "red", "concert", "jazz", "guitar", "festival", "museum", "painting",
    "photo", "camera", "phone", "laptop", "password", "email", "friend", "neighbour", "party", "wine",
    "cheese", "market", "fish", "chicken", "rice", "noodles", "tea", "milk", "sugar", "running",
    "marathon", "knee", "physio", "swimming", "pool", "yoga", "sleep", "dream", "novel", "poem",
  ]

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let userCount = try arguments.int("users", default: 1_000)
    let turns = try arguments.int("turns", default: 200)
    let clients = try arguments.int("clients", default: 64)
    let seconds = try arguments.int("seconds", default: 60)
    let cacheMB = try arguments.int("cache-mb", default: 256)
    let connections = try arguments.int("connections", default: 16)
    let dbURL = arguments.optionalString("db-url")
    let model = arguments.string("model", default: "hashing:384")
    let keep = arguments.optionalString("dir")
    let warmUp = arguments.string("warm-up", default: "engines")
    let reuse = arguments.flag("reuse")
    try arguments.finish()
    guard !reuse || keep != nil else {
      throw BenchError("--reuse serves the memories an earlier run stored with the same --dir: give --dir")
    }
    guard warmUp == "engines" || warmUp == "sessions" else {
      throw BenchError("--warm-up is engines (every user searched once before the clock starts) or sessions")
    }
    let warmEngines = warmUp == "engines"
    guard userCount >= 1, turns >= 1, clients >= 1, seconds >= 1 else {
      throw BenchError("--users, --turns, --clients and --seconds must be at least 1")
    }
    let binary = try ScaleSuite.engramBinary()
    let folder = URL(
      fileURLWithPath: keep
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("engram-serve-\(getpid())").path)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { if keep == nil { try? FileManager.default.removeItem(at: folder) } }
    let users = (0..<userCount).map { String(format: "user%05d", $0) }
    var file = UsersFile()
    var tokens: [String] = []
    for user in users {
      let token = UsersFile.newToken()
      try file.add(user, token: token)
      tokens.append(token)
    }
    let usersPath = folder.appendingPathComponent("users").path
    try file.save(path: usersPath)
    let dbDir = folder.appendingPathComponent("users.d").path

    // 1. The users' memories.
    let spec: EmbedderSpec
    switch EmbedderSpec.parseOption(model) {
    case .success(let parsed): spec = parsed
    case .failure(let error): throw BenchError(error.description)
    }
    let embedder = try spec.makeEmbedder(environment: ProcessInfo.processInfo.environment)
    let populate = try await Measure.seconds {
      // An earlier run with the same --dir (and --db-url) stored them: new tokens only.
      if reuse { return }
      try await populateMemories(
        users: users, turns: turns, dbURL: dbURL, dbDir: dbDir, folder: folder, embedder: embedder,
        spec: spec.text)
    }
    progress(
      "serve: \(userCount) users x \(turns) turns \(reuse ? "reused" : "stored") in \(String(format: "%.0f", populate)) s"
    )

    // 2. Baseline: today's single-user server on user 0's memory, every client as that user.
    let first = users[0]
    let baselineLocation = dbURL ?? dbDir + "/\(first).sqlite"
    let baselineServer = try ServerProcess(
      binary: binary,
      arguments: ["mcp", "--db", baselineLocation, "--user", first, "--http", "127.0.0.1:0"],
      log: folder.appendingPathComponent("baseline.log").path)
    let baseline = try await drive(
      port: baselineServer.port, users: [first], tokens: [nil], clients: clients, seconds: seconds,
      warmEngines: warmEngines)
    let baselineRSS = baselineServer.peakResidentBytes()
    baselineServer.stop()

    // 3. Many users in one process.
    var serverArguments = [
      "mcp", "--http", "127.0.0.1:0", "--users", usersPath, "--cache-mb", String(cacheMB), "--model",
      spec.text,
    ]
    if let dbURL {
      serverArguments += ["--db", dbURL, "--connections", String(connections)]
    } else {
      serverArguments += ["--db-dir", dbDir]
    }
    let server = try ServerProcess(
      binary: binary, arguments: serverArguments, log: folder.appendingPathComponent("server.log").path)
    let many = try await drive(
      port: server.port, users: users, tokens: tokens.map { Optional($0) }, clients: clients,
      seconds: seconds,
      warmEngines: warmEngines)
    let lost = try await verify(
      port: server.port, writes: many.writes, tokens: Dictionary(uniqueKeysWithValues: zip(users, tokens)),
      clients: min(clients, 8))
    let rss = server.peakResidentBytes()
    server.stop()

    var report = BenchReport()
    report.set(
      "store",
      dbURL == nil ? "sqlite (a file per user, --db-dir)" : "postgresql (--connections \(connections))")
    report.set("users", userCount)
    report.set("turns", turns)
    report.set("clients", clients)
    report.set("seconds", seconds)
    report.set("model", spec.text)
    report.set("cache_mb", cacheMB)
    report.set("warm_up", warmUp)
    many.fill(&report)
    report.set("peak_rss_mb", Double(rss ?? 0) / 1_048_576)
    report.set("cross_user_hits", many.crossUserHits)
    report.set("lost_writes", lost)
    report.set("acknowledged_writes", many.writes.count)
    var base = BenchReport()
    baseline.fill(&base)
    base.set("peak_rss_mb", Double(baselineRSS ?? 0) / 1_048_576)
    report.set("baseline", base)
    report.set("ops_ratio", baseline.opsPerSecond > 0 ? many.opsPerSecond / baseline.opsPerSecond : 0)
    report.set("populate_s", populate)
    return (
      report,
      "serve: \(userCount) users, \(turns) turns each, \(clients) clients for \(seconds) s, 80/20 search/remember, "
        + (dbURL == nil ? "SQLite" : "PostgreSQL")
    )
  }

  /// The owner marker every stored text of `user` carries.
  static func marker(_ user: String) -> String { "owner" + user }

  static func randomWords(_ count: Int, using generator: inout some RandomNumberGenerator) -> String {
    (0..<count).map { _ in vocabulary.randomElement(using: &generator)! }.joined(separator: " ")
  }

  /// Stores `turns` turns for each user (one session, one JSONL ingest each).
  static func populateMemories(
    users: [String], turns: Int, dbURL: String?, dbDir: String, folder: URL, embedder: any Embedder,
    spec: String
  ) async throws {
    try FileManager.default.createDirectory(atPath: dbDir, withIntermediateDirectories: true)
    let pool = try dbURL.map { try PostgresConnectionPool(uri: $0, size: 4) }
    defer { pool?.close() }
    let next = Counter()
    let started = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
      for worker in 0..<2 {
        group.addTask {
          var generator = SplitMix64(seed: UInt64(worker) &+ 7)
          let input = folder.appendingPathComponent("turns-\(worker).jsonl").path
          while true {
            let index = next.take()
            guard index < users.count else { return }
            let user = users[index]
            var text = ""
            let start = 1_700_000_000.0
            let formatter = ISO8601DateFormatter()
            for turn in 0..<turns {
              let date = formatter.string(from: Date(timeIntervalSince1970: start + Double(turn) * 600))
              let content = "\(marker(user)) \(randomWords(8 + turn % 7, using: &generator))"
              text +=
                #"{"role":"\#(turn % 2 == 0 ? "user" : "assistant")","session":"s1","timestamp":"\#(date)","content":"\#(content)"}"#
                + "\n"
            }
            try text.write(toFile: input, atomically: false, encoding: .utf8)
            var configuration = EngramConfiguration(embedder: embedder)
            configuration.user = user
            configuration.readerCount = 1
            let engine: MemoryEngine
            if let pool, let dbURL {
              configuration.connectionPool = pool
              engine = try MemoryEngine(path: dbURL, configuration: configuration)
            } else {
              engine = try MemoryEngine(path: dbDir + "/\(user).sqlite", configuration: configuration)
            }
            _ = try await engine.conversation.ingest(path: input)
            try await engine.maintenance.setEmbedderSpec(spec)
            await engine.close()
            if index % 100 == 99 {
              progress(
                "serve: stored \(index + 1) of \(users.count) users (\(String(format: "%.0f", (ContinuousClock.now - started).seconds)) s)"
              )
            }
          }
        }
      }
      try await group.waitForAll()
    }
  }

  /// What one run of the clients measured.
  struct Outcome: Sendable {
    var operations = 0
    var elapsed = 0.0
    var latencies: [Double] = []
    var errors = 0
    var rejected = 0
    var crossUserHits = 0
    var writes: [(user: String, content: String)] = []

    var opsPerSecond: Double { elapsed > 0 ? Double(operations) / elapsed : 0 }

    func fill(_ report: inout BenchReport) {
      report.set("ops_per_s", opsPerSecond)
      report.set("operations", operations)
      report.set("p50_ms", Measure.percentile(latencies, 0.5))
      report.set("p95_ms", Measure.percentile(latencies, 0.95))
      report.set("p99_ms", Measure.percentile(latencies, 0.99))
      report.set("errors", errors)
      report.set("rejected_503", rejected)
    }

    mutating func merge(_ other: Outcome) {
      operations += other.operations
      latencies += other.latencies
      errors += other.errors
      rejected += other.rejected
      crossUserHits += other.crossUserHits
      writes += other.writes
    }
  }

  /// Runs `clients` clients for `seconds` against the server at `port`.
  static func drive(
    port: UInt16, users: [String], tokens: [String?], clients: Int, seconds: Int, warmEngines: Bool
  ) async throws -> Outcome {
    let sessions = SessionTable()
    // Warm-up, not measured: every user opens a session once and (`warmEngines`) searches
    // once, so their engine is open, as on a server that has been running; the cache keeps
    // what fits in --cache-mb. Without it the clock also counts every user's first open.
    let next = Counter()
    let warmStart = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<min(clients, 8) {
        group.addTask {
          await onThread {
            var connection = HTTPClient(port: port)
            while true {
              let index = next.take()
              guard index < users.count else { break }
              for _ in 0..<5 {
                guard
                  let id = session(
                    for: users[index], token: tokens[index], sessions: sessions, connection: &connection)
                else { continue }
                guard warmEngines else { break }
                let body = call(id: 1, "memory_search", #"{"query":"warm","k":1}"#)
                if connection.post(body, token: tokens[index], session: id)?.status == 200 { break }
                connection.close()
                connection = HTTPClient(port: port)
              }
            }
            connection.close()
          }
        }
      }
    }
    progress(
      "serve: warm-up of \(users.count) users' sessions in \(String(format: "%.1f", (ContinuousClock.now - warmStart).seconds)) s"
    )
    let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
    let start = ContinuousClock.now
    var total = Outcome()
    let outcomes = await withTaskGroup(of: Outcome.self) { group in
      for client in 0..<clients {
        group.addTask {
          await onThread {
            runClient(
              seed: UInt64(client) &* 7919 &+ 1, port: port, users: users, tokens: tokens, sessions: sessions,
              deadline: deadline)
          }
        }
      }
      return await group.reduce(into: [Outcome]()) { $0.append($1) }
    }
    for outcome in outcomes { total.merge(outcome) }
    total.elapsed = (ContinuousClock.now - start).seconds
    return total
  }

  static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
      let thread = Thread { continuation.resume(returning: body()) }
      thread.stackSize = 1 << 20
      thread.start()
    }
  }

  /// One client: a keep-alive connection, random users, 80% searches and 20% writes.
  static func runClient(
    seed: UInt64, port: UInt16, users: [String], tokens: [String?], sessions: SessionTable,
    deadline: ContinuousClock.Instant
  ) -> Outcome {
    var generator = SplitMix64(seed: seed)
    var outcome = Outcome()
    var connection = HTTPClient(port: port)
    var sequence = 0
    while ContinuousClock.now < deadline {
      let index = Int.random(in: 0..<users.count, using: &generator)
      let user = users[index]
      let token = tokens[index]
      guard let session = session(for: user, token: token, sessions: sessions, connection: &connection) else {
        outcome.errors += 1
        continue
      }
      sequence += 1
      let isWrite = Int.random(in: 0..<100, using: &generator) < 20
      let body: String
      var content = ""
      if isWrite {
        content = "\(marker(user)) memo\(seed)x\(sequence) \(randomWords(6, using: &generator))"
        body = call(id: sequence, "memory_remember", #"{"content":"\#(content)"}"#)
      } else {
        body = call(
          id: sequence, "memory_search", #"{"query":"\#(randomWords(2, using: &generator))","k":5}"#)
      }
      let started = ContinuousClock.now
      let reply = connection.post(body, token: token, session: session)
      let latency = (ContinuousClock.now - started).seconds * 1000
      switch reply?.status {
      case 200?:
        guard let json = try? JSONValue(parsing: reply!.body), json["result"]?["isError"] == false else {
          outcome.errors += 1
          continue
        }
        outcome.operations += 1
        outcome.latencies.append(latency)
        if isWrite {
          outcome.writes.append((user, content))
        } else {
          for hit in json["result"]?["structuredContent"]?["hits"]?.arrayValue ?? [] {
            let text = hit["text"]?.stringValue ?? ""
            if !text.contains(marker(user) + " ") && !text.hasSuffix(marker(user)) {
              outcome.crossUserHits += 1
            }
          }
        }
      case 404?:
        _ = sessions.table.withLock { $0.removeValue(forKey: user) }
      case 503?:
        outcome.rejected += 1
        usleep(20_000)
      default:
        outcome.errors += 1
        connection.close()
        connection = HTTPClient(port: port)
      }
    }
    connection.close()
    return outcome
  }

  static func call(id: Int, _ name: String, _ arguments: String) -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"\#(name)","arguments":\#(arguments)}}"#
  }

  /// The user's session, opened on first use and shared by the clients.
  static func session(
    for user: String, token: String?, sessions: SessionTable, connection: inout HTTPClient
  ) -> String? {
    if let known = sessions.table.withLock({ $0[user] }) { return known }
    let initialize =
      #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#
    guard let reply = connection.post(initialize, token: token, session: nil), reply.status == 200,
      let id = reply.headers["mcp-session-id"]
    else {
      connection.close()
      connection = HTTPClient(port: connection.port)
      return nil
    }
    sessions.table.withLock { $0[user] = id }
    return id
  }

  /// Acknowledged writes not found by a keyword search for their unique word afterwards.
  static func verify(
    port: UInt16, writes: [(user: String, content: String)], tokens: [String: String], clients: Int
  ) async throws -> Int {
    let sessions = SessionTable()
    let next = Counter()
    let lost = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<clients {
        group.addTask {
          await onThread {
            var connection = HTTPClient(port: port)
            var lost = 0
            while true {
              let index = next.take()
              guard index < writes.count else {
                connection.close()
                return lost
              }
              let (user, content) = writes[index]
              let unique = content.split(separator: " ")[1]
              var found = false
              for _ in 0..<20 {
                guard
                  let session = session(
                    for: user, token: tokens[user], sessions: sessions, connection: &connection)
                else { continue }
                let body = call(id: index, "memory_search", #"{"query":"\#(unique)","k":3,"mode":"keyword"}"#)
                guard let reply = connection.post(body, token: tokens[user], session: session) else {
                  connection = HTTPClient(port: port)
                  continue
                }
                if reply.status == 503 || reply.status == 404 {
                  if reply.status == 404 { _ = sessions.table.withLock { $0.removeValue(forKey: user) } }
                  usleep(50_000)
                  continue
                }
                let hits = (try? JSONValue(parsing: reply.body))?["result"]?["structuredContent"]?["hits"]?
                  .arrayValue
                found = hits?.contains { $0["text"]?.stringValue == content } ?? false
                break
              }
              if !found { lost += 1 }
            }
          }
        }
      }
      return await group.reduce(0, +)
    }
    return lost
  }
}

/// A minimal HTTP/1.1 client on one keep-alive connection (blocking; one thread).
struct HTTPClient {
  let port: UInt16
  private var descriptor: Int32 = -1

  struct Reply {
    var status: Int
    var headers: [String: String]
    var body: Data
  }

  init(port: UInt16) {
    self.port = port
  }

  private mutating func connectIfNeeded() -> Bool {
    if descriptor >= 0 { return true }
    let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socketDescriptor >= 0 else { return false }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      Glibc.close(socketDescriptor)
      return false
    }
    var one: Int32 = 1
    setsockopt(socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    var timeout = timeval(tv_sec: 60, tv_usec: 0)
    setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    descriptor = socketDescriptor
    return true
  }

  /// Closes the connection (the server serves 64 at once: a finished client lets go of its own).
  mutating func close() { drop() }

  private mutating func drop() {
    if descriptor >= 0 { Glibc.close(descriptor) }
    descriptor = -1
  }

  /// POSTs `body` to /mcp; nil when the connection failed.
  mutating func post(_ body: String, token: String?, session: String?) -> Reply? {
    guard connectIfNeeded() else { return nil }
    var head =
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      + "Accept: application/json, text/event-stream\r\nContent-Length: \(body.utf8.count)\r\n"
    if let token { head += "Authorization: Bearer \(token)\r\n" }
    if let session { head += "MCP-Session-Id: \(session)\r\n" }
    let request = Array((head + "\r\n" + body).utf8)
    var sent = 0
    while sent < request.count {
      let count = request[sent...].withUnsafeBytes {
        send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if count <= 0 {
        drop()
        return nil
      }
      sent += count
    }
    var buffer = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 65_536)
    var headerEnd: Int?
    var contentLength = 0
    var status = 0
    var headers: [String: String] = [:]
    while true {
      if headerEnd == nil, let end = find(buffer) {
        headerEnd = end
        let lines = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        for line in lines.dropFirst() {
          guard let colon = line.firstIndex(of: ":") else { continue }
          headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
            in: .whitespaces)
        }
        contentLength = Int(headers["content-length"] ?? "0") ?? 0
      }
      if let headerEnd, buffer.count >= headerEnd + 4 + contentLength {
        let body = Data(buffer[(headerEnd + 4)..<(headerEnd + 4 + contentLength)])
        if headers["connection"]?.lowercased() == "close" { drop() }
        return Reply(status: status, headers: headers, body: body)
      }
      let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
      if count <= 0 {
        drop()
        return nil
      }
      buffer += chunk[0..<count]
    }
  }

  private func find(_ buffer: [UInt8]) -> Int? {
    guard buffer.count >= 4 else { return nil }
    for index in 0...(buffer.count - 4)
    where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10
    {
      return index
    }
    return nil
  }
}

/// An `engram` server started for the benchmark: its port (read from its log) and its
/// peak RSS; stopped with SIGTERM.
final class ServerProcess {
  let pid: pid_t
  let port: UInt16

  init(binary: String, arguments: [String], log: String) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var environment = ProcessInfo.processInfo.environment
    environment["ENGRAM_MCP_TOKEN"] = nil
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in envp { free(pointer) } }
    var pid: pid_t = 0
    let code = posix_spawn(&pid, binary, &actions, nil, argv, envp)
    guard code == 0 else { throw BenchError("cannot start \(binary): \(String(cString: strerror(code)))") }
    self.pid = pid
    var found: UInt16?
    for _ in 0..<600 {
      let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
      if let range = text.range(of: "http://127.0.0.1:") {
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        found = UInt16(digits)
        break
      }
      var status: Int32 = 0
      if waitpid(pid, &status, WNOHANG) == pid {
        throw BenchError("the server exited: \(text)")
      }
      usleep(100_000)
    }
    guard let found else {
      kill(pid, SIGKILL)
      throw BenchError("the server did not start within 60 s (see \(log))")
    }
    port = found
  }

  /// The server's peak resident set size (`VmHWM`).
  func peakResidentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
      return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
    }
    return nil
  }

  func stop() {
    kill(pid, SIGTERM)
    var status: Int32 = 0
    for _ in 0..<600 {
      if waitpid(pid, &status, WNOHANG) == pid { return }
      usleep(100_000)
    }
    kill(pid, SIGKILL)
    waitpid(pid, &status, 0)
  }
}

/// The MCP session of each user, shared by the clients.
final class SessionTable: Sendable {
  let table = Mutex<[String: String]>([:])
}

/// A shared counter handing out indexes.
final class Counter: Sendable {
  private let value = Atomic<Int>(0)

  /// The next index.
  func take() -> Int { value.wrappingAdd(1, ordering: .relaxed).oldValue }
}
