import Foundation

/// What an agent item is.
public enum AgentItemKind: String, Sendable, Hashable, CaseIterable, Codable {
  /// A reminder.
  case reminder
  /// A calendar event.
  case event
  /// A note.
  case note
}

/// How an item's time was written in the iCalendar file it came from (`agent_items.time_form`),
/// so an export writes it back the same way (docs/icalendar.md).
public enum AgentItemTimeForm: String, Sendable, Hashable, CaseIterable, Codable {
  /// An instant (written in UTC): every item made here, and `Z` times.
  case utc
  /// An all-day item (`VALUE=DATE`): its day at 09:00 in ``AgentItem/timeZone``.
  case date
  /// A wall-clock time without a zone, placed in ``AgentItem/timeZone`` (the importing user's).
  case floating
  /// A time with a `TZID`: ``AgentItem/timeZone`` is the zone it named.
  case zoned
}

/// What a reminder's condition came to when it came due (`agent_items.condition_outcome`, a
/// JSON object): whether it fired, and the sentence that says why.
public struct AgentItemConditionOutcome: Sendable, Hashable, Codable {
  /// What the check found.
  public enum State: String, Sendable, Hashable, Codable, CaseIterable {
    /// The condition held: the reminder fired.
    case held
    /// It did not: the reminder was delivered without firing.
    case failed
    /// It could not be checked (the weather service was down): the reminder fired anyway,
    /// with a note that says so.
    case unchecked
  }

  /// What the check found.
  public var state: State
  /// Why, as a sentence fragment ("the forecast for Saturday in Oslo says snow").
  public var reason: String

  /// Creates an outcome.
  public init(_ state: State, reason: String) {
    self.state = state
    self.reason = reason
  }

  /// Whether the reminder fired (held, or could not be checked).
  public var fired: Bool { state != .failed }

  /// The JSON text stored in the column.
  public var storedText: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding two strings cannot fail.
    return (try? encoder.encode(self)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
  }

  /// Reads the column's JSON text; nil when it is not an outcome.
  public init?(storedText: String) {
    guard let value = try? JSONDecoder().decode(Self.self, from: Data(storedText.utf8)) else { return nil }
    self = value
  }
}

/// A reminder, event or note an agent skill created (`agent_items`).
public struct AgentItem: StoredRecord, Hashable {
  /// The row id; nil before insertion.
  public var id: Int64?
  /// What it is.
  public var kind: AgentItemKind
  /// Its title.
  public var title: String
  /// Its body.
  public var body: String?
  /// When it is due.
  public var dueAt: Date?
  /// Creation.
  public var createdAt: Date
  /// Whether it is done.
  public var done: Bool
  /// When a reminder was delivered (shown after it came due); nil until then.
  public var deliveredAt: Date?
  /// When an event ends, when known (nil: one hour after `dueAt`).
  public var endsAt: Date?
  /// The iCalendar UID the item was imported with (nil for items made here).
  public var calendarUID: String?
  /// An imported iCalendar recurrence rule (the RRULE value), kept as text; listings expand it
  /// (`Recurrence`).
  public var recurrence: String?
  /// How its times were written where it came from (`.utc` for items made here).
  public var timeForm: AgentItemTimeForm
  /// The zone its wall-clock times are in: the TZID of a `.zoned` item, the importing user's
  /// zone for `.date` and `.floating`; nil for `.utc`. An IANA identifier or a fixed offset
  /// (`GMT+0530`).
  public var timeZone: String?
  /// The condition a reminder fires under, as the agent stored it (a JSON object the store
  /// keeps as text: docs/agenda.md "Conditional reminders"); nil for none.
  public var condition: String?
  /// What the condition came to when the reminder came due; nil before (or without a condition).
  public var conditionOutcome: AgentItemConditionOutcome?

  /// Creates an item.
  public init(
    id: Int64? = nil, kind: AgentItemKind, title: String, body: String? = nil, dueAt: Date? = nil,
    createdAt: Date, done: Bool = false, deliveredAt: Date? = nil, endsAt: Date? = nil,
    calendarUID: String? = nil, recurrence: String? = nil, timeForm: AgentItemTimeForm = .utc,
    timeZone: String? = nil, condition: String? = nil, conditionOutcome: AgentItemConditionOutcome? = nil
  ) {
    self.id = id
    self.kind = kind
    self.title = title
    self.body = body
    self.dueAt = dueAt
    self.createdAt = createdAt
    self.done = done
    self.deliveredAt = deliveredAt
    self.endsAt = endsAt
    self.calendarUID = calendarUID
    self.recurrence = recurrence
    self.timeForm = timeForm
    self.timeZone = timeZone
    self.condition = condition
    self.conditionOutcome = conditionOutcome
  }

  /// The table.
  public static let tableName = "agent_items"
  /// The non-id columns, in binding order.
  public static let columns = [
    "kind", "title", "body", "due_at", "created_at", "done", "delivered_at", "ends_at", "calendar_uid",
    "recurrence", "time_form", "time_zone", "condition", "condition_outcome",
  ]
  /// The column time filters apply to (the due time).
  public static var timeColumn: String? { "due_at" }

  /// Appends the non-id columns.
  public func encode(to row: inout [SQLValue]) throws {
    row += [
      SQLValue(kind), SQLValue(title), SQLValue(body), SQLValue(dueAt), SQLValue(createdAt), SQLValue(done),
      SQLValue(deliveredAt), SQLValue(endsAt), SQLValue(calendarUID), SQLValue(recurrence),
      SQLValue(timeForm), SQLValue(timeZone), SQLValue(condition), SQLValue(conditionOutcome?.storedText),
    ]
  }

  /// Reads a row (id first).
  public init(row: some Row) throws {
    id = row.int64(at: 0)
    kind = try row.enumValue(AgentItemKind.self, at: 1, table: "agent_items", column: "kind")
    title = row.string(at: 2)
    body = row.optionalString(at: 3)
    dueAt = row.optionalDate(at: 4)
    createdAt = row.date(at: 5)
    done = row.bool(at: 6)
    deliveredAt = row.optionalDate(at: 7)
    endsAt = row.optionalDate(at: 8)
    calendarUID = row.optionalString(at: 9)
    recurrence = row.optionalString(at: 10)
    timeForm = try row.enumValue(AgentItemTimeForm.self, at: 11, table: "agent_items", column: "time_form")
    timeZone = row.optionalString(at: 12)
    condition = row.optionalString(at: 13)
    conditionOutcome = try row.optionalString(at: 14).map { text in
      guard let outcome = AgentItemConditionOutcome(storedText: text) else {
        throw StoreError.invalidColumnValue(table: "agent_items", column: "condition_outcome", value: text)
      }
      return outcome
    }
  }
}

extension RecordQueries {
  /// Agent items (of `kind` when given), in id order (oldest first), at most `limit`.
  public func agentItems(kind: AgentItemKind?, limit: Int) throws -> [AgentItem] {
    try select(
      RecordQuery<AgentItem>(
        kind.map { [.init("kind", SQLValue($0))] } ?? [], order: [.init("id")], limit: limit))
  }

  /// The item imported with the iCalendar UID `uid`, or nil.
  public func agentItem(calendarUID uid: String) throws -> AgentItem? {
    try select(RecordQuery<AgentItem>([.init("calendar_uid", .text(uid))])).first
  }
}
