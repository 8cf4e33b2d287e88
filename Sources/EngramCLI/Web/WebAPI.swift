import Engram
import EngramAgent
import EngramCore
import EngramHTTP
import EngramMCP
import Foundation

/// The JSON API of `engram serve` (listed in docs/web.md): functions of a scope and a request,
/// called by ``WebApp`` (and directly by the tests, without sockets). A request the API cannot
/// serve gets a 4xx answer `{"error": SENTENCE}`; an engine failure a 500 with its sentence.
enum WebAPI {
  /// The cookie naming a browser session (one agent conversation each).
  static let chatCookie = "engram_chat"

  /// A request the API refuses, with its status and sentence.
  struct Failure: Error {
    var status: Int
    var message: String
    var allow: String?

    init(_ status: Int, _ message: String, allow: String? = nil) {
      self.status = status
      self.message = message
      self.allow = allow
    }
  }

  /// The response to an `/api/` request.
  static func respond(to request: HTTPRequest, scope: WebScope) async -> HTTPResponse {
    do {
      return try await route(request, scope: scope)
    } catch let failure as Failure {
      return WebApp.error(failure.status, failure.message, allow: failure.allow)
    } catch EngramError.notFound(let kind, let id) {
      return WebApp.error(404, "no \(kind.rawValue) with id \(id)")
    } catch EngramError.emptyText {
      return WebApp.error(400, "the text is blank")
    } catch EngramError.textTooLong(let bytes, let limit) {
      return WebApp.error(413, EngramError.textTooLong(bytes: bytes, limit: limit).description)
    } catch {
      return WebApp.error(500, EngineAccess.describe(error))
    }
  }

  private static func route(_ request: HTTPRequest, scope: WebScope) async throws -> HTTPResponse {
    let parts = request.path.split(separator: "/").dropFirst().map(String.init)
    func method(_ allowed: String) throws {
      guard request.method == allowed else {
        throw Failure(405, "\(request.method) \(request.path) is not served; use \(allowed)", allow: allowed)
      }
    }
    switch parts {
    case ["status"]:
      try method("GET")
      return WebApp.json(200, status(scope))
    case ["chat"]:
      try method("GET")
      return await WebChatAPI.current(request, scope: scope)
    case ["chat", "send"]:
      try method("POST")
      return try await WebChatAPI.send(request, scope: scope)
    case ["chat", "confirm"]:
      try method("POST")
      return try await WebChatAPI.confirm(request, scope: scope)
    case ["chat", "cancel"]:
      try method("POST")
      return try await WebChatAPI.cancel(request, scope: scope)
    case ["reminders", "due"]:
      try method("POST")
      return WebApp.json(200, try await dueReminders(scope))
    case ["search"]:
      try method("GET")
      return WebApp.json(200, try await search(query(request), scope: scope))
    case ["memories"]:
      try method("GET")
      return WebApp.json(200, try await memories(query(request), scope: scope))
    case let path where path.count == 2 && path[0] == "memories":
      try method("POST")
      return WebApp.json(200, try await edit(id: try identifier(path[1]), body(request), scope: scope))
    case ["forget"]:
      try method("POST")
      return WebApp.json(200, try await forget(body(request), scope: scope))
    case let path where path.count == 2 && path[0] == "sessions":
      try method("GET")
      return WebApp.json(200, try await session(id: try identifier(path[1]), scope: scope))
    case ["agenda"]:
      try method("GET")
      return WebApp.json(200, try await agenda(query(request), scope: scope))
    case let path where path.count == 3 && path[0] == "agenda" && path[2] == "cancel":
      try method("POST")
      return WebApp.json(200, try await cancelItem(id: try identifier(path[1]), scope: scope))
    case let path where path.count == 3 && path[0] == "agenda" && path[2] == "move":
      try method("POST")
      return WebApp.json(200, try await moveItem(id: try identifier(path[1]), body(request), scope: scope))
    case ["insight"]:
      try method("GET")
      return WebApp.json(200, try await insight(scope))
    case ["compaction"]:
      try method("GET")
      return WebApp.json(200, try await compaction(scope))
    case ["route"]:
      try method("GET")
      return WebApp.json(200, try await routeRequest(query(request), scope: scope))
    default:
      throw Failure(404, "no API at \(request.path) (docs/web.md lists them)")
    }
  }

