import EngramCore
import EngramStore
import Foundation

/// The agent's own records (`engine.agentRecords`): its agenda (reminders, events and notes),
/// traces, pending calls, routines and skill state.
///
/// Every method is async and runs its SQLite work off the cooperative thread pool.
public struct AgentRecords: Sendable {
  let open: OpenState
  /// The agent-record and record queries of the store: all this type reads and writes.
  let store: StoreRole<any AgentRecordQueries & RecordQueries>
  /// Delivers due reminders (``deliverDueReminders(at:limit:)`` forwards to it).
  let delivery: ReminderDelivery

  // MARK: - Agent items

  /// Stores a reminder, event or note; returns its id.
  /// A reminder may carry a `condition` (the agent's JSON text of it): it is checked when the
  /// reminder comes due (``ReminderDelivery``).
  /// - Throws: `AgentRecordError.emptyField("title")` for a blank title,
  ///   `.invalidJSON(field: "condition")` for a condition that is not a JSON object,
  ///   `.misplacedCondition` for one on an item that is not a dated reminder (nothing stored);
  ///   store errors.
  @discardableResult
  public func addItem(
    kind: AgentItemKind, title: String, body: String? = nil, due: Date? = nil, at date: Date = Date(),
    condition: String? = nil
  ) async throws -> Int64 {
    try open.check()
    guard !TextChecks.isBlank(title) else { throw AgentRecordError.emptyField("title") }
    if let condition {
      guard kind == .reminder, due != nil else { throw AgentRecordError.misplacedCondition(kind: kind) }
      try Self.checkJSONObject(condition, field: "condition")
    }
    let item = AgentItem(
      kind: kind, title: title, body: body,
      dueAt: due, createdAt: date, condition: condition)
    return try await store.writeOffPool(open) { try $0.insert(item) }
  }

  /// The agent item with `id`, or nil.
  public func item(_ id: Int64) async throws -> AgentItem? {
    try await store.readOffPool(open) { try $0.fetch(AgentItem.self, id: id) }
  }

  /// Agent items (of `kind` when given), in id order (oldest first), at most `limit`.
  public func items(kind: AgentItemKind? = nil, limit: Int = 100) async throws -> [AgentItem] {
    try await store.readOffPool(open) {
      try $0.agentItems(kind: kind, limit: max(0, limit))
    }
  }

  /// Reminders or events (`kind`) due in `from..<to` (either end open), soonest first, at most
  /// `limit`; with `undeliveredOnly`, reminders never delivered. Undated items are left out.
  /// A repeating item (`recurrence`, an RRULE) appears at each occurrence in the range (from
  /// a day ago when `from` is nil, for a year when `to` is).
  public func agenda(
    kind: AgentItemKind, from: Date? = nil, to: Date? = nil, undeliveredOnly: Bool = false,
    limit: Int = 1000
  ) async throws -> [AgentItem] {
    try open.check()
    guard !undeliveredOnly else {
      return try await store.readOffPool(open) {
        try $0.agentItems(kind: kind, dueFrom: from, to: to, undeliveredOnly: true, limit: max(0, limit))
      }
    }
    // Repeating items (an imported RRULE) are listed at each occurrence in the range, those
    // that began before it too; each occurrence is the item (its id) at that time.
    let (repeating, items) = try await store.readOffPool(open) { session in
      let repeating = try session.agentItems(
        kind: kind, dueFrom: nil, to: to, undeliveredOnly: false, limit: 100_000
      )
      .filter { $0.recurrence != nil }
      // As many more rows as there are repeating items, so `limit` others are among them.
      let (wider, overflow) = max(0, limit).addingReportingOverflow(repeating.count)
      let items = try session.agentItems(
        kind: kind, dueFrom: from, to: to, undeliveredOnly: false, limit: overflow ? Int.max : wider)
      return (repeating, items)
    }
    guard !repeating.isEmpty else { return Array(items.prefix(max(0, limit))) }
    let repeatingIDs = Set(repeating.compactMap(\.id))
    var listed = items.filter { !repeatingIDs.contains($0.id ?? -1) }
    let lower = from ?? Date().addingTimeInterval(-86_400)
    let window = lower..<max(to ?? lower.addingTimeInterval(366 * 86_400), lower)
    for item in repeating {
      guard let start = item.dueAt, let rule = item.recurrence.flatMap(Recurrence.init) else {
        if let due = item.dueAt, from.map({ due >= $0 }) ?? true { listed.append(item) }
        continue
      }
      // On the wall clock of the item's own zone (its TZID; UTC for a UTC time).
      let zone = CalendarZone.zone(of: item)
      for date in rule.occurrences(from: start, in: window, timeZone: zone, limit: max(0, limit)) {
        var occurrence = item
        occurrence.dueAt = date
        occurrence.endsAt = item.endsAt.map { date.addingTimeInterval($0.timeIntervalSince(start)) }
        listed.append(occurrence)
      }
    }
    listed.sort { ($0.dueAt ?? .distantPast, $0.id ?? 0) < ($1.dueAt ?? .distantPast, $1.id ?? 0) }
    return Array(listed.prefix(max(0, limit)))
  }

