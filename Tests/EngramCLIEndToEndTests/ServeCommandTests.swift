import EngramTestSupport
import Foundation
import Testing

/// A server the binary runs (`engram serve`, `engram mcp --http`), killed when the test is done.
struct RunningServer {
  let process: ChildProcess
  /// The first line of standard output (serve: the address to open).
  let printed: String
  let port: UInt16
  let standardErrorPath: String

  var standardError: String { ChildProcess.readText(standardErrorPath) }

  struct StartError: Error, CustomStringConvertible {
    var description: String
  }

  /// Starts `engram ARGUMENTS` and waits until it logs where it serves.
  static func start(_ arguments: [String], folder: ScratchFolder, environment: [String: String] = [:])
    async throws -> RunningServer
  {
    let name = UUID().uuidString
    let out = folder.path("\(name).out")
    let err = folder.path("\(name).err")
    var merged = ProcessInfo.processInfo.environment.merging(ScratchFolder.environment) { _, new in new }
    merged.removeValue(forKey: "ENGRAM_MCP_TOKEN")
    merged.merge(environment) { _, new in new }
    let process = try ChildProcess(
      try EngramBinary.locate().path, arguments: arguments, environment: merged, standardOutput: .file(out),
      standardError: .file(err))
    let started = await eventually(within: .seconds(120), every: .milliseconds(20)) {
      ChildProcess.readText(err).contains("serving ") || !process.isRunning
    }
    let log = ChildProcess.readText(err)
    guard started, process.isRunning,
      let range = log.range(of: #"http://[^ ]+:(\d+)/"#, options: .regularExpression)
    else {
      await process.kill()
      throw StartError(description: "the server did not start: \(log)")
    }
    let url = log[range].dropLast()
    let port = UInt16(url[url.index(after: url.lastIndex(of: ":")!)...])!
    let printed = ChildProcess.readText(out).split(separator: "\n").first.map(String.init) ?? ""
    return RunningServer(process: process, printed: printed, port: port, standardErrorPath: err)
  }

  /// Sends a request (`Host: 127.0.0.1:PORT` unless `headers` name one).
  func send(
    _ method: String, _ path: String, headers: [(String, String)] = [], body: String = ""
  ) async -> RawHTTP.Response {
    let host = headers.contains { $0.0.lowercased() == "host" } ? [] : [("Host", "127.0.0.1:\(port)")]
    return await RawHTTP.exchange(
      port: port, RawHTTP.request(method, path, headers: host + headers, body: body))
  }

  func stop() async { await process.kill() }
}

/// `engram serve`: the refusals before anything listens, and the server's own rules over
/// sockets (the app itself is covered by WebAPITests and, in a real browser, by
/// scripts/web-e2e.sh).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ServeCommandTests {
  static let initialize =
    #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#
    + #""capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#

