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
  /// What the item is.
  public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A reminder.
    case reminder
    /// A calendar event.
    case event
    /// A note.
    case note
  }

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

  init(_ item: AgentItem) {
    id = item.id ?? 0
    kind = Kind(rawValue: item.kind.rawValue) ?? .note
    title = item.title
    body = item.body
    due = item.dueAt.map(Timestamp.date)
    createdAt = Timestamp.date(item.createdAt)
    done = item.done
  }
}

/// One step an agent ran, as stored in `traces`.
public struct AgentTraceRecord: Sendable, Hashable {
  /// How the step ended.
  public enum Status: String, Sendable, Hashable, CaseIterable, Codable {
    /// It succeeded.
    case ok
    /// It failed.
    case failed
    /// It was cancelled (by the user or a newer request).
    case cancelled
    /// It ran out of time.
    case timeout
    /// It waits for the user's confirmation.
    case pending
  }

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
      status: Status(rawValue: trace.status.rawValue) ?? .failed,
      startedAt: Timestamp.date(trace.startedAt), durationMs: trace.durationMs, error: trace.error)
  }
}

/// A side effect waiting for (or past) the user's confirmation, as stored in `pending_calls`.
public struct PendingCallRecord: Sendable, Hashable {
  /// Where the call stands.
  public enum Status: String, Sendable, Hashable, CaseIterable, Codable {
    /// Waiting for the user.
    case pending
    /// Confirmed, not yet finished.
    case confirmed
    /// Run successfully.
    case executed
    /// Declined, replaced by a newer request, or abandoned at a restart.
    case cancelled
    /// Run and failed.
    case failed
  }

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
    status = Status(rawValue: call.status.rawValue) ?? .cancelled
    createdAt = Timestamp.date(call.createdAt)
    updatedAt = Timestamp.date(call.updatedAt)
    error = call.error
  }
}

extension MemoryEngine {
  // MARK: - Agent items

  /// Stores a reminder, event or note; returns its id.
  /// - Throws: `AgentRecordError.emptyField("title")` for a blank title (nothing stored); store errors.
  @discardableResult
  public func addAgentItem(
    kind: AgentItemRecord.Kind, title: String, body: String? = nil, due: Date? = nil, at date: Date = Date()
  ) throws -> Int64 {
    try checkOpen()
    guard !Self.isBlank(title) else { throw AgentRecordError.emptyField("title") }
    let item = AgentItem(
      kind: AgentItemKind(rawValue: kind.rawValue)!, title: title, body: body,
      dueAt: due.map(Timestamp.milliseconds), createdAt: Timestamp.milliseconds(date))
    return try database.write { try $0.insert(item) }
  }

  /// The agent item with `id`, or nil.
  public func agentItem(_ id: Int64) throws -> AgentItemRecord? {
    try checkOpen()
    return try database.read { try $0.fetch(AgentItem.self, id: id) }.map(AgentItemRecord.init)
  }

  /// Agent items (of `kind` when given), in id order (oldest first), at most `limit`.
  public func agentItems(kind: AgentItemRecord.Kind? = nil, limit: Int = 100) throws -> [AgentItemRecord] {
    try checkOpen()
    return try database.read { connection in
      let statement = try connection.cachedStatement(
        """
        SELECT id, kind, title, body, due_at, created_at, done FROM agent_items
        WHERE (?1 IS NULL OR kind = ?1) ORDER BY id LIMIT ?2
        """)
      try statement.bind(kind?.rawValue, at: 1)
      try statement.bind(max(0, limit), at: 2)
      return try statement.map { try AgentItem(row: $0) }
    }.map(AgentItemRecord.init)
  }

  /// Marks an agent item done or not done.
  /// - Throws: `AgentRecordError.notFound` when no item has `id`.
  public func setAgentItemDone(_ id: Int64, _ done: Bool = true) throws {
    try checkOpen()
    try database.write { connection in
      guard var item = try connection.fetch(AgentItem.self, id: id) else {
        throw AgentRecordError.notFound(table: AgentItem.tableName, id: id)
      }
      item.done = done
      try connection.update(item)
    }
  }

  // MARK: - Traces

  /// Stores one agent step; returns its row id.
  /// - Throws: `AgentRecordError` for a blank execution id, a negative step, arguments that are
  ///   not a JSON object, or a negative or non-finite duration (nothing stored); store errors.
  @discardableResult
  public func recordTrace(_ trace: AgentTraceRecord) throws -> Int64 {
    try checkOpen()
    guard !Self.isBlank(trace.executionID) else { throw AgentRecordError.emptyField("executionID") }
    guard trace.step >= 0 else { throw AgentRecordError.invalidStep(trace.step) }
    guard trace.durationMs.isFinite, trace.durationMs >= 0 else {
      throw AgentRecordError.invalidDuration(trace.durationMs)
    }
    try Self.checkJSONObject(trace.arguments, field: "arguments")
    let row = Trace(
      executionID: trace.executionID, step: trace.step, skillID: trace.skillID, arguments: trace.arguments,
      result: trace.result, status: TraceStatus(rawValue: trace.status.rawValue)!,
      startedAt: Timestamp.milliseconds(trace.startedAt), durationMs: trace.durationMs, error: trace.error)
    return try database.write { try $0.insert(row) }
  }

