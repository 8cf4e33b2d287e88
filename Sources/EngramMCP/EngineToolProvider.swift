import Engram
import EngramAgent
import EngramCore
import EngramHTTP
import Foundation

/// The memory tools `engram mcp` offers, served by one open engine.
///
/// Each tool takes one ``Arguments`` type (its input schema is derived from it). Every result
/// carries `structuredContent` (matching the tool's output schema) and the same JSON as text;
/// failures the model can fix come back as `isError` results saying what to change.
public struct EngineToolProvider: ToolProvider {
  /// The memory served.
  public let engine: MemoryEngine
  /// The agent that runs routines (started on first use).
  let routines: RoutineRunner
  /// One sentence for an engine, store or embedder error.
  let describe: @Sendable (any Error) -> String
  /// The tools by name, in `tools/list` order.
  private let typed: [TypedTool]

  /// Creates a provider over `engine`; `describe` words an engine error as one sentence (the
  /// CLI passes its own), by default ``sentence(for:)``.
  public init(
    engine: MemoryEngine,
    describe: @escaping @Sendable (any Error) -> String = EngineToolProvider.sentence(for:)
  ) {
    self.engine = engine
    self.describe = describe
    let routines = RoutineRunner(engine: engine)
    self.routines = routines
    typed = Self.memoryTools(engine) + Self.agendaTools(engine) + Self.routineTools(engine, routines)
  }

  /// One sentence for `error`: the engine's own words for its errors, the agent's otherwise.
  public static func sentence(for error: any Error) -> String {
    if let error = error as? EngramError { return error.description }
    return FriendlyMessage.text(for: error, language: .english)
  }

  /// The tools, in the order `tools/list` returns them.
  public var tools: [MCPTool] { typed.map(\.description) }

  /// Waits for the routine agent's background work (before the engine closes).
  public func finish() async { await routines.finish() }

  /// Calls a tool with arguments already checked against its input schema.
  public func call(name: String, arguments: [String: JSONValue]) async throws -> ToolResult {
    guard let tool = typed.first(where: { $0.description.name == name }) else {
      throw ToolError("unknown tool '\(name)'")
    }
    do {
      return try await tool.call(arguments)
    } catch let error as ToolError {
      throw error
    } catch {
      throw ToolError("\(name) failed: \(describe(error))")
    }
  }

  // MARK: - Shared pieces

  static let hitSchema: JSONValue = [
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

  /// A reminder or event as `memory_agenda` and `reminders_deliver` return it.
  static let itemSchema: JSONValue = [
    "type": "object",
    "properties": [
      "id": ["type": "integer"], "kind": ["type": "string", "enum": ["reminder", "event"]],
      "title": ["type": "string"], "body": ["type": ["string", "null"]], "due": ["type": "string"],
      "delivered_at": ["type": ["string", "null"]], "condition": ["type": ["string", "null"]],
      "condition_outcome": ["type": ["string", "null"]], "condition_note": ["type": ["string", "null"]],
    ],
    "required": ["id", "kind", "title", "due"],
  ]

  /// `text`, or a tool error saying `field` is blank and what to pass.
  static func nonBlank(_ text: String, field: String, pass: String) throws -> String {
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw ToolError("'\(field)' is blank; pass \(pass)")
    }
    return text
  }

  /// The date `text` names, or a tool error naming `field`.
  static func date(_ text: String?, field: String) throws -> ParsedDate? {
    guard let text else { return nil }
    guard let parsed = DateParser.parse(text) else {
      throw ToolError("'\(field)' must be a date YYYY-MM-DD or an ISO 8601 timestamp, got \"\(text)\"")
    }
    return parsed
  }

  static func iso(_ date: Date) -> String { DateParser.iso8601(date, timeZone: .current) }

  /// A reminder or event as JSON (``itemSchema``).
  static func itemJSON(_ item: AgentItem) -> JSONValue {
    [
      "id": .int(Int(item.id ?? 0)), "kind": .string(item.kind.rawValue), "title": .string(item.title),
      "body": item.body.map(JSONValue.string) ?? .null, "due": .string(item.dueAt.map(iso) ?? ""),
      "delivered_at": item.deliveredAt.map { .string(iso($0)) } ?? .null,
      "condition": item.condition.map { _ in .string(ReminderRendering.conditionText(item) ?? "") } ?? .null,
      "condition_outcome": item.conditionOutcome.map { .string($0.state.rawValue) } ?? .null,
      "condition_note": ReminderRendering.conditionNote(item).map(JSONValue.string) ?? .null,
    ]
  }
}
