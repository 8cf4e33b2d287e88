import Engram
import EngramCore
import EngramHTTP
import Foundation

/// The memory tools: search, remember, forget, context, append a turn, statistics.
extension EngineToolProvider {
  static func memoryTools(_ engine: MemoryEngine) -> [TypedTool] {
    [
      TypedTool(
        "memory_search", title: "Search memory",
        description:
          "Search the user's long-term memory (past conversation turns, stored memories, summaries) by meaning "
          + "and keywords. Returns the best hits with ids, dates and scores.",
        input: SearchArguments.self,
        output: [
          "type": "object", "properties": ["hits": ["type": "array", "items": hitSchema]],
          "required": ["hits"],
        ],
        annotations: ToolAnnotations(readOnlyHint: true, openWorldHint: false)
      ) { try await search($0, engine: engine) },
      TypedTool(
        "memory_remember", title: "Remember",
        description: "Store a fact, preference, note or event about the user for later conversations.",
        input: RememberArguments.self,
        output: [
          "type": "object",
          "properties": [
            "id": ["type": "integer"], "kind": ["type": "string"],
            "new": ["type": "boolean", "description": "false: the same memory was stored already (its id)"],
          ],
          "required": ["id", "kind"],
        ],
        annotations: ToolAnnotations(
          readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false)
      ) { arguments in
        let content = try nonBlank(arguments.content, field: "content", pass: "the sentence to remember")
        let kind = arguments.kind.memoryKind
        let (id, isNew) = try await engine.memories.rememberReporting(
          content, kind: kind, importance: arguments.importance)
        return .structured(
          ["id": .int(Int(id)), "kind": .string(kind.rawValue), "new": .bool(isNew)],
          text: isNew
            ? "Remembered \(kind.rawValue) #\(id)." : "Already remembered as \(kind.rawValue) #\(id).")
      },
      TypedTool(
        "memory_forget", title: "Forget a memory",
        description: "Delete one stored memory by id (find ids with memory_search). This cannot be undone.",
        input: ForgetArguments.self,
        output: [
          "type": "object", "properties": ["id": ["type": "integer"], "forgotten": ["type": "boolean"]],
          "required": ["id", "forgotten"],
        ],
        annotations: ToolAnnotations(
          readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false)
      ) { arguments in
        let id = arguments.id
        guard try await engine.memories.forget(kind: .memory, id: Int64(id)) else {
          throw ToolError("no memory with id \(id); find ids with memory_search")
        }
        return .structured(["id": .int(id), "forgotten": true], text: "Forgot memory #\(id).")
      },
      TypedTool(
        "memory_context", title: "Memory context for a prompt",
        description:
          "Build a compact, dated context block for a message: pinned preferences, relevant memories and recent "
          + "turns, within a token budget. Put it in the prompt before answering.",
        input: ContextArguments.self,
        output: [
          "type": "object",
          "properties": [
            "context": ["type": "string"], "token_count": ["type": "integer"], "budget": ["type": "integer"],
            "omitted": ["type": "integer"], "memory_ids": ["type": "array", "items": ["type": "integer"]],
          ],
          "required": ["context", "token_count", "budget"],
        ],
        annotations: ToolAnnotations(readOnlyHint: true, openWorldHint: false)
      ) { arguments in
        let query = try nonBlank(arguments.query, field: "query", pass: "the user's message")
        let built = try await engine.context(for: query, budget: arguments.budget)
        let value: JSONValue = [
          "context": .string(built.rendered), "token_count": .int(built.tokenCount),
          "budget": .int(built.budget),
          "omitted": .int(built.omitted),
          "memory_ids": .array(built.hits.filter { $0.kind == .memory }.map { .int(Int($0.id)) }),
        ]
        return .structured(value, text: built.rendered)
      },
      TypedTool(
        "conversation_append", title: "Append a conversation turn",
        description: "Record one turn of the current conversation so it can be recalled later.",
        input: AppendArguments.self,
        output: [
          "type": "object",
          "properties": ["id": ["type": "integer"], "session": ["type": ["integer", "null"]]],
          "required": ["id"],
        ],
        annotations: ToolAnnotations(
          readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false)
      ) { arguments in
        let content = try nonBlank(arguments.content, field: "content", pass: "the turn's text")
        let name = arguments.session
        var session: Int64?
        if let name { session = try await engine.conversation.startSession(name: name) }
        let id = try await engine.conversation.appendTurn(
          role: arguments.role.rawValue, content: content, session: session)
        return .structured(
          ["id": .int(Int(id)), "session": session.map { .int(Int($0)) } ?? .null],
          text: "Appended turn #\(id).")
      },
      TypedTool(
        "memory_stats", title: "Memory statistics",
        description: "Counts of turns, memories and summaries, size on disk, and the embedding model.",
        input: NoArguments.self,
        output: [
          "type": "object",
          "properties": [
            "sessions": ["type": "integer"], "messages": ["type": "integer"], "memories": ["type": "integer"],
            "summaries": ["type": "integer"], "bytes": ["type": "integer"], "model": ["type": "string"],
            "dimension": ["type": "integer"],
          ],
          "required": ["sessions", "messages", "memories", "summaries", "bytes", "model", "dimension"],
        ],
        annotations: ToolAnnotations(readOnlyHint: true, openWorldHint: false)
      ) { _ in
        // Counts and the index of another model would be stale: say so (finding 5).
        try await engine.maintenance.checkEmbedderCurrent()
        return .structured(try await EngineJSON.stats(engine))
      },
    ]
  }

  private static func search(_ arguments: SearchArguments, engine: MemoryEngine) async throws -> ToolResult {
    let query = try nonBlank(arguments.query, field: "query", pass: "the words to look for")
    let filters = arguments.filters
    let since = try date(filters?.since, field: "filters.since")
    let until = try date(filters?.until, field: "filters.until")
    var searchFilters = SearchFilters(
      kinds: Set(filters?.kinds ?? []), session: filters?.session, since: since?.date, until: until?.end)
    if let since = searchFilters.since, let until = searchFilters.until, since >= until {
      throw ToolError("'filters.since' must come before 'filters.until'")
    }
    searchFilters.includeSuperseded = false
    let hits = try await engine.search(query, k: arguments.k, mode: arguments.mode, filters: searchFilters)
    let value: JSONValue = ["hits": .array(hits.map(EngineJSON.hit))]
    let text =
      hits.isEmpty
      ? "No matches."
      : hits.enumerated().map {
        "\($0 + 1). [\($1.kind.rawValue) #\($1.id), \(DateParser.display($1.timestamp, timeZone: .current))] \($1.text)"
      }.joined(separator: "\n")
    return .structured(value, text: text)
  }
}
