import EngramStore
import EngramVectors
import Foundation

/// What `importCalendar` did.
public struct CalendarImportSummary: Equatable, Sendable {
  /// Items added.
  public var added = 0
  /// Items already stored (by UID) whose title, body, times or status the file changed.
  public var updated = 0
  /// Items already stored exactly as the file has them.
  public var unchanged = 0
  /// Components left out: cancelled ones, and overrides of one occurrence of a recurring item.
  public var skipped = 0

  /// An empty summary.
  public init() {}
}

/// What `exportCalendar` wrote.
public struct CalendarExportSummary: Equatable, Sendable {
  /// VEVENTs written.
  public var events = 0
  /// VTODOs written.
  public var reminders = 0

  /// An empty summary.
  public init() {}
}

/// Reminders and events in and out as iCalendar (RFC 5545): see `docs/icalendar.md`.
struct CalendarExchange: Sendable {
  let open: OpenState
  let store: any MemoryStore

  /// The memory's calendar text.
  func calendarText(stamp: Date) throws -> (text: String, summary: CalendarExportSummary) {
    try open.check()
    return try Self.calendarText(store: store, stamp: stamp)
  }

  /// Reads `data` (an iCalendar file) and stores its events and reminders, all or nothing.
  func importCalendar(_ data: Data, timeZone: TimeZone, at now: Date) throws -> CalendarImportSummary {
    try open.check()
    let calendars = try ICalendarSyntax.parse(data)
    let (entries, skipped) = try ICalendarReader(timeZone: timeZone).entries(of: calendars)
    var summary = CalendarImportSummary()
    summary.skipped = skipped
    try store.writeTransaction { session in
      let calendarID = try Self.calendarID(session)
      for entry in entries {
        if var existing = try Self.existing(entry, session: session, calendarID: calendarID) {
          if Self.apply(entry, to: &existing) {
            try session.update(existing)
            summary.updated += 1
          } else {
            summary.unchanged += 1
          }
          continue
        }
        let item = AgentItem(
          kind: entry.kind, title: entry.title, body: entry.body, dueAt: entry.start, createdAt: now,
          done: entry.done, endsAt: entry.end, calendarUID: entry.uid, recurrence: entry.recurrence,
          timeForm: entry.timeForm, timeZone: entry.timeZone)
        _ = try session.insert(item)
        summary.added += 1
      }
    }
    return summary
  }

  /// The stored item `entry` is: the one imported with its UID, or (an Engram UID of this
  /// memory) the item it was exported from.
  static func existing(
    _ entry: CalendarEntry, session: any AgentRecordQueries & RecordQueries, calendarID: String
  ) throws
    -> AgentItem?
  {
    if let item = try session.agentItem(calendarUID: entry.uid) { return item }
    guard let own = ICalendarWriter.ownItem(uid: entry.uid, calendarID: calendarID), own.kind == entry.kind,
      let item = try session.fetch(AgentItem.self, id: own.id), item.kind == own.kind, item.calendarUID == nil
    else { return nil }
    return item
  }

  /// Writes what `entry` says over `item`; returns whether anything changed. Times compare in
  /// whole seconds (the file's precision), and an event's unstored end is its default one
  /// (none for an all-day event: one day).
  static func apply(_ entry: CalendarEntry, to item: inout AgentItem) -> Bool {
    func second(_ date: Date?) -> Int64? { date.map { Int64(floor($0.timeIntervalSince1970)) } }
    var changed = false
    if item.title != entry.title {
      item.title = entry.title
      changed = true
    }
    if (item.body ?? "") != (entry.body ?? "") {
      item.body = entry.body
      changed = true
    }
    if second(item.dueAt) != second(entry.start) {
      item.dueAt = entry.start
      item.deliveredAt = nil
      changed = true
    }
    if item.kind == .event {
      let defaultEnd =
        entry.timeForm == .date
        ? nil : item.dueAt.map { $0.addingTimeInterval(ICalendarWriter.defaultEventLength) }
      let storedEnd = item.endsAt ?? defaultEnd
      let newEnd = entry.end ?? defaultEnd
      if second(storedEnd) != second(newEnd) {
        item.endsAt = entry.end
        changed = true
      }
    }
    if item.done != entry.done {
      item.done = entry.done
      changed = true
    }
    if item.timeForm != entry.timeForm || item.timeZone != entry.timeZone {
      item.timeForm = entry.timeForm
      item.timeZone = entry.timeZone
      changed = true
    }
    if (item.recurrence ?? "") != (entry.recurrence ?? "") {
      item.recurrence = entry.recurrence
      changed = true
    }
    return changed
  }

  /// The memory's calendar id (its `database_id`, lower-cased), the domain of Engram's UIDs.
  static func calendarID(_ session: any MetaQueries) throws -> String {
    let id = try session.meta(StoreMetaKey.databaseID)?.lowercased() ?? ""
    return id.isEmpty ? "engram.local" : id
  }

  /// The calendar of the memory in `store` (the store's user): one read transaction.
  static func calendarText(store: any MemoryStore, stamp: Date) throws -> (
    text: String, summary: CalendarExportSummary
  ) {
    try store.readTransaction { session in
      let calendarID = try calendarID(session)
      // Items whose times a file cannot hold (past year 9999) are left out, as the writer does.
      let events = try session.agentItems(kind: .event, limit: Int(Int32.max)).filter {
        $0.dueAt != nil && ICalendarWriter.isWritable($0)
      }
      let reminders = try session.agentItems(kind: .reminder, limit: Int(Int32.max)).filter(
        ICalendarWriter.isWritable)
      var summary = CalendarExportSummary()
      summary.events = events.count
      summary.reminders = reminders.count
      return (
        ICalendarWriter.calendar(items: events + reminders, calendarID: calendarID, stamp: stamp), summary
      )
    }
  }

  /// The calendar of the memory at `location`, opened read-only.
  static func calendarText(databaseAt location: String, user: String, stamp: Date) throws -> (
    text: String, summary: CalendarExportSummary
  ) {
    let store = try Exporter.openReadOnly(location, user: user)
    defer { store.close() }
    return try calendarText(store: store, stamp: stamp)
  }

  /// Writes the calendar of the memory at `location` (opened read-only) to `file`, privately
  /// (mode 0600) beside it, renamed into place when complete.
  static func export(databaseAt location: String, user: String, toFile path: String, stamp: Date) throws
    -> CalendarExportSummary
  {
    let (text, summary) = try calendarText(databaseAt: location, user: user, stamp: stamp)
    let file = try SecureTemporaryFile(beside: path)
    try Array(text.utf8).withUnsafeBytes { try file.write($0) }
    try file.commit()
    return summary
  }
}
