import EngramStore
import Foundation

/// Why an agent record was refused before anything was written.
public enum AgentRecordError: Error, Sendable, Hashable {
  /// A required text field (`title`, `skillID`, `executionID`, `summary`) is empty or blank.
  case emptyField(String)
  /// A JSON text field (`arguments`) is not a JSON object.
  case invalidJSON(field: String)
  /// A duration must be finite and not negative (milliseconds).
  case invalidDuration(Double)
  /// Step numbers start at 0 (routing) or 1 (skills); negative steps are refused.
  case invalidStep(Int)
  /// No row with this id in `table`.
  case notFound(table: String, id: Int64)
}

/// A reminder, calendar event or note an agent skill stored (`agent_items`).
public struct AgentItemRecord: Sendable, Hashable {
  /// What the item is (the store's kind, used as is).
  public typealias Kind = AgentItemKind

  /// The row id.
  public var id: Int64
  /// What the item is.
  public var kind: Kind
  /// Its title.
  public var title: String
  /// Its body, if any.
  public var body: String?
  /// When it is due (reminders) or starts (events), if dated.
  public var due: Date?
  /// When it was stored.
  public var createdAt: Date
  /// Whether it is done.
  public var done: Bool
  /// When a reminder was delivered (shown after it came due); nil until then.
  public var deliveredAt: Date?

  /// Creates a record (an agent memory of its own, in tests and adapters).
  public init(
    id: Int64, kind: Kind, title: String, body: String? = nil, due: Date? = nil, createdAt: Date,
    done: Bool = false, deliveredAt: Date? = nil
  ) {
    self.id = id
    self.kind = kind
    self.title = title
    self.body = body
    self.due = due
    self.createdAt = createdAt
    self.done = done
    self.deliveredAt = deliveredAt
  }

  init(_ item: AgentItem) {
    id = item.id ?? 0
    kind = item.kind
    title = item.title
    body = item.body
    due = item.dueAt
    createdAt = item.createdAt
    done = item.done
    deliveredAt = item.deliveredAt
  }
}

/// One step an agent ran, as stored in `traces`.
public struct AgentTraceRecord: Sendable, Hashable {
  /// How the step ended (the store's status, used as is).
  public typealias Status = TraceStatus

  /// The row id; nil before it is recorded.
  public var id: Int64?
  /// The execution (one agent turn) it belongs to.
  public var executionID: String
  /// The step number: 0 for routing and planning, 1... for skill calls.
  public var step: Int
  /// The skill that ran, if any.
  public var skillID: String?
  /// Its arguments as a JSON object text.
  public var arguments: String
  /// Its result text.
  public var result: String?
  /// How it ended.
  public var status: Status
  /// When it started.
  public var startedAt: Date
  /// How long it took, in milliseconds.
  public var durationMs: Double
  /// The error, when it failed.
  public var error: String?

  /// Creates a trace record.
  public init(
    id: Int64? = nil, executionID: String, step: Int, skillID: String? = nil, arguments: String = "{}",
    result: String? = nil, status: Status, startedAt: Date, durationMs: Double = 0, error: String? = nil
  ) {
    self.id = id
    self.executionID = executionID
    self.step = step
    self.skillID = skillID
    self.arguments = arguments
    self.result = result
    self.status = status
    self.startedAt = startedAt
    self.durationMs = durationMs
    self.error = error
  }

  init(_ trace: Trace) {
    self.init(
      id: trace.id, executionID: trace.executionID, step: trace.step, skillID: trace.skillID,
      arguments: trace.arguments, result: trace.result,
      status: trace.status,
      startedAt: trace.startedAt, durationMs: trace.durationMs, error: trace.error)
  }
}

/// A side effect waiting for (or past) the user's confirmation, as stored in `pending_calls`.
public struct PendingCallRecord: Sendable, Hashable {
  /// Where the call stands (the store's status, used as is).
  public typealias Status = PendingCallStatus

  /// The row id.
  public var id: Int64
  /// The execution it belongs to.
  public var executionID: String
  /// The step within the execution.
  public var step: Int
  /// The skill to run.
  public var skillID: String
  /// Its arguments as a JSON object text.
  public var arguments: String
  /// The confirmation text shown to the user.
  public var summary: String
  /// Where it stands.
  public var status: Status
  /// When it was created.
  public var createdAt: Date
  /// When its status last changed.
  public var updatedAt: Date
  /// The error, when it failed.
  public var error: String?

  init(_ call: PendingCall) {
    id = call.id ?? 0
    executionID = call.executionID
    step = call.step
    skillID = call.skillID
    arguments = call.arguments
    summary = call.summary
    status = call.status
    createdAt = call.createdAt
    updatedAt = call.updatedAt
    error = call.error
  }
}
