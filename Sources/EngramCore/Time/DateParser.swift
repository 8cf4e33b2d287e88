import Foundation

/// A date a person typed, and whether it named a whole day.
public struct ParsedDate: Sendable, Hashable {
  /// The instant: midnight at the start of the day for `YYYY-MM-DD`.
  public var date: Date
  /// Whether only a day was given; `--until 2024-05-01` usually means "through the end of that day".
  public var isWholeDay: Bool
  /// The zone the text was read in: its own offset when it gave one, else the reader's.
  public var timeZone: TimeZone

  /// Creates a parsed date.
  public init(date: Date, isWholeDay: Bool, timeZone: TimeZone = TimeZone(secondsFromGMT: 0)!) {
    self.date = date
    self.isWholeDay = isWholeDay
    self.timeZone = timeZone
  }

  /// The end of the span the text named: the next midnight in the text's zone for a whole
  /// day (23 or 25 hours later on a daylight-saving change), else the instant itself.
  public var end: Date {
    guard isWholeDay else { return date }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    return calendar.date(byAdding: .day, value: 1, to: date) ?? date.addingTimeInterval(86_400)
  }
}

/// The one rule for dates people type and read, shared by the CLI, MCP and the agent:
/// `YYYY-MM-DD` and ISO 8601 timestamps (`2024-05-01T12:30:00Z`, `…+02:00`, `…12:30`,
/// `2024-05-01 12:30`) are read in the text's own offset when it gives one, else in the
/// reader's time zone (the user's, unless the caller says otherwise); dates are shown in
/// that same zone (`display`, `iso8601`), so a day typed and a day shown are the same day.
/// Relative expressions ("tomorrow at 9") belong to the agent's own parser. Files that
/// carry dates (conversation imports) are data, not typing: their zone-less times are UTC
/// (`fileTimestamp`). A time at a fixed offset (its own, or UTC) is computed by arithmetic,
/// without a `Calendar`, so reading a large import stays cheap.
public enum DateParser {
  /// The parsed date, or `nil` when the text is not one of the accepted forms or names no real day.
  public static func parse(_ text: String, timeZone: TimeZone = .current) -> ParsedDate? {
    scan(text, timeZone: timeZone)?.parsed
  }