  // MARK: Input

  /// The request's JSON object body (`{}` when empty), decoded as `Body`.
  /// - Throws: 415 for a body that is not `application/json`, 400 for malformed JSON, a
  ///   non-object, or a field `Body` cannot take (the sentence names it).
  static func body<Body: Arguments>(_ request: HTTPRequest) throws -> Body {
    try decoded { try Body.decode(try members(request)) }
  }

  /// The request's query parameters, decoded as `Query`.
  /// - Throws: 400 for a parameter `Query` cannot take (the sentence names it).
  static func query<Query: Arguments>(_ request: HTTPRequest) throws -> Query {
    try decoded { try Query.decode(query: request.queryParameters) }
  }

  private static func decoded<Value>(_ decode: () throws -> Value) throws -> Value {
    do {
      return try decode()
    } catch let error as ArgumentError {
      throw Failure(400, error.description)
    }
  }

  /// The members of the request's JSON object body (none when empty).
  private static func members(_ request: HTTPRequest) throws -> [String: JSONValue] {
    guard !request.body.isEmpty else { return [:] }
    guard StreamableHTTPHandler.mediaType(request.header("content-type")) == "application/json" else {
      throw Failure(415, "send the body as application/json")
    }
    let value: JSONValue
    do {
      value = try JSONValue(parsing: request.body)
    } catch {
      guard error.isNestedTooDeep else { throw Failure(400, "the body is not valid JSON") }
      throw Failure(
        400, "the body's JSON is nested too deep (at most \(JSONValue.ParseError.maximumDepth) levels)")
    }
    guard case .object(let members) = value else { throw Failure(400, "the body must be a JSON object") }
    return members
  }

  private static func identifier(_ text: String) throws -> Int64 {
    guard let id = Int64(text), id > 0 else {
      throw Failure(400, "'\(text)' is not an id (a positive integer)")
    }
    return id
  }

  private static func date(_ text: String?, field: String, timeZone: TimeZone) throws -> ParsedDate? {
    guard let text, !text.isEmpty else { return nil }
    guard let parsed = DateParser.parse(text, timeZone: timeZone) else {
      throw Failure(400, "'\(field)' must be a date YYYY-MM-DD or an ISO 8601 timestamp, got \"\(text)\"")
    }
    return parsed
  }

  static func iso(_ date: Date, _ scope: WebScope) -> String {
    DateParser.iso8601(date, timeZone: scope.clock.timeZone)
  }

  // MARK: Status

  private static func status(_ scope: WebScope) -> JSONValue {
    [
      "path": .string(scope.engine.path), "model": .string(scope.engine.embedder.modelID),
      "now": .string(iso(scope.clock.now, scope)), "time_zone": .string(scope.clock.timeZone.identifier),
      "version": .string(EngramCommandLine.version),
    ]
  }

  // MARK: Memory