  @Test func theServerBelongsToWhoeverHasTheSecretOfItsLaunch() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    let remembered = try await EngramBinary.run(
      ["remember", "--db", db, "my locker code is 4512"], environment: ScratchFolder.environment)
    #expect(remembered.status == 0, "\(remembered.standardError)")
    let server = try await RunningServer.start(
      ["serve", "--db", db, "--http", "127.0.0.1:0"], folder: folder)
    do {
      let printed = server.printed
      #expect(printed.hasPrefix("http://127.0.0.1:\(server.port)/?token="), "\(printed)")
      let secret = String(printed.split(separator: "=").last ?? "")
      #expect(secret.count == 64)

      // A foreign Host (DNS rebinding), or none, is refused before anything is served.
      for host in ["evil.example:\(server.port)", "evil.example", "127.0.0.1:1"] {
        let rebound = await server.send(
          "GET", "/api/memories", headers: [("Host", host), ("Authorization", "Bearer \(secret)")])
        #expect(rebound.status == 421, "\(host): \(rebound.status)")
        #expect(!rebound.body.contains("4512"))
      }
      let noHost = await RawHTTP.exchange(port: server.port, "GET /api/memories HTTP/1.0\r\n\r\n")
      #expect(noHost.status == 421)

      // No cookie, a wrong token: 401, for the API and for MCP.
      let bare = await server.send("GET", "/api/memories")
      #expect(bare.status == 401)
      #expect(!bare.body.contains("4512"))
      let wrong = await server.send(
        "GET", "/api/memories", headers: [("Authorization", "Bearer \(String(repeating: "0", count: 64))")])
      #expect(wrong.status == 401)
      let wrongCookie = await server.send(
        "GET", "/api/memories",
        headers: [("Cookie", "engram_auth_\(server.port)=\(String(repeating: "0", count: 64))")])
      #expect(wrongCookie.status == 401)
      let page = await server.send("GET", "/")
      #expect(page.status == 401)
      #expect(page.body.contains("engram serve"))
      let wrongLink = await server.send("GET", "/?token=\(String(repeating: "1", count: 64))")
      #expect(wrongLink.status == 401)
      #expect(wrongLink.header("Set-Cookie") == nil)
      let mcpHeaders = [
        ("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
      ]
      let mcpBare = await server.send("POST", "/mcp", headers: mcpHeaders, body: Self.initialize)
      #expect(mcpBare.status == 401)

      // The printed address: a cookie, and a redirect that drops the token.
      let entry = await server.send("GET", "/?token=\(secret)")
      #expect(entry.status == 303)
      #expect(entry.header("Location") == "/")
      let setCookie = try #require(entry.header("Set-Cookie"))
      #expect(setCookie.contains("HttpOnly"))
      #expect(setCookie.contains("SameSite=Strict"))
      let cookie = String(setCookie.split(separator: ";")[0])
      let app = await server.send("GET", "/", headers: [("Cookie", cookie)])
      #expect(app.status == 200)
      #expect(app.body.contains("<nav"))
      let memories = await server.send("GET", "/api/memories", headers: [("Cookie", cookie)])
      #expect(memories.status == 200)
      #expect(memories.body.contains("4512"))
      let bearer = await server.send("GET", "/api/memories", headers: [("Authorization", "Bearer \(secret)")])
      #expect(bearer.status == 200)
      let mcp = await server.send(
        "POST", "/mcp", headers: mcpHeaders + [("Authorization", "Bearer \(secret)")], body: Self.initialize)
      #expect(mcp.status == 200)

      // A cross-site form POST (the browser withholds the SameSite cookie; it is sent here
      // anyway) is refused by its Origin and forgets nothing.
      let forged = await server.send(
        "POST", "/api/forget",
        headers: [
          ("Origin", "http://evil.example"), ("Content-Type", "application/x-www-form-urlencoded"),
          ("Cookie", cookie),
        ], body: "id=1")
      #expect(forged.status == 403)
      let fromAnotherLocalPage = await server.send(
        "POST", "/api/forget",
        headers: [
          ("Origin", "http://localhost:3000"), ("Content-Type", "application/json"), ("Cookie", cookie),
        ],
        body: #"{"id":1}"#)
      #expect(fromAnotherLocalPage.status == 403)
      let still = await server.send("GET", "/api/memories", headers: [("Cookie", cookie)])
      #expect(still.body.contains("4512"))

      // A preflight from the server's own origin is answered; from another, refused.
      let origin = "http://127.0.0.1:\(server.port)"
      let preflight = await server.send(
        "OPTIONS", "/api/memories",
        headers: [("Origin", origin), ("Access-Control-Request-Method", "POST")])
      #expect(preflight.status == 204)
      #expect(preflight.header("Access-Control-Allow-Origin") == origin)
      let foreignPreflight = await server.send(
        "OPTIONS", "/api/memories",
        headers: [("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "POST")])
      #expect(foreignPreflight.status == 403)
    }
    await server.stop()
  }

  @Test func theWebAPIKeepsItsOwnLimitAndShape() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    let server = try await RunningServer.start(
      ["serve", "--db", db, "--http", "127.0.0.1:0", "--no-token"], folder: folder)
    #expect(server.standardError.contains("warning: --no-token"))
    #expect(server.printed == "http://127.0.0.1:\(server.port)/")
    // 100 MB announced: refused from the headers, in the API's shape and at the API's limit.
    let huge = await RawHTTP.exchange(
      port: server.port,
      "POST /api/chat/send HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Type: application/json\r\n"
        + "Content-Length: 100000000\r\n\r\n{")
    #expect(huge.status == 413)
    #expect(huge.body.contains(#""error""#))
    #expect(huge.body.contains("64 KiB"), "\(huge.body)")
    #expect(!huge.body.contains("jsonrpc"))
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    let nested = await server.send(
      "POST", "/api/chat/send", headers: [("Content-Type", "application/json")], body: "{\"text\":\(deep)}")
    // Over 64 KiB: refused by size first. Within it, the depth is named.
    #expect(nested.status == 413)
    let shallowDeep = String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)
    let deepWithin = await server.send(
      "POST", "/api/chat/send", headers: [("Content-Type", "application/json")],
      body: "{\"text\":\(shallowDeep)}")
    #expect(deepWithin.status == 400)
    #expect(deepWithin.body.contains("nested"), "\(deepWithin.body)")
    await server.stop()
  }

  @Test func aTokenFileKeepsTheSecretAcrossRestartsAndMustBePrivate() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    let file = folder.path("serve.token")
    let first = try await RunningServer.start(
      ["serve", "--db", db, "--http", "127.0.0.1:0", "--token-file", file], folder: folder)
    await first.stop()
    let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    let second = try await RunningServer.start(
      ["serve", "--db", db, "--http", "127.0.0.1:0", "--token-file", file], folder: folder)
    await second.stop()
    let secret = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(
      in: .whitespacesAndNewlines)
    #expect(first.printed.hasSuffix("?token=\(secret)"))
    #expect(second.printed.hasSuffix("?token=\(secret)"))

    chmod(file, 0o644)
    let open = try await EngramBinary.run(
      ["serve", "--db", db, "--http", "127.0.0.1:0", "--token-file", file],
      environment: ScratchFolder.environment)
    #expect(open.status == 1)
    #expect(open.standardError.contains("chmod 600"), "\(open.standardError)")
    let both = try await EngramBinary.run(
      ["serve", "--db", db, "--token-file", file, "--no-token"], environment: ScratchFolder.environment)
    #expect(both.status == 64)
  }

  @Test func aUsersFileOthersCanChangeIsRefused() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    let users = folder.path("users")
    let added = try await EngramBinary.run(
      ["users", "add", "ann", "--users", users], environment: ScratchFolder.environment)
    #expect(added.status == 0, "\(added.standardError)")
    chmod(users, 0o666)
    for command in ["serve", "mcp"] {
      // A server that starts anyway is killed after a minute (and the test fails).
      let err = folder.path("\(command).err")
      let process = try ChildProcess(
        try EngramBinary.locate().path,
        arguments: [command, "--db", db, "--users", users, "--http", "127.0.0.1:0"],
        environment: ProcessInfo.processInfo.environment.merging(ScratchFolder.environment) { _, new in new },
        standardError: .file(err))
      let ended = await process.exit(within: .seconds(60))
      #expect(ended?.status == 1, "\(command): \(ChildProcess.readText(err))")
      #expect(
        ChildProcess.readText(err).contains("other users can change the users file"),
        "\(ChildProcess.readText(err))")
    }
  }

  @Test func badOptionsAreUsageErrors() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    let cases: [([String], String)] = [
      (["--http", "nonsense"], "--http"), (["--llm-model", "m"], "--llm"),
      (["--llm", "http://192.0.2.1:11434", "--llm-model", "m"], "plain http"),
    ]
    for (arguments, named) in cases {
      let result = try await EngramBinary.run(
        ["serve", "--db", db] + arguments, environment: ScratchFolder.environment)
      #expect(result.status == 64, "\(arguments): \(result.standardError)")
      #expect(result.standardError.contains(named), "\(arguments): \(result.standardError)")
    }
  }

  @Test func aNonLoopbackAddressNeedsAnAllowedHostAndASecret() async throws {
    let folder = try ScratchFolder()
    let db = try await folder.initializedDatabase()
    let noHost = try await EngramBinary.run(
      ["serve", "--db", db, "--http", "0.0.0.0:0"], environment: ScratchFolder.environment)
    #expect(noHost.status == 64)
    #expect(noHost.standardError.contains("--allow-host"))
    let open = try await EngramBinary.run(
      ["serve", "--db", db, "--http", "0.0.0.0:0", "--allow-host", "box.lan", "--no-token"],
      environment: ScratchFolder.environment)
    #expect(open.status == 1)
    #expect(open.standardError.contains("needs a bearer token"))
    let server = try await RunningServer.start(
      ["serve", "--db", db, "--http", "0.0.0.0:0", "--allow-host", "box.lan"], folder: folder)
    #expect(server.printed.hasPrefix("http://box.lan:\(server.port)/?token="), "\(server.printed)")
    let named = await server.send("GET", "/", headers: [("Host", "box.lan:\(server.port)")])
    #expect(named.status == 401)
    let other = await server.send("GET", "/", headers: [("Host", "other.lan:\(server.port)")])
    #expect(other.status == 421)
    await server.stop()
  }
}