  /// The parsed date and whether the text gave its own offset.
  private static func scan(_ text: String, timeZone: TimeZone) -> (parsed: ParsedDate, ownOffset: Bool)? {
    var scanner = Scan(Array(text.trimmingCharacters(in: .whitespaces).utf8))
    guard let year = scanner.number(digits: 4), scanner.take(UInt8(ascii: "-")),
      let month = scanner.number(digits: 2), scanner.take(UInt8(ascii: "-")),
      let day = scanner.number(digits: 2)
    else { return nil }
    var components = DateComponents(year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
    var zone = timeZone
    var ownOffset = false
    var fraction = 0.0
    let isWholeDay = scanner.atEnd
    if !isWholeDay {
      guard
        scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " ")),
        let hour = scanner.number(digits: 2), scanner.take(UInt8(ascii: ":")),
        let minute = scanner.number(digits: 2)
      else { return nil }
      components.hour = hour
      components.minute = minute
      if scanner.take(UInt8(ascii: ":")) {
        guard let second = scanner.number(digits: 2) else { return nil }
        components.second = second
        if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
          guard let digits = scanner.digitRun(), !digits.isEmpty else { return nil }
          fraction = Double("0." + digits) ?? 0
        }
      }
      if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
        zone = TimeZone(secondsFromGMT: 0)!
        ownOffset = true
      } else if let sign = scanner.peek, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
        _ = scanner.advance()
        guard let offsetHours = scanner.number(digits: 2), offsetHours <= 18 else { return nil }
        _ = scanner.take(UInt8(ascii: ":"))
        let offsetMinutes = scanner.number(digits: 2) ?? 0
        guard offsetMinutes < 60 else { return nil }
        let offset = (offsetHours * 3_600 + offsetMinutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        guard let fixed = TimeZone(secondsFromGMT: offset) else { return nil }
        zone = fixed
        ownOffset = true
      }
      guard scanner.atEnd else { return nil }
    }
    guard (1...12).contains(month), (1...31).contains(day), components.hour! < 24,
      components.minute! < 60, components.second! < 61
    else { return nil }
    if ownOffset || zone.identifier == "GMT" || zone.identifier == "UTC",
      let instant = fixedOffsetInstant(
        year: year, month: month, day: day, hour: components.hour!, minute: components.minute!,
        second: components.second!, offset: zone.secondsFromGMT())
    {
      return (
        ParsedDate(
          date: Date(timeIntervalSince1970: instant).addingTimeInterval(fraction), isWholeDay: isWholeDay,
          timeZone: zone),
        ownOffset
      )
    }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    components.timeZone = zone
    guard components.isValidDate(in: calendar), let date = calendar.date(from: components) else {
      return nil
    }
    return (
      ParsedDate(date: date.addingTimeInterval(fraction), isWholeDay: isWholeDay, timeZone: zone), ownOffset
    )
  }

  /// The seconds since 1970 of a civil time at a fixed offset from UTC, by arithmetic on the
  /// Gregorian calendar (no `Calendar`: reading every line of an import file through one
  /// cost more than reading the line); nil for a day the month does not have, a leap second
  /// or a year outside 1583...9999 (left to `Calendar`, which refuses or places them).
  static func fixedOffsetInstant(
    year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offset: Int
  ) -> Double? {
    guard (1583...9999).contains(year), day <= CivilCalendar.daysIn(year: Int64(year), month: Int64(month)),
      second < 60
    else { return nil }
    let days = Int(CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day)))
    return Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
  }

  /// A time as a data file carries it (a conversation import, a note's front matter): read
  /// as `parse` reads it, with UTC as the reader's zone (a file is data, not typing: its
  /// zone-less times are UTC, whoever imports it).
  public static func fileTimestamp(_ text: String) -> Date? {
    parse(text, timeZone: TimeZone(secondsFromGMT: 0)!)?.date
  }

  /// A date and time spelled out in English as LoCoMo's sessions carry them
  /// (`1:56 pm on 8 May, 2023`, also with a short month or month first), in UTC as
  /// `fileTimestamp` reads a zone-less time; nil for anything else.
  public static func spelledOut(_ text: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    for format in ["h:mm a 'on' d MMMM, yyyy", "h:mm a 'on' d MMM, yyyy", "h:mm a 'on' MMMM d, yyyy"] {
      formatter.dateFormat = format
      if let date = formatter.date(from: text) { return date }
    }
    return nil
  }

  /// An instant written with its offset (`2025-06-11T10:00:00+08:00`, or `Z`) and the
  /// fixed-offset zone the offset names; nil for text without an offset or not a timestamp.
  public static func instantWithOffset(_ text: String) -> (date: Date, timeZone: TimeZone)? {
    guard let (parsed, ownOffset) = scan(text, timeZone: TimeZone(secondsFromGMT: 0)!), ownOffset else {
      return nil
    }
    return (parsed.date, parsed.timeZone)
  }

  /// `2024-05-01 14:03`: how a date is shown to a person, in `timeZone`.
  public static func display(_ date: Date, timeZone: TimeZone) -> String {
    civilText(date, timeZone: timeZone, time: true)
      ?? format(date, timeZone: timeZone, pattern: "yyyy-MM-dd HH:mm")
  }

  /// `2024-05-01`: the day of `date` in `timeZone`.
  public static func day(_ date: Date, timeZone: TimeZone) -> String {
    civilText(date, timeZone: timeZone, time: false)
      ?? format(date, timeZone: timeZone, pattern: "yyyy-MM-dd")
  }

  /// `yyyy-MM-dd` (and ` HH:mm`) by arithmetic on the Gregorian calendar, for years 1583 to
  /// 9999 (the formatter's calendar is Julian before October 1582); nil outside them.
  ///
  /// Same text as `format` (tested against it), without building a `DateFormatter` per
  /// call: a `query` rendering ten hits spent about 4% of its CPU time in formatters.
  static func civilText(_ date: Date, timeZone: TimeZone, time: Bool) -> String? {
    let interval = date.timeIntervalSince1970.rounded(.down)
    guard interval.isFinite, abs(interval) < 1e12 else { return nil }
    let local = Int64(interval) + Int64(timeZone.secondsFromGMT(for: date))
    let days = CivilCalendar.floorDivision(local, 86_400)
    let secondOfDay = local - days * 86_400
    let (year, month, day) = CivilCalendar.civil(days: days)
    guard year >= 1583 && year <= 9999 else { return nil }
    var text = String(year) + "-" + twoDigits(month) + "-" + twoDigits(day)
    if time { text += " " + twoDigits(secondOfDay / 3600) + ":" + twoDigits(secondOfDay % 3600 / 60) }
    return text
  }

  private static func twoDigits(_ value: Int64) -> String {
    value < 10 ? "0" + String(value) : String(value)
  }

  /// ISO 8601 with seconds and the offset of `timeZone` (`2024-05-01T14:03:00+02:00`, or
  /// `…Z` in UTC).
  public static func iso8601(_ date: Date, timeZone: TimeZone) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = timeZone
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
  }

  private static func format(_ date: Date, timeZone: TimeZone, pattern: String) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.calendar = Calendar(identifier: .gregorian)
    formatter.timeZone = timeZone
    formatter.dateFormat = pattern
    return formatter.string(from: date)
  }
}

/// A cursor over ASCII bytes.
private struct Scan {
  let bytes: [UInt8]
  var index = 0

  init(_ bytes: [UInt8]) {
    self.bytes = bytes
  }

  var atEnd: Bool { index == bytes.count }
  var peek: UInt8? { atEnd ? nil : bytes[index] }

  mutating func advance() -> UInt8? {
    guard let byte = peek else { return nil }
    index += 1
    return byte
  }

  mutating func take(_ byte: UInt8) -> Bool {
    guard peek == byte else { return false }
    index += 1
    return true
  }

  /// Exactly `digits` decimal digits.
  mutating func number(digits: Int) -> Int? {
    guard index + digits <= bytes.count else { return nil }
    var value = 0
    for offset in 0..<digits {
      let byte = bytes[index + offset]
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      value = value * 10 + Int(byte - UInt8(ascii: "0"))
    }
    index += digits
    return value
  }

  mutating func digitRun() -> String? {
    let start = index
    while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
    return String(decoding: bytes[start..<index], as: UTF8.self)
  }
}
