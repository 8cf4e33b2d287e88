import Engram
import EngramAgent
import EngramCore
import EngramHTTP
import Foundation

/// The agenda tools: a read-only look at what is due (`memory_agenda`), and the delivery of
/// reminders that came due (`reminders_deliver`), through the engine's one ``ReminderDelivery``
/// that chat, the web app and `engram reminders` deliver through too: each reminder is
/// delivered once, to whichever asks first.
extension EngineToolProvider {
  static func agendaTools(_ engine: MemoryEngine) -> [TypedTool] {
    [
      TypedTool(
        "memory_agenda", title: "Reminders and events",
        description:
          "The user's reminders and calendar events due in a range (default: from now on), soonest first, "
          + "with ids, titles and due times; a reminder kept with a condition has `condition` (its words) "
          + "and, once due, `condition_outcome` (held, failed: not fired, unchecked) and `condition_note`. "
          + "Read-only: it never marks a reminder delivered (reminders_deliver does).",
        input: AgendaArguments.self,
        output: [
          "type": "object", "properties": ["items": ["type": "array", "items": itemSchema]],
          "required": ["items"],
        ],
        annotations: ToolAnnotations(readOnlyHint: true, openWorldHint: false)
      ) { try await agenda($0, engine: engine) },
      TypedTool(
        "reminders_deliver", title: "Deliver due reminders",
        description:
          "Hand over the user's reminders that are due now and were never delivered, soonest first, and mark "
          + "them delivered: each reminder is delivered once, whether here, in `engram chat`, the web app or "
          + "`engram reminders` asks first. Call it at the start of a conversation (and now and then) and tell "
          + "the user about each. A reminder kept with a condition is checked first; one whose condition does "
          + "not hold is not returned.",
        input: DeliverArguments.self,
        output: [
          "type": "object", "properties": ["reminders": ["type": "array", "items": itemSchema]],
          "required": ["reminders"],
        ],
        annotations: ToolAnnotations(
          readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true)
      ) { arguments in
        let now = Date()
        let due = try await engine.reminders.deliver(
          at: now, limit: arguments.limit, conditions: ReminderConditions(engine: engine))
        let text =
          due.isEmpty
          ? "No reminders are due."
          : due.map { "⏰ " + ReminderRendering.line($0, timeZone: .current, now: now) }.joined(
            separator: "\n")
        return .structured(["reminders": .array(due.map(itemJSON))], text: text)
      },
    ]
  }

  private static func agenda(_ arguments: AgendaArguments, engine: MemoryEngine) async throws -> ToolResult {
    let from = try date(arguments.from, field: "from")?.date ?? Date()
    let to = try date(arguments.to, field: "to")?.end
    if let to, to <= from { throw ToolError("'from' must come before 'to'") }
    let kinds = Set(arguments.kinds.map(\.itemKind))
    let limit = arguments.limit
    var found: [AgentItem] = []
    for kind in kinds {
      found += try await engine.agentRecords.agenda(kind: kind, from: from, to: to, limit: limit)
    }
    let items = found.sorted {
      ($0.dueAt ?? .distantPast, $0.id ?? 0) < ($1.dueAt ?? .distantPast, $1.id ?? 0)
    }.prefix(limit)
    let text =
      items.isEmpty
      ? "Nothing due in that range."
      : items.map { item in
        "\(item.kind.rawValue) #\(item.id ?? 0) \(item.dueAt.map(iso) ?? ""): \(item.title)"
          + (ReminderRendering.conditionNote(item).map { " (\($0))" } ?? "")
      }.joined(separator: "\n")
    return .structured(["items": .array(items.map(itemJSON))], text: text)
  }
}
