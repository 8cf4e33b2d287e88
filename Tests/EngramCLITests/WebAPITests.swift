import Engram
import EngramAgent
import EngramEmbeddings
import EngramHTTP
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramCLI

/// `engram serve`'s handler called directly (no sockets): files, the JSON API, the chat's
/// event stream, the access rules, and clear 4xx answers for bad requests.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct WebAPITests {
  let scratch: ScratchFolder
  let engine: MemoryEngine
  let app: WebApp

  init() throws {
    scratch = try ScratchFolder()
    engine = try MemoryEngine(
      path: scratch.path("m.sqlite"),
      configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    app = Self.app(engine)
  }

  static func app(_ engine: MemoryEngine, token: String? = nil) -> WebApp {
    WebApp(
      configuration: HTTPTransportConfiguration(host: "127.0.0.1", port: 0, bearerToken: token),
      context: .single(WebScope(engine: engine)), log: { _ in })
  }

  static func get(_ path: String, headers: [(name: String, value: String)] = []) -> HTTPRequest {
    let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
    return HTTPRequest(
      method: "GET", path: parts[0], query: parts.count > 1 ? parts[1] : "", headers: headers)
  }

  static func post(_ path: String, _ body: String = "{}", headers: [(name: String, value: String)] = [])
    -> HTTPRequest
  {
    HTTPRequest(
      method: "POST", path: path, headers: [("Content-Type", "application/json")] + headers,
      body: Data(body.utf8))
  }

  /// The response's JSON body.
  static func json(_ response: HTTPResponse) throws -> JSONValue {
    try JSONValue(parsing: response.bodyBytes)
  }

  /// The events of a streamed response, as (name, JSON data) in order.
  static func events(_ response: HTTPResponse) async throws -> [(String, JSONValue)] {
    guard case .stream(let produce) = response.body else { return [] }
    let buffer = Mutex(Data())
    await produce(
      HTTPStreamWriter { data in
        buffer.withLock { $0.append(data) }
        return true
      })
    let text = String(decoding: buffer.withLock { $0 }, as: UTF8.self)
    return try text.components(separatedBy: "\n\n").filter { !$0.isEmpty }.map { block in
      let lines = block.split(separator: "\n")
      let name = lines.first { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) } ?? ""
      let data = lines.filter { $0.hasPrefix("data: ") }.map { $0.dropFirst(6) }.joined(separator: "\n")
      return (name, try JSONValue(parsing: Data(data.utf8)))
    }
  }

  // MARK: Files

  @Test func filesCarryTheirTypeAValidatorAndAStrictPolicy() async throws {
    let page = await app.respond(to: Self.get("/"))
    #expect(page.status == 200)
    #expect(page.header("Content-Type") == "text/html; charset=utf-8")
    #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
    #expect(page.header("Content-Security-Policy")?.contains("unsafe-inline") == false)
    #expect(
      String(decoding: page.bodyBytes, as: UTF8.self).contains("<script type=\"module\" src=\"app.js\">"))
    let etag = try #require(page.header("ETag"))
    let again = await app.respond(to: Self.get("/", headers: [("If-None-Match", etag)]))
    #expect(again.status == 304)
    #expect(again.bodyBytes.isEmpty)
    #expect(
      await app.respond(to: Self.get("/app.js")).header("Content-Type") == "text/javascript; charset=utf-8")
    let missing = await app.respond(to: Self.get("/nothing.js"))
    #expect(missing.status == 404)
    #expect(try Self.json(missing)["error"]?.stringValue != nil)
    #expect(await app.respond(to: Self.get("/../Package.swift")).status == 404)
    let posted = await app.respond(to: Self.post("/"))
    #expect(posted.status == 405)
    #expect(posted.header("Allow") == "GET")
  }

  /// The generated Swift file holds exactly the files of the asset folder (`make web` was run).
  @Test func generatedAssetsMatchTheAssetFolder() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../Sources/EngramCLI/Web/assets").standardized
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }
    #expect(Set(names) == Set(WebAssets.generated.keys), "run `make web`")
    for name in names {
      let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
      #expect(WebAssets.generated[name]?.body == bytes, "\(name) changed: run `make web`")
    }
  }

  // MARK: Chat

  @Test func chatAsksBeforeRememberingThenAnswersFromMemory() async throws {
    let first = await app.respond(
      to: Self.post("/api/chat/send", #"{"text":"remember that my locker code is 4512"}"#))
    #expect(first.status == 200)
    #expect(first.header("Content-Type") == "text/event-stream")
    let cookie = try #require(first.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
    #expect(cookie.hasPrefix("engram_chat="))
    let asked = try await Self.events(first)
    #expect(asked.map(\.0).last == "done")
    #expect(asked.dropLast().allSatisfy { $0.0 == "state" })
    let waiting = try #require(asked.last?.1)
    #expect(waiting["phase"] == "waiting")
    #expect(waiting["pending"]?["text"]?.stringValue?.contains("4512") == true)

    let state = await app.respond(to: Self.get("/api/chat", headers: [("Cookie", cookie)]))
    #expect(try Self.json(state)["phase"] == "waiting")

    let confirmed = try await Self.events(
      await app.respond(to: Self.post("/api/chat/confirm", headers: [("Cookie", cookie)])))
    #expect(confirmed.last?.1["phase"] == "finished")
    #expect(try await engine.memories.list().map(\.content) == ["my locker code is 4512"])

    let answered = try await Self.events(
      await app.respond(
        to: Self.post("/api/chat/send", #"{"text":"what is my locker code"}"#, headers: [("Cookie", cookie)]))
    )
    #expect(answered.last?.1["reply"]?.stringValue?.contains("4512") == true)

    // Another browser session has its own conversation: nothing waits there.
    let other = await app.respond(to: Self.post("/api/chat/confirm"))
    #expect(other.status == 409)
  }

  /// With a language-model planner (`--llm`), the reply streams in: `partial` events, each a
  /// longer prefix of the reply, come before `done`.
  @Test func aPlannersReplyStreamsInAsPartialEvents() async throws {
    let answer = "Zebras have black and white stripes; each pattern is unique."
    let reply = String(decoding: try JSONSerialization.data(withJSONObject: ["final": answer]), as: UTF8.self)
    var deltas: [String] = []
    var rest = Substring(reply)
    while !rest.isEmpty {
      deltas.append(String(rest.prefix(4)))
      rest = rest.dropFirst(4)
    }
    let body = ChatCompletionStream.body(deltas)
    let server = try LoopbackHTTPServer { _ in
      .streamed(
        parts: ChatCompletionStream.pieces(body, size: 31), pauseSeconds: 0.005)
    }
    defer { server.stop() }
    let model = LanguageModelConfiguration(baseURL: server.baseURL, model: "m")
    let scope = WebScope(engine: engine, planner: ServeCommand.planner(model, environment: [:]))
    let app = WebApp(
      configuration: HTTPTransportConfiguration(host: "127.0.0.1", port: 0), context: .single(scope),
      log: { _ in })
    let events = try await Self.events(
      await app.respond(to: Self.post("/api/chat/send", #"{"text":"zebra quantum marmalade"}"#)))
    #expect(events.last?.0 == "done")
    #expect(events.last?.1["reply"]?.stringValue == answer)
    let partials = events.filter { $0.0 == "partial" }.compactMap { $0.1["text"]?.stringValue }
    #expect(!partials.isEmpty, "\(events.map(\.0))")
    #expect(partials.allSatisfy { answer.hasPrefix($0) })
  }

  @Test func cancelDeclinesTheWaitingAction() async throws {
    let first = await app.respond(
      to: Self.post("/api/chat/send", #"{"text":"remember that I like green tea"}"#))
    let cookie = try #require(first.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
    _ = try await Self.events(first)
    let cancelled = await app.respond(to: Self.post("/api/chat/cancel", headers: [("Cookie", cookie)]))
    #expect(cancelled.status == 200)
    #expect(try Self.json(cancelled)["phase"] == "finished")
    #expect(try await engine.memories.list().isEmpty)
    #expect(await app.respond(to: Self.post("/api/chat/cancel", headers: [("Cookie", cookie)])).status == 409)
  }

  // MARK: Memory

  @Test func searchEditForgetAndSession() async throws {
    let session = try await engine.conversation.startSession(name: "trip")
    let turn = try await engine.conversation.appendTurn(
      role: "user", content: "we booked the ferry to Hydra", session: session)
    let id = try await engine.memories.remember("the ferry leaves at 7", kind: .fact)
    let found = try Self.json(await app.respond(to: Self.get("/api/search?q=ferry&k=5")))
    let hits = try #require(found["hits"]?.arrayValue)
    #expect(hits.count == 2)
    let memory = try #require(hits.first { $0["kind"] == "memory" })
    #expect(memory["bm25"]?.doubleValue != nil)
    #expect(memory["cosine"]?.doubleValue != nil)
    #expect(memory["provenance"]?.arrayValue?.contains("keyword") == true)
    let onlyTurns = try Self.json(await app.respond(to: Self.get("/api/search?q=ferry&kinds=message")))
    #expect(onlyTurns["hits"]?.arrayValue?.map { $0["id"] } == [.int(Int(turn))])

    let edited = await app.respond(
      to: Self.post("/api/memories/\(id)", #"{"text":"the ferry leaves at 8","kind":"event"}"#))
    #expect(edited.status == 200)
    let newID = try #require(try Self.json(edited)["memory"]?["id"]?.intValue)
    #expect(try Self.json(edited)["superseded"] == .int(Int(id)))
    #expect(try await engine.memories.get(Int64(newID))?.kind == .event)
    #expect(try await engine.memories.get(Int64(newID))?.content == "the ferry leaves at 8")

    let preview = try Self.json(
      await app.respond(to: Self.post("/api/forget", #"{"id":\#(newID),"dry_run":true}"#)))
    #expect(preview["dry_run"] == true)
    #expect(try await engine.memories.get(Int64(newID)) != nil)
    let forgotten = await app.respond(to: Self.post("/api/forget", #"{"id":\#(newID)}"#))
    #expect(forgotten.status == 200)
    #expect(try await engine.memories.get(Int64(newID)) == nil)

    let turns = try Self.json(await app.respond(to: Self.get("/api/sessions/\(session)")))
    #expect(turns["turns"]?.arrayValue?.map { $0["text"] } == ["we booked the ferry to Hydra"])
    let recent = try Self.json(await app.respond(to: Self.get("/api/memories?kind=fact")))
    #expect(recent["memories"]?.arrayValue?.contains { $0["id"] == .int(newID) } == false)
  }

  // MARK: Agenda, insight, route

  @Test func agendaListsMovesAndCancels() async throws {
    let due = Date().addingTimeInterval(3600)
    let id = try await engine.agentRecords.addItem(kind: .reminder, title: "water the plants", due: due)
    let listed = try Self.json(await app.respond(to: Self.get("/api/agenda")))
    #expect(listed["items"]?.arrayValue?.map { $0["title"] } == ["water the plants"])
    let later = DateParser.iso8601(due.addingTimeInterval(86_400), timeZone: .gmt)
    let moved = await app.respond(to: Self.post("/api/agenda/\(id)/move", #"{"due":"\#(later)"}"#))
    #expect(moved.status == 200)
    let stored = try #require(try await engine.agentRecords.item(id)?.dueAt)
    #expect(abs(stored.timeIntervalSince(due) - 86_400) < 1)
    #expect(await app.respond(to: Self.post("/api/agenda/\(id)/cancel")).status == 200)
    #expect(try await engine.agentRecords.item(id) == nil)
  }

  @Test func agendaShowsAReminderConditionAndWhetherItFired() async throws {
    let condition = StepCondition(
      kind: .weather, about: "rain", when: Date().addingTimeInterval(86_400), place: "Lisbon",
      text: "it rains tomorrow")
    let due = Date().addingTimeInterval(-60)
    let id = try await engine.agentRecords.addItem(
      kind: .reminder, title: "take an umbrella", due: due, condition: condition.storedText)
    let before = try Self.json(await app.respond(to: Self.get("/api/agenda")))
    let item = try #require(before["items"]?.arrayValue?.first)
    #expect(item["condition"] == "it rains tomorrow")
    #expect(item["condition_note"] == "only if it rains tomorrow")
    #expect(item["condition_outcome"] == .null)
    // Checked when it came due: it did not hold, so it was delivered without firing.
    let checker = Checker(
      outcome: AgentItemConditionOutcome(.failed, reason: "the forecast does not say rain"))
    #expect(try await engine.reminders.deliver(at: Date(), conditions: checker).isEmpty)
    let after = try Self.json(await app.respond(to: Self.get("/api/agenda")))
    let skipped = try #require(after["items"]?.arrayValue?.first { $0["id"] == .int(Int(id)) })
    #expect(skipped["condition_outcome"] == "failed")
    #expect(
      skipped["condition_note"]
        == "not fired: only if it rains tomorrow, and the forecast does not say rain")
  }

  struct Checker: ReminderConditionChecking {
    let outcome: AgentItemConditionOutcome
    func check(_ reminder: AgentItem, at now: Date) async -> AgentItemConditionOutcome { outcome }
  }

  @Test func insightCompactionAndRouteAnswer() async throws {
    _ = try await engine.memories.remember("my sister lives in Lyon", kind: .fact)
    _ = try await engine.conversation.appendTurn(role: "user", content: "hello there")
    let insight = try Self.json(await app.respond(to: Self.get("/api/insight")))
    #expect(insight["stats"]?["memories"] == 1)
    let week = try #require(insight["timeline"]?.arrayValue?.last)
    #expect(week["turns"] == 1)
    #expect(week["memories"] == 1)
    let compaction = try Self.json(await app.respond(to: Self.get("/api/compaction")))
    #expect(compaction["dry_run"] == true)
    let route = try Self.json(
      await app.respond(to: Self.get("/api/route?text=remind%20me%20to%20call%20Sam%20tomorrow%20at%209")))
    #expect(route["skill"] == "reminder.create")
    #expect(route["arguments"]?["title"] == "call Sam")
  }

  @Test func aRoutineRunsByNameInTheWebChatAndTheInspectorShowsItsSteps() async throws {
    try await engine.agentRecords.saveRoutine(
      Routine(
        name: "wind down",
        steps: [
          Routine.Step(text: "remind me tomorrow at 9pm to stretch", skill: "reminder.create"),
          Routine.Step(text: "show my reminders", skill: "reminder.list"),
        ], createdAt: Date()))
    let route = try Self.json(await app.respond(to: Self.get("/api/route?text=wind%20down")))
    #expect(route["routine"] == "wind down")
    #expect(
      route["steps"]?.arrayValue?.compactMap { $0["skill"]?.stringValue } == [
        "reminder.create", "reminder.list",
      ])

    let sent = await app.respond(to: Self.post("/api/chat/send", #"{"text":"wind down"}"#))
    let cookie = try #require(sent.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
    let waiting = try #require(try await Self.events(sent).last?.1)
    #expect(waiting["phase"] == "waiting")
    let confirmed = try await Self.events(
      await app.respond(to: Self.post("/api/chat/confirm", headers: [("Cookie", cookie)])))
    #expect(confirmed.last?.1["phase"] == "finished")
    #expect(try await engine.agentRecords.items().map(\.title) == ["stretch"])
  }

  // MARK: Refusals

  @Test(arguments: [
    ("POST", "/api/chat/send", "{not json", 400),
    ("POST", "/api/chat/send", "[1]", 400),
    ("POST", "/api/chat/send", #"{"text":"  "}"#, 400),
    ("POST", "/api/forget", #"{"id":987654}"#, 404),
    ("POST", "/api/forget", #"{"id":"x"}"#, 400),
    ("POST", "/api/forget", #"{"id":1,"kind":"thing"}"#, 400),
    ("POST", "/api/memories/987654", #"{"text":"x"}"#, 404),
    ("POST", "/api/memories/abc", #"{"text":"x"}"#, 400),
    ("POST", "/api/agenda/987654/cancel", "{}", 404),
    ("POST", "/api/agenda/987654/move", #"{"due":"2030-01-01"}"#, 404),
    ("GET", "/api/search?q=%20", "", 400),
    ("GET", "/api/search?q=x&mode=psychic", "", 400),
    ("GET", "/api/search?q=x&kinds=thought", "", 400),
    ("GET", "/api/search?q=x&k=0", "", 400),
    ("GET", "/api/search?q=x&since=tomorrowish", "", 400),
    ("GET", "/api/agenda?from=2030-01-02&to=2030-01-01", "", 400),
    ("GET", "/api/sessions/987654", "", 404),
    ("GET", "/api/route", "", 400),
    ("GET", "/api/nothing", "", 404),
    ("GET", "/api/forget", "", 405),
    ("DELETE", "/api/search", "", 405),
    ("POST", "/api/chat/confirm", "{}", 409),
  ])
  func badRequestsGetAClearError(method: String, path: String, body: String, status: Int) async throws {
    let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
    let request = HTTPRequest(
      method: method, path: parts[0], query: parts.count > 1 ? parts[1] : "",
      headers: [("Content-Type", "application/json")], body: Data(body.utf8))
    let response = await app.respond(to: request)
    #expect(response.status == status)
    #expect(response.header("Content-Type") == "application/json")
    let message = try #require(try Self.json(response)["error"]?.stringValue)
    #expect(!message.isEmpty)
    if status == 405 { #expect(response.header("Allow") != nil) }
  }

  /// A body or query field of the wrong type is a 400 whose sentence names the field (the API
  /// used to read `"dry_run": "yes"` as false and `"text": 5` as blank).
  @Test(arguments: [
    ("POST", "/api/chat/send", #"{"text":5}"#, "'text' must be a string"),
    ("POST", "/api/forget", #"{"id":1,"dry_run":"yes"}"#, "'dry_run' must be true or false"),
    ("POST", "/api/forget", #"{"id":[1]}"#, "'id' must be a positive integer"),
    (
      "POST", "/api/memories/1", #"{"kind":7}"#,
      "'kind' must be one of fact, preference, note, summary, event"
    ),
    ("POST", "/api/agenda/1/move", #"{"due":20300101}"#, "'due' must be an ISO 8601 time"),
    ("GET", "/api/search?q=x&k=five", "", "'k' must be 1 to 100"),
    ("GET", "/api/memories?limit=lots", "", "'limit' must be an integer"),
  ])
  func aFieldOfTheWrongTypeIsNamed(method: String, path: String, body: String, sentence: String) async throws
  {
    let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
    let response = await app.respond(
      to: HTTPRequest(
        method: method, path: parts[0], query: parts.count > 1 ? parts[1] : "",
        headers: [("Content-Type", "application/json")], body: Data(body.utf8)))
    #expect(response.status == 400)
    let message = try #require(try Self.json(response)["error"]?.stringValue)
    #expect(message.hasPrefix(sentence), "\(message)")
  }

  @Test func aBodyNestedTooDeepIsSaidToBe() async throws {
    let deep = String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000)
    let response = await app.respond(to: Self.post("/api/chat/send", #"{"text":\#(deep)}"#))
    #expect(response.status == 400)
    #expect(try Self.json(response)["error"]?.stringValue?.contains("nested too deep") == true)
  }

  @Test func aPreflightIsAnsweredForTheServersOwnOriginOnly() async throws {
    let host = ("Host", "localhost:8930")
    func preflight(_ origin: String) async -> HTTPResponse {
      await app.respond(
        to: HTTPRequest(
          method: "OPTIONS", path: "/api/forget",
          headers: [host, ("Origin", origin), ("Access-Control-Request-Method", "POST")]))
    }
    let own = await preflight("http://localhost:8930")
    #expect(own.status == 204)
    #expect(own.header("Access-Control-Allow-Origin") == "http://localhost:8930")
    #expect(own.header("Access-Control-Allow-Methods")?.contains("POST") == true)
    #expect(await preflight("http://localhost:3000").status == 403)
    #expect(await preflight("http://evil.example").status == 403)
  }

  @Test func bodiesOverTheLimitOrNotJSONAreRefused() async throws {
    let huge = String(repeating: "x", count: WebApp.maximumAPIBodyBytes + 1)
    #expect(await app.respond(to: Self.post("/api/chat/send", #"{"text":"\#(huge)"}"#)).status == 413)
    let form = HTTPRequest(
      method: "POST", path: "/api/forget", headers: [("Content-Type", "application/x-www-form-urlencoded")],
      body: Data("id=1".utf8))
    #expect(await app.respond(to: form).status == 415)
  }

  @Test func originAndTokenRulesApply() async throws {
    let host = ("Host", "127.0.0.1:8930")
    let evil = await app.respond(
      to: Self.get("/api/status", headers: [host, ("Origin", "http://evil.example")]))
    #expect(evil.status == 403)
    #expect(
      await app.respond(to: Self.get("/", headers: [host, ("Origin", "http://evil.example")])).status == 403)
    #expect(
      await app.respond(to: Self.get("/api/status", headers: [host, ("Origin", "http://127.0.0.1:8930")]))
        .status == 200)
    // Another page of this machine (another port) is another origin.
    #expect(
      await app.respond(to: Self.get("/api/status", headers: [host, ("Origin", "http://localhost:3000")]))
        .status == 403)

    let token = "a-token-of-sixteen-or-more"
    let guarded = Self.app(engine, token: token)
    let page = await guarded.respond(to: Self.get("/", headers: [host]))
    #expect(page.status == 401)
    #expect(String(decoding: page.bodyBytes, as: UTF8.self).contains("engram serve"))
    #expect(await guarded.respond(to: Self.get("/app.js", headers: [host])).status == 200)
    let refused = await guarded.respond(to: Self.get("/api/status"))
    #expect(refused.status == 401)
    #expect(refused.header("WWW-Authenticate") != nil)
    let entry = await guarded.respond(to: Self.get("/?token=\(token)", headers: [host]))
    #expect(entry.status == 303)
    #expect(entry.header("Location") == "/")
    let cookie = try #require(entry.header("Set-Cookie"))
    #expect(cookie.hasPrefix("engram_auth_8930=\(token);"))
    #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
    let withCookie = [host, ("Cookie", "engram_chat=x; engram_auth_8930=\(token)")]
    #expect(await guarded.respond(to: Self.get("/", headers: withCookie)).status == 200)
    #expect(await guarded.respond(to: Self.get("/api/status", headers: withCookie)).status == 200)
    // A cookie of another port's server is not this one's.
    let otherPort = [("Host", "127.0.0.1:8931"), ("Cookie", "engram_auth_8930=\(token)")]
    #expect(await guarded.respond(to: Self.get("/api/status", headers: otherPort)).status == 401)
    let wrongCookie = [host, ("Cookie", "engram_auth_8930=\(token)x")]
    #expect(await guarded.respond(to: Self.get("/api/status", headers: wrongCookie)).status == 401)
    #expect(await guarded.respond(to: Self.get("/?token=\(token)x", headers: [host])).status == 401)
    let allowed = await guarded.respond(
      to: Self.get(
        "/api/status",
        headers: [
          ("Authorization", "Bearer \(token)"), ("Origin", "http://box.lan:8930"), ("Host", "box.lan:8930"),
        ]))
    #expect(allowed.status == 200)
    let rebound = await guarded.respond(
      to: Self.get(
        "/api/status", headers: [("Authorization", "Bearer \(token)"), ("Origin", "http://evil.example")]))
    #expect(rebound.status == 403)
  }
}
