import EngramCore
import EngramStore
import Foundation

/// A reminder or event read from an iCalendar file.
public struct CalendarEntry: Equatable, Sendable {
  /// `.event` (a VEVENT) or `.reminder` (a VTODO).
  public var kind: AgentItemKind
  /// Its UID (one derived from its content when the component has none).
  public var uid: String
  /// Its SUMMARY, unescaped (`(untitled)` when it has none).
  public var title: String
  /// Its DESCRIPTION, unescaped; nil when empty.
  public var body: String?
  /// When it starts (VEVENT's DTSTART) or is due (VTODO's DUE, else DTSTART); nil for a VTODO
  /// with neither.
  public var start: Date?
  /// When an event ends (DTEND, or DTSTART + DURATION), when given and after the start.
  public var end: Date?
  /// Whether a VTODO is done (STATUS:COMPLETED or a COMPLETED time).
  public var done: Bool
  /// Its RRULE value, as written.
  public var recurrence: String?
  /// Whether its start is a date alone (an all-day event): then `start` is that day at
  /// `ICalendarReader.allDayHour` in the reader's time zone, and `end` the day after its last.
  public var allDay: Bool { timeForm == .date }
  /// How its start was written: a UTC time, a date, a floating time or a TZID time.
  public var timeForm: AgentItemTimeForm
  /// The zone its wall-clock times are in (nil for UTC): the TZID's zone, or the reader's for
  /// dates and floating times; an IANA identifier or `GMT+hhmm`.
  public var timeZone: String?
  /// The line of its `BEGIN`.
  public var line: Int
}

/// Reads the VEVENTs and VTODOs of parsed calendars as `CalendarEntry` values, resolving
/// their times: UTC (`Z`), with a `TZID` (an IANA identifier, directly or through the file's
/// `VTIMEZONE`), floating (in `timeZone`), or a date alone (at `allDayHour` in `timeZone`).
struct ICalendarReader {
  /// The hour an all-day item is placed at (the agent's default hour for a day without a time).
  static let allDayHour = 9

  /// The user's time zone: floating times and all-day dates are read in it.
  let timeZone: TimeZone

  /// What the calendars hold: the entries, and how many components were left out
  /// (cancelled ones, and overrides of one occurrence of a recurring item).
  func entries(of calendars: [ICalendarComponent]) throws(ICalendarError) -> (
    entries: [CalendarEntry], skipped: Int
  ) {
    var entries: [CalendarEntry] = []
    var skipped = 0
    for calendar in calendars {
      let zones = Zones(calendar: calendar)
      for component in calendar.components where component.name == "VEVENT" || component.name == "VTODO" {
        if component.property("RECURRENCE-ID") != nil
          || component.property("STATUS")?.value.uppercased() == "CANCELLED"
        {
          skipped += 1
          continue
        }
        entries.append(try entry(component, zones: zones))
      }
    }
    return (entries, skipped)
  }

  /// One VEVENT or VTODO.
  func entry(_ component: ICalendarComponent, zones: Zones) throws(ICalendarError) -> CalendarEntry {
    let isEvent = component.name == "VEVENT"
    let summary = component.property("SUMMARY").map { ICalendarSyntax.unescapeText($0.value) } ?? ""
    let title = summary.trimmingCharacters(in: .whitespacesAndNewlines)
    let description = component.property("DESCRIPTION").map { ICalendarSyntax.unescapeText($0.value) }
    var entry = CalendarEntry(
      kind: isEvent ? .event : .reminder, uid: "", title: title.isEmpty ? "(untitled)" : title,
      body: description?.isEmpty == false ? description : nil, start: nil, end: nil, done: false,
      recurrence: nil, timeForm: .utc, timeZone: nil, line: component.line)
    if let rule = component.property("RRULE") {
      if let reason = RecurrenceRuleCheck.problem(rule.value) {
        throw ICalendarError(line: rule.line, .invalidRecurrence(value: rule.value, reason: reason))
      }
      entry.recurrence = rule.value
    }
    if isEvent {
      guard let startProperty = component.property("DTSTART") else {
        throw ICalendarError(line: component.line, .missingProperty(property: "DTSTART", component: "VEVENT"))
      }
      let start = try time(startProperty, zones: zones)
      entry.start = start.date
      entry.timeForm = start.form
      entry.timeZone = start.zoneName
      let endProperty = component.property("DTEND")
      let durationProperty = component.property("DURATION")
      if let endProperty, durationProperty != nil {
        throw ICalendarError(line: endProperty.line, .conflictingProperties("DTEND", "DURATION"))
      }
      if let endProperty {
        let end = try time(endProperty, zones: zones)
        guard (end.form == .date) == (start.form == .date) else {
          throw ICalendarError(
            line: endProperty.line, .valueTypeMismatch(property: "DTEND", date: start.form == .date))
        }
        // An all-day event's DTEND is the day after its last (RFC 5545 3.6.1): later than DTSTART.
        guard start.form == .date ? end.wall.day > start.wall.day : end.date >= start.date else {
          throw ICalendarError(line: endProperty.line, .endBeforeStart(property: "DTEND", start: "DTSTART"))
        }
        entry.end = end.date
      } else if let durationProperty {
        let duration = try Self.duration(durationProperty)
        guard !duration.negative else {
          throw ICalendarError(line: durationProperty.line, .negativeDuration(value: durationProperty.value))
        }
        if start.form == .date && duration.seconds != 0 {
          throw ICalendarError(line: durationProperty.line, .durationNotInDays(value: durationProperty.value))
        }
        entry.end = try Self.adding(duration, to: start, line: durationProperty.line)
      }
    } else {
      if let due = component.property("DUE") ?? component.property("DTSTART") {
        let time = try time(due, zones: zones)
        entry.start = time.date
        entry.timeForm = time.form
        entry.timeZone = time.zoneName
      }
      entry.done =
        component.property("STATUS")?.value.uppercased() == "COMPLETED"
        || component.property("COMPLETED") != nil
    }
    let uid = component.property("UID")?.value.trimmingCharacters(in: .whitespaces) ?? ""
    entry.uid =
      uid.isEmpty
      ? "engram-import-"
        + String(
          Self.fnv1a(
            [
              component.name, component.property("DTSTART")?.value ?? "",
              component.property("DUE")?.value ?? "", summary,
            ]
          ), radix: 16)
      : uid
    return entry
  }

