import Engram
import EngramEmbeddings
import EngramHTTP
import EngramTestSupport
import Foundation
import Testing

@testable import EngramMCP

/// The MCP tools, called in process through the server as a client would.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct EngineToolProviderTests {
  let scratch: ScratchFolder
  let engine: MemoryEngine
  let server: MCPServer

  init() throws {
    scratch = try ScratchFolder()
    engine = try MemoryEngine(
      path: scratch.path("m.sqlite"),
      configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    server = MCPServer(
      info: ServerInfo(name: "engram", version: "test"), provider: EngineToolProvider(engine: engine),
      log: { _ in })
  }

  func call(_ name: String, _ arguments: JSONValue) async throws -> JSONValue {
    let request: JSONValue = [
      "jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": ["name": .string(name), "arguments": arguments],
    ]
    let line = try #require(await server.handle(line: request.jsonText))
    return try #require(try JSONValue.parse(line)["result"])
  }

  @Test func listsTheToolsWithSchemasAndHints() async throws {
    let line = try #require(await server.handle(line: #"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#))
    let tools = try #require(try JSONValue.parse(line)["result"]?["tools"]?.arrayValue)
    let names = tools.compactMap { $0["name"]?.stringValue }
    #expect(
      names == [
        "memory_search", "memory_remember", "memory_forget", "memory_context", "conversation_append",
        "memory_stats", "memory_agenda", "reminders_deliver", "routine_list", "routine_run",
      ])
    for tool in tools {
      #expect(tool["inputSchema"]?["type"] == "object")
      #expect(tool["outputSchema"]?["type"] == "object")
    }
    let hints = Dictionary(uniqueKeysWithValues: tools.map { ($0["name"]!.stringValue!, $0["annotations"]!) })
    #expect(hints["memory_search"]?["readOnlyHint"] == true)
    #expect(hints["memory_context"]?["readOnlyHint"] == true)
    #expect(hints["memory_stats"]?["readOnlyHint"] == true)
    #expect(hints["memory_agenda"]?["readOnlyHint"] == true)
    #expect(hints["memory_forget"]?["destructiveHint"] == true)
    #expect(hints["reminders_deliver"]?["readOnlyHint"] == false)
    #expect(hints["routine_run"]?["readOnlyHint"] == false)
  }

  /// Each tool's input schema is its arguments type's, with the defaults declared there.
  @Test func inputSchemasAreDerivedFromTheArgumentTypes() async throws {
    let provider = EngineToolProvider(engine: engine)
    let schemas = Dictionary(uniqueKeysWithValues: provider.tools.map { ($0.name, $0.inputSchema) })
    #expect(schemas["memory_search"] == SearchArguments.jsonSchema)
    #expect(schemas["memory_agenda"] == AgendaArguments.jsonSchema)
    #expect(schemas["routine_run"] == RoutineRunArguments.jsonSchema)
    let search = try #require(schemas["memory_search"])
    #expect(search["required"] == ["query"])
    #expect(search["properties"]?["k"]?["default"] == 10)
    #expect(search["properties"]?["k"]?["maximum"] == 100)
    #expect(search["properties"]?["mode"]?["enum"] == ["hybrid", "vector", "keyword"])
    #expect(
      search["properties"]?["filters"]?["properties"]?["kinds"]?["items"]?["enum"] == [
        "message", "memory", "summary",
      ])
    #expect(schemas["memory_remember"]?["properties"]?["importance"]?["default"] == 0.5)
    #expect(
      schemas["memory_remember"]?["properties"]?["kind"]?["enum"] == ["fact", "preference", "note", "event"])
    #expect(schemas["memory_agenda"]?["properties"]?["kinds"]?["default"] == ["reminder", "event"])
    #expect(schemas["memory_agenda"]?["required"] == [])
  }

  /// Called without the server's schema check, a wrong type or a missing field is one sentence
  /// naming the field (the provider used to read `k: "five"` as the default 10).
  @Test func argumentsThatDoNotDecodeNameTheirField() async throws {
    let provider = EngineToolProvider(engine: engine)
    let cases: [(String, [String: JSONValue], String)] = [
      ("memory_search", ["query": "tea", "k": "five"], "'k' must be an integer from 1 to 100"),
      ("memory_search", ["k": 3], "'query' is missing"),
      (
        "memory_search", ["query": "tea", "filters": ["kinds": ["thought"]]],
        "'filters.kinds' must be a list, each one of message, memory, summary"
      ),
      (
        "memory_remember", ["content": "x", "importance": "high"], "'importance' must be a number from 0 to 1"
      ),
      ("memory_forget", ["id": 0], "'id' must be a positive integer"),
      ("memory_agenda", ["limit": true], "'limit' must be an integer"),
      ("routine_run", ["name": 7], "'name' must be a non-empty string"),
    ]
    for (name, arguments, sentence) in cases {
      do {
        _ = try await provider.call(name: name, arguments: arguments)
        Issue.record("\(name) \(arguments) was accepted")
      } catch let error as ToolError {
        #expect(error.message.hasPrefix(sentence), "\(name): \(error.message)")
      }
    }
    #expect(try await engine.maintenance.tableCounts()["memories"] == 0)
  }

  @Test func rememberSearchContextAppendStatsAndForget() async throws {
    let remembered = try await call(
      "memory_remember", ["content": "Maya likes green tea", "kind": "preference", "importance": 0.8])
    #expect(remembered["isError"] == false)
    let id = try #require(remembered["structuredContent"]?["id"]?.intValue)

    let appended = try await call(
      "conversation_append", ["role": "user", "content": "Tea in Lisbon tomorrow?", "session": "chat"])
    #expect(appended["isError"] == false)
    #expect(appended["structuredContent"]?["session"]?.intValue != nil)

    let found = try await call(
      "memory_search", ["query": "green tea", "k": 5, "filters": ["kinds": ["memory"]]])
    let hits = try #require(found["structuredContent"]?["hits"]?.arrayValue)
    #expect(hits.count == 1)
    #expect(hits.first?["id"]?.intValue == id)
    #expect(found["content"]?[0]?["text"]?.stringValue?.contains("green tea") == true)

    let context = try await call("memory_context", ["query": "what does Maya drink?", "budget": 400])
    #expect(context["structuredContent"]?["context"]?.stringValue?.contains("green tea") == true)
    #expect((context["structuredContent"]?["token_count"]?.intValue ?? 999) <= 400)

    let stats = try await call("memory_stats", [:])
    #expect(stats["structuredContent"]?["memories"] == 1)
    #expect(stats["structuredContent"]?["messages"] == 1)

    let forgotten = try await call("memory_forget", ["id": .int(id)])
    #expect(forgotten["structuredContent"]?["forgotten"] == true)
    let again = try await call("memory_forget", ["id": .int(id)])
    #expect(again["isError"] == true)
    #expect(again["content"]?[0]?["text"]?.stringValue?.contains("memory_search") == true)
    #expect(try await engine.memories.get(Int64(id)) == nil)
  }

  @Test func invalidArgumentsBecomeActionableErrorResults() async throws {
    let cases: [(String, JSONValue, String)] = [
      ("memory_search", [:], "query"),
      ("memory_search", ["query": "x", "k": 0], "'k'"),
      ("memory_search", ["query": "x", "mode": "fuzzy"], "'mode'"),
      ("memory_search", ["query": "x", "filters": ["since": "yesterday-ish"]], "filters.since"),
      ("memory_search", ["query": "   "], "blank"),
      ("memory_remember", ["content": "x", "importance": 3], "'importance'"),
      ("memory_remember", ["content": "x", "colour": "red"], "colour"),
      ("memory_forget", ["id": "seven"], "'id'"),
      ("conversation_append", ["role": "narrator", "content": "x"], "'role'"),
      ("memory_context", ["query": "x", "budget": 1], "'budget'"),
      ("memory_agenda", ["from": "soonish"], "'from'"),
      ("memory_agenda", ["from": "2025-06-12", "to": "2025-06-11"], "'from' must come before 'to'"),
      ("memory_agenda", ["kinds": ["note"]], "kinds"),
    ]
    for (name, arguments, mention) in cases {
      let result = try await call(name, arguments)
      #expect(result["isError"] == true, "\(name) \(arguments.jsonText)")
      let text = result["content"]?[0]?["text"]?.stringValue ?? ""
      #expect(text.contains(mention), "\(name): \(text)")
    }
    #expect(try await engine.maintenance.tableCounts()["memories"] == 0)
    #expect(try await engine.maintenance.tableCounts()["messages"] == 0)
  }

  @Test func agendaListsRemindersAndEventsInARangeSoonestFirst() async throws {
    let day = try #require(DateParser.parse("2025-06-12T00:00:00+08:00")).date
    let review = try await engine.agentRecords.addItem(
      kind: .event, title: "project review", due: day.addingTimeInterval(14 * 3600))
    let bank = try await engine.agentRecords.addItem(
      kind: .reminder, title: "call the bank", due: day.addingTimeInterval(11 * 3600))
    _ = try await engine.agentRecords.addItem(
      kind: .reminder, title: "next day", due: day.addingTimeInterval(30 * 3600))
    _ = try await engine.agentRecords.addItem(
      kind: .note, title: "a note", due: day.addingTimeInterval(12 * 3600))
    let result = try await call(
      "memory_agenda", ["from": "2025-06-12T00:00:00+08:00", "to": "2025-06-12T23:59:00+08:00"])
    #expect(result["isError"] == false)
    let items = try #require(result["structuredContent"]?["items"]?.arrayValue)
    #expect(items.compactMap { $0["id"]?.intValue } == [Int(bank), Int(review)])
    #expect(items.first?["kind"] == "reminder")
    #expect(items.first?["delivered_at"] == .null)
    let events = try await call("memory_agenda", ["from": "2025-06-12", "kinds": ["event"]])
    #expect(
      events["structuredContent"]?["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue } == [
        "project review"
      ])
    #expect(try await engine.agentRecords.item(bank)?.deliveredAt == nil)  // read-only
  }

  @Test func agendaShowsAReminderCondition() async throws {
    let day = try #require(DateParser.parse("2025-06-12T00:00:00+08:00")).date
    let condition = #"{"about":"snow","kind":"weather","negated":false,"text":"it snows on Saturday"}"#
    _ = try await engine.agentRecords.addItem(
      kind: .reminder, title: "put the shovel out", due: day.addingTimeInterval(18 * 3600),
      condition: condition)
    let result = try await call("memory_agenda", ["from": "2025-06-12", "to": "2025-06-13"])
    let item = try #require(result["structuredContent"]?["items"]?.arrayValue?.first)
    #expect(item["condition"] == "it snows on Saturday")
    #expect(item["condition_note"] == "only if it snows on Saturday")
    #expect(result["content"]?[0]?["text"]?.stringValue?.contains("(only if it snows on Saturday)") == true)
  }

  /// Every tool's failures, for every kind of wrong argument, are sentences: no Swift type or
  /// case text reaches the model.
  @Test func everyToolsErrorsAreSentences() async throws {
    let line = try #require(await server.handle(line: #"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#))
    let tools = try #require(try JSONValue.parse(line)["result"]?["tools"]?.arrayValue)
    let hostile: [JSONValue] = [
      "", "   ", "💥", "2025-13-45", .int(-1), .int(Int.max), .double(1e308), .bool(true), .null, [], ["x": 1],
      .string(String(repeating: "9", count: 5_000)), "\u{0}",
    ]
    var errors = 0
    for tool in tools {
      let name = try #require(tool["name"]?.stringValue)
      let properties = tool["inputSchema"]?["properties"]?.objectValue?.keys.sorted() ?? []
      var attempts: [JSONValue] = [[:], ["unexpected": 1]]
      for property in properties {
        for value in hostile { attempts.append(.object([property: value])) }
      }
      for arguments in attempts {
        let result = try await call(name, arguments)
        guard result["isError"] == true else { continue }
        errors += 1
        let text = result["content"]?[0]?["text"]?.stringValue ?? ""
        #expect(!text.isEmpty, "\(name) \(arguments.jsonText)")
        #expect(SwiftInternals.find(in: text).isEmpty, "\(name) \(arguments.jsonText): \(text)")
      }
    }
    #expect(errors > 50)
  }

  /// Issue 37, finding 5: after another process re-embeds the memory with another model,
  /// `memory_stats` says to restart instead of reporting the old model with no index rows.
  @Test func statsAfterAReindexElsewhereSayToRestart() async throws {
    _ = try await call("memory_remember", ["content": "Ann tunes pianos"])
    let other = try await MemoryEngine.reindex(
      path: engine.path, configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 32)),
      embedderSpec: "hashing:32")
    await other.close()
    let stats = try await call("memory_stats", [:])
    #expect(stats["isError"] == true)
    let text = stats["content"]?[0]?["text"]?.stringValue ?? ""
    #expect(text.contains("restart"), "\(text)")
    #expect(SwiftInternals.find(in: text).isEmpty)
  }
}
