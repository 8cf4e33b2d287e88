import EngramStore
import Foundation

/// Writes reminders and events as one iCalendar (RFC 5545) calendar: events as VEVENT,
/// reminders as VTODO with DUE and a display alarm at the due time. Times are UTC, lines
/// end with CRLF and are folded at 75 octets, TEXT values are escaped.
enum ICalendarWriter {
  /// How long an event lasts when its end is not stored.
  static let defaultEventLength: TimeInterval = 3600

  /// The UID of `item` in this memory's calendar: the UID it was imported with, else
  /// `engram-<kind>-<id>@<calendarID>`.
  static func uid(for item: AgentItem, calendarID: String) -> String {
    item.calendarUID ?? "engram-\(item.kind.rawValue)-\(item.id ?? 0)@\(calendarID)"
  }

  /// The id an Engram-made UID names when it is of the memory `calendarID` (`kind`, `id`), else nil.
  static func ownItem(uid: String, calendarID: String) -> (kind: AgentItemKind, id: Int64)? {
    let suffix = "@" + calendarID
    guard uid.hasPrefix("engram-"), uid.hasSuffix(suffix) else { return nil }
    let middle = uid.dropFirst("engram-".count).dropLast(suffix.count)
    guard let dash = middle.lastIndex(of: "-"), let kind = AgentItemKind(rawValue: String(middle[..<dash])),
      let id = Int64(middle[middle.index(after: dash)...]), id > 0
    else { return nil }
    return (kind, id)
  }

  /// The calendar holding `items` (events without a time and notes are left out).
  static func calendar(items: [AgentItem], calendarID: String, stamp: Date) -> String {
    var text = ""
    func line(_ content: String) { text += ICalendarSyntax.fold(content) }
    func textLine(_ name: String, _ value: String) { line(name + ":" + ICalendarSyntax.escapeText(value)) }
    line("BEGIN:VCALENDAR")
    line("VERSION:2.0")
    line("PRODID:-//Engram//Engram reminders and events//EN")
    line("CALSCALE:GREGORIAN")
    line("X-WR-CALNAME:Engram")
    let dtstamp = utc(stamp)
    for item in items {
      switch item.kind {
      case .event:
        guard let start = item.dueAt else { continue }
        line("BEGIN:VEVENT")
        textLine("UID", uid(for: item, calendarID: calendarID))
        line("DTSTAMP:" + dtstamp)
        line("CREATED:" + utc(item.createdAt))
        line("DTSTART:" + utc(start))
        let end =
          item.endsAt.flatMap { $0 > start ? $0 : nil } ?? start.addingTimeInterval(defaultEventLength)
        line("DTEND:" + utc(end))
        textLine("SUMMARY", item.title)
        if let body = item.body, !body.isEmpty { textLine("DESCRIPTION", body) }
        if let rule = item.recurrence, !rule.isEmpty { line("RRULE:" + rule) }
        line("END:VEVENT")
      case .reminder:
        line("BEGIN:VTODO")
        textLine("UID", uid(for: item, calendarID: calendarID))
        line("DTSTAMP:" + dtstamp)
        line("CREATED:" + utc(item.createdAt))
        if let due = item.dueAt { line("DUE:" + utc(due)) }
        textLine("SUMMARY", item.title)
        if let body = item.body, !body.isEmpty { textLine("DESCRIPTION", body) }
        line("STATUS:" + (item.done ? "COMPLETED" : "NEEDS-ACTION"))
        if let due = item.dueAt {
          line("BEGIN:VALARM")
          line("ACTION:DISPLAY")
          textLine("DESCRIPTION", item.title)
          line("TRIGGER;VALUE=DATE-TIME:" + utc(due))
          line("END:VALARM")
        }
        line("END:VTODO")
      case .note:
        continue
      }
    }
    line("END:VCALENDAR")
    return text
  }

  /// `20250612T070000Z` (whole seconds, rounded down).
  static func utc(_ date: Date) -> String {
    var seconds = time_t(floor(date.timeIntervalSince1970))
    var parts = tm()
    gmtime_r(&seconds, &parts)
    return String(
      format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
      Int(parts.tm_mday),
      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
  }
}