  /// A DATE or DATE-TIME value read: the instant, how it was written, its zone and wall clock.
  struct Time {
    /// The instant (a date: its day at ``ICalendarReader/allDayHour``).
    var date: Date
    /// How it was written.
    var form: AgentItemTimeForm
    /// The zone its wall clock is in (nil for UTC).
    var zoneName: String?
    /// The zone.
    var zone: TimeZone
    /// Its wall-clock time in `zone`.
    var wall: WallClock
  }

  /// The time a DATE or DATE-TIME property names.
  func time(_ property: ICalendarProperty, zones: Zones) throws(ICalendarError) -> Time {
    let value = property.value.trimmingCharacters(in: .whitespaces)
    let invalid = ICalendarError(line: property.line, .invalidDate(property: property.name, value: value))
    guard let parsed = WallClock(value) else { throw invalid }
    let type = property.parameters["VALUE"]?.uppercased()
    if value.count == 8 {
      guard type == nil || type == "DATE" else { throw invalid }
      let wall = WallClock(parsed.day * 86_400 + Int64(Self.allDayHour) * 3600)
      return Time(
        date: Recurrence.instant(wall: wall.seconds, in: timeZone), form: .date,
        zoneName: CalendarZone.name(of: timeZone), zone: timeZone, wall: wall)
    }
    guard type == nil || type == "DATE-TIME" else { throw invalid }
    if value.hasSuffix("Z") {
      let utc = TimeZone(identifier: "UTC")!
      return Time(
        date: Date(timeIntervalSince1970: Double(parsed.seconds)), form: .utc, zoneName: nil, zone: utc,
        wall: parsed)
    }
    if let tzid = property.parameters["TZID"] {
      guard let (named, name) = zones.zone(tzid) else {
        throw ICalendarError(line: property.line, .unknownTimeZone(tzid))
      }
      return Time(
        date: Recurrence.instant(wall: parsed.seconds, in: named), form: .zoned, zoneName: name, zone: named,
        wall: parsed)
    }
    return Time(
      date: Recurrence.instant(wall: parsed.seconds, in: timeZone), form: .floating,
      zoneName: CalendarZone.name(of: timeZone), zone: timeZone, wall: parsed)
  }

  /// A DURATION value: days (weeks are seven) and seconds, and its sign.
  struct Duration: Equatable {
    var days: Int64
    var seconds: Int64
    var negative: Bool
  }

  /// `start` + `duration`: days on the wall clock of the start's zone (a day across a
  /// daylight-saving change is still a day, RFC 5545 3.3.6), then seconds exactly.
  /// - Throws: when the end falls after 9999-12-31, the last day a file can hold.
  static func adding(_ duration: Duration, to start: Time, line: Int) throws(ICalendarError) -> Date {
    let outOfRange = ICalendarError(line: line, .outOfRange(property: "DTSTART + DURATION"))
    let (days, daysOverflow) = duration.days.multipliedReportingOverflow(by: 86_400)
    let (wall, wallOverflow) = start.wall.seconds.addingReportingOverflow(days)
    guard !daysOverflow, !wallOverflow, duration.days <= 4_000_000, duration.seconds <= 400_000_000_000,
      WallClock(wall).day <= WallClock.lastDay
    else { throw outOfRange }
    let base =
      start.form == .utc ? Double(wall) : Recurrence.instant(wall: wall, in: start.zone).timeIntervalSince1970
    let end = Date(timeIntervalSince1970: base + Double(duration.seconds))
    let endWall = Int64(floor(end.timeIntervalSince1970)) + Int64(start.zone.secondsFromGMT(for: end))
    guard WallClock(endWall).day <= WallClock.lastDay else { throw outOfRange }
    return end
  }

