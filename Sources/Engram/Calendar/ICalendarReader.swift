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
  /// ``ICalendarReader/allDayHour`` in the reader's time zone.
  public var allDay: Bool
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
      recurrence: component.property("RRULE")?.value, allDay: false, line: component.line)
    if isEvent {
      guard let start = component.property("DTSTART") else {
        throw ICalendarError(line: component.line, .missingProperty(property: "DTSTART", component: "VEVENT"))
      }
      let (date, allDay) = try time(start, zones: zones)
      entry.start = date
      entry.allDay = allDay
      if !allDay {
        if let end = component.property("DTEND") {
          let (endDate, endAllDay) = try time(end, zones: zones)
          if !endAllDay { entry.end = endDate }
        } else if let duration = component.property("DURATION") {
          entry.end = date.addingTimeInterval(try Self.duration(duration))
        }
        if let end = entry.end, end <= date { entry.end = nil }
      }
    } else {
      if let due = component.property("DUE") ?? component.property("DTSTART") {
        let (date, allDay) = try time(due, zones: zones)
        entry.start = date
        entry.allDay = allDay
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

  /// The instant a DATE or DATE-TIME property names, and whether it was a date alone.
  func time(_ property: ICalendarProperty, zones: Zones) throws(ICalendarError) -> (Date, Bool) {
    let value = property.value.trimmingCharacters(in: .whitespaces)
    let invalid = ICalendarError(line: property.line, .invalidDate(property: property.name, value: value))
    let digits = Array(value.utf8)
    func number(_ range: Range<Int>) -> Int? {
      var result = 0
      for index in range {
        guard index < digits.count, (0x30...0x39).contains(digits[index]) else { return nil }
        result = result * 10 + Int(digits[index] - 0x30)
      }
      return result
    }
    guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8) else { throw invalid }
    var parts = DateComponents(year: year, month: month, day: day)
    var zone = timeZone
    let allDay = digits.count == 8
    if allDay {
      parts.hour = Self.allDayHour
      parts.minute = 0
      parts.second = 0
    } else {
      guard property.parameters["VALUE"]?.uppercased() != "DATE",
        digits.count == 15 || (digits.count == 16 && digits[15] == UInt8(ascii: "Z")),
        digits[8] == UInt8(ascii: "T"), let hour = number(9..<11), let minute = number(11..<13),
        let second = number(13..<15), hour < 24, minute < 60, second <= 60
      else { throw invalid }
      parts.hour = hour
      parts.minute = minute
      parts.second = min(second, 59)
      if digits.count == 16 {
        zone = TimeZone(identifier: "UTC")!
      } else if let tzid = property.parameters["TZID"] {
        guard let named = zones.zone(tzid) else {
          throw ICalendarError(line: property.line, .unknownTimeZone(tzid))
        }
        zone = named
      }
    }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    // A day that does not exist (February 30) would roll over into the next month: refused.
    guard (1...12).contains(month), (1...31).contains(day), let date = calendar.date(from: parts),
      calendar.component(.year, from: date) == year, calendar.component(.month, from: date) == month,
      calendar.component(.day, from: date) == day
    else { throw invalid }
    return (date, allDay)
  }

  /// A DURATION value (`P1D`, `PT1H30M`, `P2W`, `-PT15M`) in seconds.
  static func duration(_ property: ICalendarProperty) throws(ICalendarError) -> TimeInterval {
    let value = property.value.trimmingCharacters(in: .whitespaces).uppercased()
    let invalid = ICalendarError(line: property.line, .invalidDuration(value: value))
    var text = Substring(value)
    var sign = 1.0
    if text.first == "+" || text.first == "-" {
      sign = text.first == "-" ? -1 : 1
      text = text.dropFirst()
    }
    guard text.first == "P" else { throw invalid }
    text = text.dropFirst()
    var seconds = 0.0
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
      guard let count = Double(digits) else { throw invalid }
      digits = ""
      units += 1
      switch (character, inTime) {
      case ("W", false): seconds += count * 7 * 86_400
      case ("D", false): seconds += count * 86_400
      case ("H", true): seconds += count * 3600
      case ("M", true): seconds += count * 60
      case ("S", true): seconds += count
      default: throw invalid
      }
    }
    guard digits.isEmpty, units > 0 else { throw invalid }
    return sign * seconds
  }

  /// FNV-1a (64-bit) over `parts`, each followed by a zero byte.
  static func fnv1a(_ parts: [String]) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for part in parts {
      for byte in part.utf8 {
        hash ^= UInt64(byte)
        hash &*= 0x100_0000_01b3
      }
      hash ^= 0
      hash &*= 0x100_0000_01b3
    }
    return hash
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
    func zone(_ tzid: String) -> TimeZone? {
      if let zone = Self.iana(tzid) { return zone }
      guard let definition = definitions[tzid] else { return nil }
      if let location = definition.property("X-LIC-LOCATION")?.value, let zone = Self.iana(location) {
        return zone
      }
      let rules = definition.components.filter { $0.name == "STANDARD" || $0.name == "DAYLIGHT" }
      let offsets = Set(rules.compactMap { $0.property("TZOFFSETTO").flatMap { Self.offset($0.value) } })
      if offsets.count == 1, let offset = offsets.first { return TimeZone(secondsFromGMT: offset) }
      return nil
    }

    static func iana(_ name: String) -> TimeZone? {
      let trimmed = name.trimmingCharacters(in: .whitespaces)
      guard !trimmed.isEmpty else { return nil }
      if !trimmed.hasPrefix("/"), let zone = TimeZone(identifier: trimmed) { return zone }
      let parts = trimmed.split(separator: "/")
      for count in [3, 2] where parts.count >= count {
        if let zone = TimeZone(identifier: parts.suffix(count).joined(separator: "/")) { return zone }
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
