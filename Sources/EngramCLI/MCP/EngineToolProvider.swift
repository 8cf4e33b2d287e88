import Engram
import EngramCore
import EngramMCP
import Foundation

/// The memory tools `engram mcp` offers, served by one open engine.
///
/// Every result carries `structuredContent` (matching the tool's output schema) and the same
/// JSON as text; failures the model can fix come back as `isError` results saying what to change.
public struct EngineToolProvider: ToolProvider {
  /// The memory served.
  public let engine: MemoryEngine

  /// Creates a provider over `engine`.
  public init(engine: MemoryEngine) {
    self.engine = engine
  }

  private static let hitSchema: JSONValue = [
    "type": "object",
    "properties": [
      "id": ["type": "integer"], "kind": ["type": "string", "enum": ["message", "memory", "summary"]],
      "score": ["type": "number"], "date": ["type": "string"], "text": ["type": "string"],
      "speaker": ["type": ["string", "null"]], "session": ["type": ["integer", "null"]],
      "bm25": ["type": ["number", "null"]], "cosine": ["type": ["number", "null"]],
      "provenance": ["type": "array", "items": ["type": "string"]],
    ],
    "required": ["id", "kind", "score", "date", "text"],
  ]

  /// The seven tools, in the order `tools/list` returns them.
  public var tools: [MCPTool] {
    [
      MCPTool(
        name: "memory_search", title: "Search memory",
        description:
          "Search the user's long-term memory (past conversation turns, stored memories, summaries) by meaning "
          + "and keywords. Returns the best hits with ids, dates and scores.",
        inputSchema: [
          "type": "object",
          "properties": [
            "query": ["type": "string", "minLength": 1, "description": "What to look for."],
            "k": [
              "type": "integer", "minimum": 1, "maximum": 100, "description": "How many hits (default 10).",
            ],
            "mode": [
              "type": "string", "enum": ["hybrid", "vector", "keyword"],
              "description": "Ranking (default hybrid).",
            ],
            "filters": [
              "type": "object",
              "properties": [
                "kinds": [
                  "type": "array", "items": ["type": "string", "enum": ["message", "memory", "summary"]],
                ],
                "session": ["type": "string", "description": "A session name or id."],
                "since": ["type": "string", "description": "YYYY-MM-DD or ISO 8601; items at or after it."],
                "until": [
                  "type": "string", "description": "YYYY-MM-DD (whole day) or ISO 8601; items up to it.",
                ],
              ],
              "additionalProperties": false,
            ],
          ],
          "required": ["query"], "additionalProperties": false,
        ],
        outputSchema: [
          "type": "object", "properties": ["hits": ["type": "array", "items": Self.hitSchema]],
          "required": ["hits"],
        ],
        annotations: ToolAnnotations(readOnlyHint: true, openWorldHint: false)),
      MCPTool(
        name: "memory_remember", title: "Remember",
        description: "Store a fact, preference, note or event about the user for later conversations.",
        inputSchema: [
          "type": "object",
          "properties": [
            "content": [
              "type": "string", "minLength": 1, "description": "The memory, one self-contained sentence.",
            ],
            "kind": [
              "type": "string", "enum": ["fact", "preference", "note", "event"],
              "description": "Default fact.",
            ],
            "importance": ["type": "number", "minimum": 0, "maximum": 1, "description": "Default 0.5."],
          ],
          "required": ["content"], "additionalProperties": false,
        ],
        outputSchema: [
          "type": "object",
          "properties": [
            "id": ["type": "integer"], "kind": ["type": "string"],
            "new": ["type": "boolean", "description": "false: the same memory was stored already (its id)"],
          ],
          "required": ["id", "kind"],
        ],
        annotations: ToolAnnotations(
          readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false)),
      MCPTool(
        name: "memory_forget", title: "Forget a memory",
        description: "Delete one stored memory by id (find ids with memory_search). This cannot be undone.",
        inputSchema: [
          "type": "object",
          "properties": ["id": ["type": "integer", "minimum": 1, "description": "The memory's id."]],
          "required": ["id"], "additionalProperties": false,
        ],
        outputSchema: [
          "type": "object", "properties": ["id": ["type": "integer"], "forgotten": ["type": "boolean"]],
          "required": ["id", "forgotten"],
        ],
        annotations: ToolAnnotations(
          readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false)),
      MCPTool(
        name: "memory_context", title: "Memory context for a prompt",
        description:
          "Build a compact, dated context block for a message: pinned preferences, relevant memories and recent "
          + "turns, within a token budget. Put it in the prompt before answering.",
        inputSchema: [
          "type": "object",
          "properties": [
            "query": ["type": "string", "minLength": 1, "description": "The user's message."],
            "budget": [
              "type": "integer", "minimum": 50, "maximum": 100_000,
              "description": "Token budget (default 1000).",
            ],
          ],
          "required": ["query"], "additionalProperties": false,
        ],
        outputSchema: [
          "type": "object",
          "properties": [
            "context": ["type": "string"], "token_count": ["type": "integer"], "budget": ["type": "integer"],
            "omitted": ["type": "integer"], "memory_ids": ["type": "array", "items": ["type": "integer"]],
          ],
          "required": ["context", "token_count", "budget"],
        ],
        annotations: ToolAnnotations(readOnlyHint: true, openWorldHint: false)),
      MCPTool(
        name: "conversation_append", title: "Append a conversation turn",
        description: "Record one turn of the current conversation so it can be recalled later.",
        inputSchema: [
          "type": "object",
          "properties": [
            "role": ["type": "string", "enum": ["user", "assistant", "system", "tool"]],
            "content": ["type": "string", "minLength": 1],
            "session": [
              "type": "string", "minLength": 1, "description": "A session name; created when new.",
            ],
          ],
          "required": ["role", "content"], "additionalProperties": false,
        ],
        outputSchema: [
          "type": "object",
          "properties": ["id": ["type": "integer"], "session": ["type": ["integer", "null"]]],
          "required": ["id"],
        ],
        annotations: ToolAnnotations(
          readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false)),
      MCPTool(
        name: "memory_stats", title: "Memory statistics",
        description: "Counts of turns, memories and summaries, size on disk, and the embedding model.",
        inputSchema: ["type": "object", "properties": [:], "additionalProperties": false],
        outputSchema: [
          "type": "object",
          "properties": [
            "sessions": ["type": "integer"], "messages": ["type": "integer"], "memories": ["type": "integer"],
            "summaries": ["type": "integer"], "bytes": ["type": "integer"], "model": ["type": "string"],
            "dimension": ["type": "integer"],
          ],
          "required": ["sessions", "messages", "memories", "summaries", "bytes", "model", "dimension"],
        ],
        annotations: ToolAnnotations(readOnlyHint: true, openWorldHint: false)),
      MCPTool(
        name: "memory_agenda", title: "Reminders and events",
        description:
          "The user's reminders and calendar events due in a range (default: from now on), soonest first, "
          + "with ids, titles and due times; a reminder kept with a condition has `condition` (its words) "
          + "and, once due, `condition_outcome` (held, failed: not fired, unchecked) and `condition_note`. Read-only.",
        inputSchema: [
          "type": "object",
          "properties": [
            "from": [
              "type": "string",
              "description": "YYYY-MM-DD or ISO 8601; items due at or after it (default now).",
            ],
            "to": [
              "type": "string",
              "description": "YYYY-MM-DD (whole day) or ISO 8601; items due before its end.",
            ],
            "kinds": [
              "type": "array", "items": ["type": "string", "enum": ["reminder", "event"]],
              "description": "Which kinds (default both).",
            ],
            "limit": [
              "type": "integer", "minimum": 1, "maximum": 500,
              "description": "At most this many (default 100).",
            ],
          ],
          "additionalProperties": false,
        ],
        outputSchema: [
          "type": "object",
          "properties": [
            "items": [
              "type": "array",
              "items": [
                "type": "object",
                "properties": [
                  "id": ["type": "integer"], "kind": ["type": "string", "enum": ["reminder", "event"]],
                  "title": ["type": "string"], "body": ["type": ["string", "null"]],
                  "due": ["type": "string"],
                  "delivered_at": ["type": ["string", "null"]],
                ],
                "required": ["id", "kind", "title", "due"],
              ],
            ]
          ],
          "required": ["items"],
        ],
        annotations: ToolAnnotations(readOnlyHint: true, openWorldHint: false)),
    ]
  }