  /// A DURATION value (`P1D`, `PT1H30M`, `P2W`, `-PT15M`).
  static func duration(_ property: ICalendarProperty) throws(ICalendarError) -> Duration {
    let value = property.value.trimmingCharacters(in: .whitespaces).uppercased()
    let invalid = ICalendarError(line: property.line, .invalidDuration(value: value))
    var text = Substring(value)
    var negative = false
    if text.first == "+" || text.first == "-" {
      negative = text.first == "-"
      text = text.dropFirst()
    }
    guard text.first == "P" else { throw invalid }
    text = text.dropFirst()
    var result = Duration(days: 0, seconds: 0, negative: negative)
    var inTime = false
    var digits = ""
    var units = 0
    for character in text {
      if character.isASCII, character.isNumber {
        digits.append(character)
        continue
      }
      if character == "T" {
        guard !inTime, digits.isEmpty else { throw invalid }
        inTime = true
        continue
      }
      // Eighteen digits at most: no count overflows when added up below.
      guard digits.count <= 12, let count = Int64(digits) else { throw invalid }
      digits = ""
      units += 1
      switch (character, inTime) {
      case ("W", false): result.days += count * 7
      case ("D", false): result.days += count
      case ("H", true): result.seconds += count * 3600
      case ("M", true): result.seconds += count * 60
      case ("S", true): result.seconds += count
      default: throw invalid
      }
    }
    guard digits.isEmpty, units > 0 else { throw invalid }
    if result.days == 0 && result.seconds == 0 { result.negative = false }
    return result
  }

  /// FNV-1a (64-bit) over `parts`, each followed by a zero byte.
  static func fnv1a(_ parts: [String]) -> UInt64 {
    var hash = FNV1a()
    for part in parts {
      hash.add(part.utf8)
      hash.add(0)
    }
    return hash.value
  }

  /// The time zones a calendar's `TZID` parameters can name.
  struct Zones {
    /// The calendar's VTIMEZONE components by TZID.
    let definitions: [String: ICalendarComponent]

    init(calendar: ICalendarComponent) {
      var definitions: [String: ICalendarComponent] = [:]
      for component in calendar.components where component.name == "VTIMEZONE" {
        if let id = component.property("TZID")?.value { definitions[id] = component }
      }
      self.definitions = definitions
    }

    /// The zone `tzid` names: an IANA identifier (also at the end of a path such as
    /// `/mozilla.org/20050126_1/America/New_York`), the `X-LIC-LOCATION` of its VTIMEZONE, or
    /// the fixed offset of a VTIMEZONE without daylight saving; nil otherwise.
    /// Its name as stored: the IANA identifier, or `GMT+hhmm` for a fixed offset.
    func zone(_ tzid: String) -> (zone: TimeZone, name: String)? {
      if let zone = Self.iana(tzid) { return zone }
      guard let definition = definitions[tzid] else { return nil }
      if let location = definition.property("X-LIC-LOCATION")?.value, let zone = Self.iana(location) {
        return zone
      }
      let rules = definition.components.filter { $0.name == "STANDARD" || $0.name == "DAYLIGHT" }
      let offsets = Set(rules.compactMap { $0.property("TZOFFSETTO").flatMap { Self.offset($0.value) } })
      if offsets.count == 1, let offset = offsets.first, let zone = TimeZone(secondsFromGMT: offset) {
        return (zone, CalendarZone.fixedName(offset))
      }
      return nil
    }

    static func iana(_ name: String) -> (zone: TimeZone, name: String)? {
      let trimmed = name.trimmingCharacters(in: .whitespaces)
      guard !trimmed.isEmpty else { return nil }
      if !trimmed.hasPrefix("/"), let zone = CalendarZone.named(trimmed) { return (zone, trimmed) }
      let parts = trimmed.split(separator: "/")
      for count in [3, 2] where parts.count >= count {
        let suffix = parts.suffix(count).joined(separator: "/")
        if let zone = TimeZone(identifier: suffix) { return (zone, suffix) }
      }
      return nil
    }

    /// `+0530` or `-0800` (optionally with seconds) in seconds.
    static func offset(_ text: String) -> Int? {
      let value = text.trimmingCharacters(in: .whitespaces)
      guard let sign = value.first, sign == "+" || sign == "-" else { return nil }
      let digits = value.dropFirst()
      guard digits.count == 4 || digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
        return nil
      }
      let numbers = Array(digits).map { Int(String($0))! }
      var seconds = (numbers[0] * 10 + numbers[1]) * 3600 + (numbers[2] * 10 + numbers[3]) * 60
      if numbers.count == 6 { seconds += numbers[4] * 10 + numbers[5] }
      return sign == "-" ? -seconds : seconds
    }
  }
}