  private static func search(_ query: SearchQuery, scope: WebScope) async throws -> JSONValue {
    let text = query.q ?? ""
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw Failure(400, "'q' is blank; pass the words to look for")
    }
    let zone = scope.clock.timeZone
    let since = try date(query.since, field: "since", timeZone: zone)?.date
    let until = try date(query.until, field: "until", timeZone: zone)?.end
    if let since, let until, since >= until { throw Failure(400, "'since' must come before 'until'") }
    let filters = SearchFilters(kinds: Set(query.kinds), session: query.session, since: since, until: until)
    let started = ContinuousClock.now
    let hits = try await scope.engine.search(text, k: query.k, mode: query.mode, filters: filters)
    let elapsed = ContinuousClock.now - started
    return [
      "hits": .array(hits.map { hitJSON($0, scope) }),
      "elapsed_ms": .double(
        Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3),
    ]
  }

  static func hitJSON(_ hit: SearchHit, _ scope: WebScope) -> JSONValue {
    [
      "id": .int(Int(hit.id)), "kind": .string(hit.kind.rawValue),
      "memory_kind": hit.memoryKind.map { .string($0.rawValue) } ?? .null, "text": .string(hit.text),
      "date": .string(iso(hit.timestamp, scope)), "session": hit.sessionID.map { .int(Int($0)) } ?? .null,
      "speaker": hit.speaker.map { .string($0) } ?? .null, "score": .double(hit.score),
      "bm25": hit.bm25.map { .double($0) } ?? .null, "cosine": hit.cosine.map { .double($0) } ?? .null,
      "provenance": .array(hit.provenance.map { .string($0) }),
    ]
  }

  private static func memoryJSON(_ memory: MemoryItem, _ scope: WebScope) -> JSONValue {
    [
      "id": .int(Int(memory.id ?? 0)), "kind": .string("memory"),
      "memory_kind": .string(memory.kind.rawValue),
      "text": .string(memory.content), "date": .string(iso(memory.createdAt, scope)),
      "session": memory.sessionID.map { .int(Int($0)) } ?? .null,
      "sources": .array(memory.sourceMessageIDs.map { .int(Int($0)) }),
    ]
  }

  private static func memories(_ query: MemoriesQuery, scope: WebScope) async throws -> JSONValue {
    let kind = query.kind
    let limit = min(500, max(1, query.limit))
    let engine = scope.engine
    let items = try await engine.memories.list(kind: kind, limit: limit)
    return ["memories": .array(items.map { memoryJSON($0, scope) })]
  }

  private static func edit(id: Int64, _ body: MemoryEditBody, scope: WebScope) async throws -> JSONValue {
    let engine = scope.engine
    guard let old = try await engine.memories.get(id) else {
      throw Failure(404, "no memory with id \(id)")
    }
    let text = body.text ?? old.content
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw Failure(400, "'text' is blank; forget the memory instead")
    }
    let newID = try await engine.memories.update(id, content: text, kind: body.kind)
    guard let memory = try await engine.memories.get(newID) else {
      throw Failure(404, "no memory with id \(newID)")
    }
    return ["memory": memoryJSON(memory, scope), "superseded": newID == id ? .null : .int(Int(id))]
  }

  private static func forget(_ body: ForgetBody, scope: WebScope) async throws -> JSONValue {
    guard let id = body.id else { throw Failure(400, "'id' must be a positive integer") }
    let kind = body.kind
    let dryRun = body.dryRun
    let engine = scope.engine
    guard let report = try await engine.memories.forgetReporting(kind: kind, id: Int64(id), dryRun: dryRun)
    else { throw Failure(404, "no \(kind.rawValue) with id \(id)") }
    return [
      "id": .int(id), "kind": .string(kind.rawValue), "dry_run": .bool(dryRun),
      "removed": ForgetCommand.removedJSON(report),
      "also": .string(String(ForgetCommand.removedText(report, dryRun: dryRun).dropFirst(2))),
    ]
  }

  private static func session(id: Int64, scope: WebScope) async throws -> JSONValue {
    let engine = scope.engine
    let turns = try await engine.conversation.recentTurns(limit: 1000, session: id)
    guard !turns.isEmpty else { throw Failure(404, "no turns in session \(id)") }
    return ["session": .int(Int(id)), "turns": .array(turns.map { hitJSON($0, scope) })]
  }

  // MARK: Agenda

  private static func itemJSON(_ item: AgentItem, _ scope: WebScope) -> JSONValue {
    [
      "id": .int(Int(item.id ?? 0)), "kind": .string(item.kind.rawValue), "title": .string(item.title),
      "body": item.body.map(JSONValue.string) ?? .null,
      "due": item.dueAt.map { .string(iso($0, scope)) } ?? .null,
      "ends": item.endsAt.map { .string(iso($0, scope)) } ?? .null,
      "delivered_at": item.deliveredAt.map { .string(iso($0, scope)) } ?? .null,
      "repeats": .bool(item.recurrence != nil),
      "condition": item.condition.map { _ in .string(ReminderRendering.conditionText(item) ?? "") } ?? .null,
      "condition_outcome": item.conditionOutcome.map { .string($0.state.rawValue) } ?? .null,
      "condition_note": ReminderRendering.conditionNote(item).map(JSONValue.string) ?? .null,
    ]
  }

  private static func agenda(_ query: AgendaQuery, scope: WebScope) async throws -> JSONValue {
    let zone = scope.clock.timeZone
    let now = scope.clock.now
    let from = try date(query.from, field: "from", timeZone: zone)?.date ?? now.addingTimeInterval(-86_400)
    let to = try date(query.to, field: "to", timeZone: zone)?.end ?? from.addingTimeInterval(31 * 86_400)
    guard from < to else { throw Failure(400, "'from' must come before 'to'") }
    let engine = scope.engine
    let items = try await
      (engine.agentRecords.agenda(kind: .reminder, from: from, to: to, limit: 500)
      + engine.agentRecords.agenda(kind: .event, from: from, to: to, limit: 500)).sorted {
        ($0.dueAt ?? .distantPast, $0.id ?? 0) < ($1.dueAt ?? .distantPast, $1.id ?? 0)
      }
    return [
      "from": .string(iso(from, scope)), "to": .string(iso(to, scope)),
      "items": .array(items.map { itemJSON($0, scope) }),
    ]
  }

  private static func cancelItem(id: Int64, scope: WebScope) async throws -> JSONValue {
    let engine = scope.engine
    guard let item = try await engine.agentRecords.item(id) else {
      throw Failure(404, "no reminder or event with id \(id)")
    }
    try await engine.agentRecords.deleteItem(id)
    return ["cancelled": itemJSON(item, scope)]
  }

  private static func moveItem(id: Int64, _ body: MoveBody, scope: WebScope) async throws -> JSONValue {
    guard let text = body.due,
      let due = DateParser.parse(text, timeZone: scope.clock.timeZone)?.date
    else { throw Failure(400, "'due' must be an ISO 8601 time (2025-06-17T09:00) or a date") }
    let engine = scope.engine
    guard try await engine.agentRecords.item(id) != nil else {
      throw Failure(404, "no reminder or event with id \(id)")
    }
    let moved = try await engine.agentRecords.updateItem(id, due: due)
    return ["moved": itemJSON(moved, scope)]
  }

  private static func dueReminders(_ scope: WebScope) async throws -> JSONValue {
    let engine = scope.engine
    let now = scope.clock.now
    let conditions = ReminderConditions(engine: engine, timeZone: scope.clock.timeZone)
    let due = try await engine.reminders.deliver(at: now, conditions: conditions)
    return [
      "reminders": .array(
        due.map { item in
          var value = itemJSON(item, scope)
          value[member: "line"] = .string(
            ReminderRendering.line(item, timeZone: scope.clock.timeZone, now: now))
          return value
        })
    ]
  }

  // MARK: Insight

  private static func insight(_ scope: WebScope) async throws -> JSONValue {
    let engine = scope.engine
    let weeks = try await engine.maintenance.weeklyActivity()
    return [
      "stats": try await EngineJSON.stats(engine),
      "timeline": .array(
        weeks.map { week in
          [
            "week": .string(String(DateParser.iso8601(week.weekStart, timeZone: .gmt).prefix(10))),
            "turns": .int(week.turns), "memories": .int(week.memories),
          ]
        }),
    ]
  }

  private static func compaction(_ scope: WebScope) async throws -> JSONValue {
    let report = try await scope.engine.compact(now: scope.clock.now, dryRun: true)
    return CompactCommand.reportJSON(report)
  }

  // MARK: Route

  private static func routeRequest(_ query: RouteQuery, scope: WebScope) async throws -> JSONValue {
    let text = query.text ?? ""
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw Failure(400, "'text' is blank; pass a request to route")
    }
    let engine = scope.engine
    // The memory's enabled flags, as chat's registry reads them.
    let registry = SkillRegistry(store: try await EngineSkillStateStore(engine: engine))
    try BuiltInSkills.register(in: registry)
    let routines = try await engine.agentRecords.routines()
    // The user's routines, as chat reads them: the inspector shows what chat does.
    let router = TurnRouter(
      skills: SkillRouter(registry: registry, embedding: EnginePhraseEmbedding(engine)), routines: routines)
    let route = try await router.route(text, clock: scope.clock)
    return RouteCommand.json(text: text, route: route, registry: registry, clock: scope.clock)
  }
}

extension JSONValue {
  /// Sets a member of an object (no effect on other values).
  fileprivate subscript(member name: String) -> JSONValue? {
    get { objectValue?[name] }
    set {
      guard case .object(var members) = self else { return }
      members[name] = newValue
      self = .object(members)
    }
  }
}
