import EngramCore
import EngramStore
import Foundation

/// Writes reminders and events as one iCalendar (RFC 5545) calendar: events as VEVENT,
/// reminders as VTODO with DUE and a display alarm at the due time. Times are written as they
/// came (UTC, a date, floating, or with their TZID), lines end with CRLF and are folded at 75
/// octets, TEXT values are escaped.
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

  /// The calendar holding `items` (events without a time and notes are left out, and so are
  /// items whose time a file cannot hold: before year 1 or after 9999, on their own wall clock).
  static func calendar(items: [AgentItem], calendarID: String, stamp: Date) -> String {
    var text = ""
    func line(_ content: String) { text += ICalendarSyntax.fold(content) }
    func textLine(_ name: String, _ value: String) { line(name + ":" + ICalendarSyntax.escapeText(value)) }
    line("BEGIN:VCALENDAR")
    line("VERSION:2.0")
    line("PRODID:-//Engram//Engram reminders and events//EN")
    line("CALSCALE:GREGORIAN")
    line("X-WR-CALNAME:Engram")
    let written = items.filter(isWritable)
    // A zone that is a fixed offset (not an IANA name a reader knows) gets its VTIMEZONE.
    var offsets: [String: Int] = [:]
    for item in written where item.timeForm == .zoned {
      if let name = item.timeZone, let offset = CalendarZone.fixedOffset(name) { offsets[name] = offset }
    }
    for (name, offset) in offsets.sorted(by: { $0.key < $1.key }) {
      let written = offsetText(offset)
      line("BEGIN:VTIMEZONE")
      textLine("TZID", name)
      line("BEGIN:STANDARD")
      line("DTSTART:19700101T000000")
      line("TZOFFSETFROM:" + written)
      line("TZOFFSETTO:" + written)
      line("END:STANDARD")
      line("END:VTIMEZONE")
    }
    let dtstamp = utc(stamp)
    for item in written {
      switch item.kind {
      case .event:
        guard let start = item.dueAt else { continue }
        line("BEGIN:VEVENT")
        textLine("UID", uid(for: item, calendarID: calendarID))
        line("DTSTAMP:" + dtstamp)
        line("CREATED:" + utc(item.createdAt))
        line(timeProperty("DTSTART", start, of: item))
        if let end = item.endsAt, end >= start {
          line(timeProperty("DTEND", end, of: item))
        } else if item.timeForm != .date,
          wallDay(start.addingTimeInterval(defaultEventLength), of: item) <= WallClock.lastDay
        {
          // An all-day event without an end lasts its day; a timed one an hour (left out
          // where that hour would fall after year 9999).
          line(timeProperty("DTEND", start.addingTimeInterval(defaultEventLength), of: item))
        }
        textLine("SUMMARY", item.title)
        if let body = item.body, !body.isEmpty { textLine("DESCRIPTION", body) }
        if let rule = item.recurrence, !rule.isEmpty { line("RRULE:" + rule) }
        line("END:VEVENT")
      case .reminder:
        line("BEGIN:VTODO")
        textLine("UID", uid(for: item, calendarID: calendarID))
        line("DTSTAMP:" + dtstamp)
        line("CREATED:" + utc(item.createdAt))
        if let due = item.dueAt { line(timeProperty("DUE", due, of: item)) }
        textLine("SUMMARY", item.title)
        if let body = item.body, !body.isEmpty { textLine("DESCRIPTION", body) }
        line("STATUS:" + (item.done ? "COMPLETED" : "NEEDS-ACTION"))
        if let due = item.dueAt {
          line("BEGIN:VALARM")
          line("ACTION:DISPLAY")
          textLine("DESCRIPTION", item.title)
          // An absolute trigger is always UTC (RFC 5545 3.8.6.3).
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

  /// Whether a file can hold the item's times (and its alarm's, in UTC): years 1 to 9999.
  static func isWritable(_ item: AgentItem) -> Bool {
    guard item.kind != .note else { return false }
    for date in [item.dueAt, item.endsAt].compactMap({ $0 }) {
      let day = wallDay(date, of: item)
      let utcDay = CivilCalendar.floorDivision(Int64(floor(date.timeIntervalSince1970)), 86_400)
      guard (WallClock.firstDay...WallClock.lastDay).contains(day),
        (WallClock.firstDay...WallClock.lastDay).contains(utcDay)
      else { return false }
    }
    return (WallClock.firstDay...WallClock.lastDay).contains(
      CivilCalendar.floorDivision(Int64(floor(item.createdAt.timeIntervalSince1970)), 86_400))
  }

  /// The wall-clock day of `date` in the item's zone.
  static func wallDay(_ date: Date, of item: AgentItem) -> Int64 {
    wall(date, in: CalendarZone.zone(of: item)).day
  }

  /// `date` on the wall clock of `zone` (whole seconds, rounded down).
  static func wall(_ date: Date, in zone: TimeZone) -> WallClock {
    WallClock(Int64(floor(date.timeIntervalSince1970)) + Int64(zone.secondsFromGMT(for: date)))
  }

  /// `NAME:20250612T070000Z`, `NAME;VALUE=DATE:20250612`, `NAME:20250612T150000` (floating) or
  /// `NAME;TZID=Europe/Paris:20250612T150000`, as the item's time came.
  static func timeProperty(_ name: String, _ date: Date, of item: AgentItem) -> String {
    let zone = CalendarZone.zone(of: item)
    switch item.timeForm {
    case .utc: return name + ":" + utc(date)
    case .date: return name + ";VALUE=DATE:" + WallClock.dateText(wall(date, in: zone).day)
    case .floating: return name + ":" + wall(date, in: zone).text
    case .zoned:
      guard let tzid = item.timeZone, CalendarZone.named(tzid) != nil else { return name + ":" + utc(date) }
      return name + ";TZID=" + parameterValue(tzid) + ":" + wall(date, in: zone).text
    }
  }

  /// A parameter value, quoted when it holds `:` `;` or `,`.
  static func parameterValue(_ value: String) -> String {
    value.contains(where: { ":;,".contains($0) })
      ? "\"" + value.replacingOccurrences(of: "\"", with: "") + "\"" : value
  }

  /// `+0530` for 19,800 seconds.
  static func offsetText(_ seconds: Int) -> String {
    let minutes = abs(seconds) / 60
    return String(format: "%@%02d%02d", seconds < 0 ? "-" : "+", minutes / 60, minutes % 60)
  }

  /// `20250612T070000Z` (whole seconds, rounded down).
  static func utc(_ date: Date) -> String {
    WallClock(Int64(floor(date.timeIntervalSince1970))).text + "Z"
  }
}