  /// Delivers the reminders due at or before `now` and never delivered: claims each (marks
  /// it delivered) and returns them, soonest first. Forwards to
  /// ``ReminderDelivery/deliver(at:limit:conditions:)``.
  public func deliverDueReminders(at now: Date = Date(), limit: Int = 1000) async throws -> [AgentItem] {
    try await delivery.deliver(at: now, limit: limit)
  }

  /// Changes an item's title and/or due time; a reminder moved to a new time is delivered
  /// again when that time comes. Returns the item as it now is.
  /// - Throws: `AgentRecordError.notFound` when no item has `id`, `.emptyField("title")` for a
  ///   blank title (nothing changes); store errors.
  @discardableResult
  public func updateItem(_ id: Int64, title: String? = nil, due: Date? = nil) async throws -> AgentItem {
    try open.check()
    if let title, TextChecks.isBlank(title) { throw AgentRecordError.emptyField("title") }
    return try await store.writeOffPool(open) { connection in
      guard var item = try connection.fetch(AgentItem.self, id: id) else {
        throw AgentRecordError.notFound(table: AgentItem.tableName, id: id)
      }
      if let title { item.title = title }
      if let due, due != item.dueAt {
        item.dueAt = due
        item.deliveredAt = nil
        item.conditionOutcome = nil
      }
      try connection.update(item)
      return item
    }
  }

  /// Deletes the item with `id` (a cancelled reminder or event).
  /// - Throws: `AgentRecordError.notFound` when no item has `id`; store errors.
  public func deleteItem(_ id: Int64) async throws {
    try await store.writeOffPool(open) { connection in
      guard try connection.delete(AgentItem.self, id: id) else {
        throw AgentRecordError.notFound(table: AgentItem.tableName, id: id)
      }
    }
  }