  /// Calls a tool with arguments already checked against its input schema.
  public func call(name: String, arguments: [String: JSONValue]) async throws -> ToolResult {
    do {
      switch name {
      case "memory_search": return try await search(arguments)
      case "memory_remember": return try await remember(arguments)
      case "memory_forget": return try forget(arguments)
      case "memory_context": return try await context(arguments)
      case "conversation_append": return try await append(arguments)
      case "memory_stats":
        // Counts and the index of another model would be stale: say so (finding 5).
        try engine.maintenance.checkEmbedderCurrent()
        return .structured(try StatsCommand.collect(engine))
      case "memory_agenda": return try await agenda(arguments)
      default: throw ToolError("unknown tool '\(name)'")
      }
    } catch let error as ToolError {
      throw error
    } catch {
      throw ToolError("\(name) failed: \(EngineAccess.describe(error))")
    }
  }

  private func search(_ arguments: [String: JSONValue]) async throws -> ToolResult {
    let query = arguments["query"]?.stringValue ?? ""
    guard !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw ToolError("'query' is blank; pass the words to look for")
    }
    let filters = arguments["filters"] ?? [:]
    let since = try date(filters["since"], field: "filters.since")
    let until = try date(filters["until"], field: "filters.until")
    var searchFilters = SearchFilters(
      kinds: Set(
        (filters["kinds"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(ItemKind.init(rawValue:)) }),
      session: filters["session"]?.stringValue, since: since?.date, until: until?.end)
    if let since = searchFilters.since, let until = searchFilters.until, since >= until {
      throw ToolError("'filters.since' must come before 'filters.until'")
    }
    searchFilters.includeSuperseded = false
    let hits = try await engine.search(
      query, k: arguments["k"]?.intValue ?? 10,
      mode: SearchMode(rawValue: arguments["mode"]?.stringValue ?? "hybrid") ?? .hybrid,
      filters: searchFilters)
    let value: JSONValue = ["hits": .array(hits.map(HitRendering.json))]
    let text =
      hits.isEmpty
      ? "No matches."
      : hits.enumerated().map {
        "\($0 + 1). [\($1.kind.rawValue) #\($1.id), \(HitRendering.shortDate($1.timestamp))] \($1.text)"
      }.joined(separator: "\n")
    return .structured(value, text: text)
  }