  /// The steps of one execution, in step order.
  public func traces(executionID: String) throws -> [AgentTraceRecord] {
    try checkOpen()
    return try database.read { try $0.traces(executionID: executionID) }.map(AgentTraceRecord.init)
  }

  /// The most recent trace rows, newest first.
  public func recentTraces(limit: Int = 50) throws -> [AgentTraceRecord] {
    try checkOpen()
    return try database.read { connection in
      let statement = try connection.cachedStatement(
        """
        SELECT id, execution_id, step, skill_id, arguments, result, status, started_at, duration_ms, error
        FROM traces ORDER BY id DESC LIMIT ?1
        """)
      try statement.bind(max(0, limit), at: 1)
      return try statement.map { try Trace(row: $0) }
    }.map(AgentTraceRecord.init)
  }

  // MARK: - Pending calls

  /// Persists a side effect waiting for confirmation (status `pending`); returns its id.
  /// - Throws: `AgentRecordError` for blank ids or summary, a step below 1, or arguments that
  ///   are not a JSON object (nothing stored); store errors.
  @discardableResult
  public func addPendingCall(
    executionID: String, step: Int, skillID: String, arguments: String, summary: String,
    at date: Date = Date()
  ) throws -> Int64 {
    try checkOpen()
    for (field, value) in [("executionID", executionID), ("skillID", skillID), ("summary", summary)]
    where Self.isBlank(value) {
      throw AgentRecordError.emptyField(field)
    }
    guard step >= 1 else { throw AgentRecordError.invalidStep(step) }
    try Self.checkJSONObject(arguments, field: "arguments")
    let call = PendingCall(
      executionID: executionID, step: step, skillID: skillID, arguments: arguments, summary: summary,
      createdAt: Timestamp.milliseconds(date))
    return try database.write { try $0.insert(call) }
  }

  /// The pending call with `id`, or nil.
  public func pendingCall(_ id: Int64) throws -> PendingCallRecord? {
    try checkOpen()
    return try database.read { try $0.fetch(PendingCall.self, id: id) }.map(PendingCallRecord.init)
  }

  /// Pending calls with `status`, oldest first.
  public func pendingCalls(status: PendingCallRecord.Status) throws -> [PendingCallRecord] {
    try checkOpen()
    let stored = PendingCallStatus(rawValue: status.rawValue)!
    return try database.read { try $0.pendingCalls(status: stored) }.map(PendingCallRecord.init)
  }

  /// Moves pending call `id` to `status` (with `error` when it failed).
  /// - Throws: `AgentRecordError.notFound` when no call has `id`.
  public func setPendingCallStatus(
    _ id: Int64, to status: PendingCallRecord.Status, error: String? = nil, at date: Date = Date()
  ) throws {
    try checkOpen()
    let stored = PendingCallStatus(rawValue: status.rawValue)!
    try database.write { connection in
      guard try connection.fetch(PendingCall.self, id: id) != nil else {
        throw AgentRecordError.notFound(table: PendingCall.tableName, id: id)
      }
      try connection.setPendingCallStatus(id, to: stored, error: error, at: Timestamp.milliseconds(date))
    }
  }

  /// At agent start: cancels every call still `pending` or `confirmed` (a confirmed call whose
  /// outcome was never recorded is not re-run blindly) and returns them as they now are.
  public func cancelUnfinishedPendingCalls(at date: Date = Date()) throws -> [PendingCallRecord] {
    try checkOpen()
    let time = Timestamp.milliseconds(date)
    return try database.write { try $0.markUnfinishedPendingCallsCancelled(at: time) }.map(
      PendingCallRecord.init)
  }

  /// Confirms pending call `id` if it still waits (`pending` → `confirmed`, atomically);
  /// false when it was decided meanwhile (cancelled by another process, say).
  /// - Throws: store errors.
  public func claimPendingCall(_ id: Int64, at date: Date = Date()) throws -> Bool {
    try checkOpen()
    let time = Timestamp.milliseconds(date)
    return try database.write { try $0.transitionPendingCall(id, from: [.pending], to: .confirmed, at: time) }
  }

  /// Cancels those of `ids` that are still `pending` or `confirmed`; returns them as they now are.
  /// - Throws: store errors; nothing changes then.
  public func cancelUnfinishedPendingCalls(_ ids: [Int64], at date: Date = Date()) throws
    -> [PendingCallRecord]
  {
    try checkOpen()
    let time = Timestamp.milliseconds(date)
    return try database.write { connection in
      var cancelled: [PendingCall] = []
      for id in ids
      where try connection.transitionPendingCall(id, from: [.pending, .confirmed], to: .cancelled, at: time) {
        if let call = try connection.fetch(PendingCall.self, id: id) { cancelled.append(call) }
      }
      return cancelled
    }.map(PendingCallRecord.init)
  }

  // MARK: - Helpers

  /// Whether `text` is empty or only `CharacterSet.whitespacesAndNewlines`, without
  /// building a trimmed copy (ASCII, the common case, skips the set lookup).
  static func isBlank(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { scalar in
      scalar.isASCII
        ? scalar == " " || (0x09...0x0D).contains(scalar.value)
        : CharacterSet.whitespacesAndNewlines.contains(scalar)
    }
  }

  static func checkJSONObject(_ text: String, field: String) throws(AgentRecordError) {
    guard case .object? = try? JSONValue.parse(text) else { throw .invalidJSON(field: field) }
  }
}