  /// Marks an agent item done or not done.
  /// - Throws: `AgentRecordError.notFound` when no item has `id`.
  public func setItemDone(_ id: Int64, _ done: Bool = true) async throws {
    try await store.writeOffPool(open) { connection in
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
  public func recordTrace(_ trace: Trace) async throws -> Int64 {
    try open.check()
    guard !TextChecks.isBlank(trace.executionID) else { throw AgentRecordError.emptyField("executionID") }
    guard trace.step >= 0 else { throw AgentRecordError.invalidStep(trace.step) }
    guard trace.durationMs.isFinite, trace.durationMs >= 0 else {
      throw AgentRecordError.invalidDuration(trace.durationMs)
    }
    try Self.checkJSONObject(trace.arguments, field: "arguments")
    var unsaved = trace
    unsaved.id = nil
    let row = unsaved
    return try await store.writeOffPool(open) { try $0.insert(row) }
  }

  /// The steps of one execution, in step order.
  public func traces(executionID: String) async throws -> [Trace] {
    try await store.readOffPool(open) { try $0.traces(executionID: executionID) }
  }

  /// The most recent trace rows, newest first.
  public func recentTraces(limit: Int = 50) async throws -> [Trace] {
    try await store.readOffPool(open) { try $0.recentTraces(limit: max(0, limit)) }
  }

  // MARK: - Pending calls

  /// Persists a side effect waiting for confirmation (status `pending`); returns its id.
  /// - Throws: `AgentRecordError` for blank ids or summary, a step below 1, or arguments that
  ///   are not a JSON object (nothing stored); store errors.
  @discardableResult
  public func addPendingCall(
    executionID: String, step: Int, skillID: String, arguments: String, summary: String,
    at date: Date = Date()
  ) async throws -> Int64 {
    try open.check()
    for (field, value) in [("executionID", executionID), ("skillID", skillID), ("summary", summary)]
    where TextChecks.isBlank(value) {
      throw AgentRecordError.emptyField(field)
    }
    guard step >= 1 else { throw AgentRecordError.invalidStep(step) }
    try Self.checkJSONObject(arguments, field: "arguments")
    let call = PendingCall(
      executionID: executionID, step: step, skillID: skillID, arguments: arguments, summary: summary,
      createdAt: date)
    return try await store.writeOffPool(open) { try $0.insert(call) }
  }

  /// The pending call with `id`, or nil.
  public func pendingCall(_ id: Int64) async throws -> PendingCall? {
    try await store.readOffPool(open) { try $0.fetch(PendingCall.self, id: id) }
  }

  /// Pending calls with `status`, oldest first.
  public func pendingCalls(status: PendingCallStatus) async throws -> [PendingCall] {
    try await store.readOffPool(open) { try $0.pendingCalls(status: status) }
  }

  /// Moves pending call `id` to `status` (with `error` when it failed).
  /// - Throws: `AgentRecordError.notFound` when no call has `id`.
  public func setPendingCallStatus(
    _ id: Int64, to status: PendingCallStatus, error: String? = nil, at date: Date = Date()
  ) async throws {
    try open.check()
    let stored = status
    try await store.writeOffPool(open) { connection in
      guard try connection.fetch(PendingCall.self, id: id) != nil else {
        throw AgentRecordError.notFound(table: PendingCall.tableName, id: id)
      }
      try connection.setPendingCallStatus(id, to: stored, error: error, at: date)
    }
  }

  /// At agent start: cancels every call still `pending` or `confirmed` (a confirmed call whose
  /// outcome was never recorded is not re-run blindly) and returns them as they now are.
  public func cancelUnfinishedPendingCalls(at date: Date = Date()) async throws -> [PendingCall] {
    try open.check()
    let time = date
    return try await store.writeOffPool(open) { try $0.markUnfinishedPendingCallsCancelled(at: time) }
  }

  /// Confirms pending call `id` if it still waits (`pending` → `confirmed`, atomically);
  /// false when it was decided meanwhile (cancelled by another process, say).
  /// - Throws: store errors.
  public func claimPendingCall(_ id: Int64, at date: Date = Date()) async throws -> Bool {
    try open.check()
    let time = date
    return try await store.writeOffPool(open) {
      try $0.transitionPendingCall(id, from: [.pending], to: .confirmed, at: time)
    }
  }

  /// Cancels those of `ids` that are still `pending` or `confirmed`; returns them as they now are.
  /// - Throws: store errors; nothing changes then.
  public func cancelUnfinishedPendingCalls(_ ids: [Int64], at date: Date = Date()) async throws
    -> [PendingCall]
  {
    try open.check()
    let time = date
    return try await store.writeOffPool(open) { connection in
      var cancelled: [PendingCall] = []
      for id in ids
      where try connection.transitionPendingCall(id, from: [.pending, .confirmed], to: .cancelled, at: time) {
        if let call = try connection.fetch(PendingCall.self, id: id) { cancelled.append(call) }
      }
      return cancelled
    }
  }

  // MARK: - Skill state

  /// The stored enabled flag of a skill (`skill_state`), or nil when never set.
  public func skillEnabled(id: String) async throws -> Bool? {
    try await store.readOffPool(open) { try $0.skillState(skillID: id)?.enabled }
  }

  /// Every stored enabled flag, by skill id, in one read (what a skill registry's store
  /// loads before it registers its skills).
  public func skillFlags() async throws -> [String: Bool] {
    try await store.readOffPool(open) { session in
      Dictionary(try session.skillStates().map { ($0.skillID, $0.enabled) }, uniquingKeysWith: { $1 })
    }
  }

  /// Stores whether a skill is enabled.
  public func setSkillEnabled(_ enabled: Bool, id: String, at date: Date = Date()) async throws {
    try await store.writeOffPool(open) {
      try $0.setSkillState(SkillState(skillID: id, enabled: enabled, updatedAt: date))
    }
  }

  // MARK: - Routines

  /// Every routine (`routines`), by name.
  public func routines() async throws -> [Routine] {
    try await store.readOffPool(open) { try $0.routines() }
  }

  /// The routine named `name` (compared as `Routine.key(_:)` folds names), or nil.
  public func routine(named name: String) async throws -> Routine? {
    try open.check()
    let key = Routine.key(name)
    return try await store.readOffPool(open) { try $0.routine(key: key) }
  }

  /// Saves `routine`, replacing one with the same name (which keeps its creation time);
  /// returns whether it replaced one.
  /// - Throws: `AgentRecordError.invalidRoutine` for an empty name or no steps; store errors.
  @discardableResult
  public func saveRoutine(_ routine: Routine) async throws -> Bool {
    try open.check()
    guard !routine.key.isEmpty else {
      throw AgentRecordError.invalidRoutine(name: routine.name, reason: .emptyName)
    }
    guard !routine.steps.isEmpty,
      routine.steps.allSatisfy({ !$0.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty })
    else { throw AgentRecordError.invalidRoutine(name: routine.name, reason: .noSteps) }
    return try await store.writeOffPool(open) { session in
      var saved = routine
      let existing = try session.routine(key: routine.key)
      if let existing { saved.createdAt = existing.createdAt }
      try session.saveRoutine(saved)
      return existing != nil
    }
  }

  /// Enables or disables the routine named `name`; returns it as it now is.
  /// - Throws: `AgentRecordError.routineNotFound`; store errors.
  @discardableResult
  public func setRoutineEnabled(_ enabled: Bool, named name: String, at date: Date = Date()) async throws
    -> Routine
  {
    try open.check()
    let key = Routine.key(name)
    return try await store.writeOffPool(open) { session in
      guard var routine = try session.routine(key: key) else {
        throw AgentRecordError.routineNotFound(name: name)
      }
      routine.enabled = enabled
      routine.updatedAt = date
      try session.saveRoutine(routine)
      return routine
    }
  }

  /// Removes the routine named `name`.
  /// - Throws: `AgentRecordError.routineNotFound`; store errors.
  public func removeRoutine(named name: String) async throws {
    try open.check()
    let key = Routine.key(name)
    try await store.writeOffPool(open) { session in
      guard try session.deleteRoutine(key: key) else { throw AgentRecordError.routineNotFound(name: name) }
    }
  }

  // MARK: - Helpers

  static func checkJSONObject(_ text: String, field: String) throws(AgentRecordError) {
    guard case .object? = try? JSONValue.parse(text) else { throw .invalidJSON(field: field) }
  }
}