  private func date(_ value: JSONValue?, field: String) throws -> ParsedDate? {
    guard let text = value?.stringValue else { return nil }
    guard let parsed = DateParser.parse(text) else {
      throw ToolError("'\(field)' must be a date YYYY-MM-DD or an ISO 8601 timestamp, got \"\(text)\"")
    }
    return parsed
  }

  private func agenda(_ arguments: [String: JSONValue]) async throws -> ToolResult {
    let from = try date(arguments["from"], field: "from")?.date ?? Date()
    let to = try date(arguments["to"], field: "to")?.end
    if let to, to <= from { throw ToolError("'from' must come before 'to'") }
    let kinds = (arguments["kinds"]?.arrayValue ?? [.string("reminder"), .string("event")]).compactMap {
      $0.stringValue.flatMap(AgentItemKind.init(rawValue:))
    }
    let limit = arguments["limit"]?.intValue ?? 100
    let engine = engine
    let items = try await BlockingWork.run { () throws -> [AgentItem] in
      try Set(kinds).flatMap { kind in
        try engine.agentRecords.agenda(kind: kind, from: from, to: to, limit: limit)
      }
    }.sorted { ($0.dueAt ?? .distantPast, $0.id ?? 0) < ($1.dueAt ?? .distantPast, $1.id ?? 0) }.prefix(limit)
    func iso(_ date: Date) -> String { DateParser.iso8601(date, timeZone: .current) }
    let value: JSONValue = [
      "items": .array(
        items.map { item in
          [
            "id": .int(Int(item.id ?? 0)), "kind": .string(item.kind.rawValue), "title": .string(item.title),
            "body": item.body.map(JSONValue.string) ?? .null, "due": .string(item.dueAt.map(iso) ?? ""),
            "delivered_at": item.deliveredAt.map { .string(iso($0)) } ?? .null,
            "condition": item.condition.map { _ in .string(ReminderRendering.conditionText(item) ?? "") }
              ?? .null,
            "condition_outcome": item.conditionOutcome.map { .string($0.state.rawValue) } ?? .null,
            "condition_note": ReminderRendering.conditionNote(item).map(JSONValue.string) ?? .null,
          ]
        })
    ]
    let text =
      items.isEmpty
      ? "Nothing due in that range."
      : items.map { item in
        "\(item.kind.rawValue) #\(item.id ?? 0) \(item.dueAt.map(iso) ?? ""): \(item.title)"
          + (ReminderRendering.conditionNote(item).map { " (\($0))" } ?? "")
      }.joined(separator: "\n")
    return .structured(value, text: text)
  }

  private func remember(_ arguments: [String: JSONValue]) async throws -> ToolResult {
    let content = arguments["content"]?.stringValue ?? ""
    guard !content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw ToolError("'content' is blank; pass the sentence to remember")
    }
    let kind = MemoryKind(rawValue: arguments["kind"]?.stringValue ?? "fact") ?? .fact
    let (id, isNew) = try await engine.memories.rememberReporting(
      content, kind: kind, importance: arguments["importance"]?.doubleValue ?? 0.5)
    return .structured(
      ["id": .int(Int(id)), "kind": .string(kind.rawValue), "new": .bool(isNew)],
      text: isNew ? "Remembered \(kind.rawValue) #\(id)." : "Already remembered as \(kind.rawValue) #\(id).")
  }

  private func forget(_ arguments: [String: JSONValue]) throws -> ToolResult {
    let id = arguments["id"]?.intValue ?? 0
    guard try engine.memories.forget(kind: .memory, id: Int64(id)) else {
      throw ToolError("no memory with id \(id); find ids with memory_search")
    }
    return .structured(["id": .int(id), "forgotten": true], text: "Forgot memory #\(id).")
  }

  private func context(_ arguments: [String: JSONValue]) async throws -> ToolResult {
    let query = arguments["query"]?.stringValue ?? ""
    guard !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw ToolError("'query' is blank; pass the user's message")
    }
    let built = try await engine.context(for: query, budget: arguments["budget"]?.intValue ?? 1000)
    let value: JSONValue = [
      "context": .string(built.rendered), "token_count": .int(built.tokenCount), "budget": .int(built.budget),
      "omitted": .int(built.omitted),
      "memory_ids": .array(built.hits.filter { $0.kind == .memory }.map { .int(Int($0.id)) }),
    ]
    return .structured(value, text: built.rendered)
  }

  private func append(_ arguments: [String: JSONValue]) async throws -> ToolResult {
    let content = arguments["content"]?.stringValue ?? ""
    guard !content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw ToolError("'content' is blank; pass the turn's text")
    }
    let session = try arguments["session"]?.stringValue.map { try engine.conversation.startSession(name: $0) }
    let id = try await engine.conversation.appendTurn(
      role: arguments["role"]?.stringValue ?? "user", content: content, session: session)
    return .structured(
      ["id": .int(Int(id)), "session": session.map { .int(Int($0)) } ?? .null], text: "Appended turn #\(id).")
  }
}
