import EngramCore
import Foundation

/// A repeating event's rule as iCalendar writes it (RFC 5545 `RRULE`, the part calendar apps
/// use for everyday events): `FREQ` daily, weekly, monthly or yearly, `INTERVAL`, `COUNT`,
/// `UNTIL`, and for weekly rules `BYDAY` (MO, TU, ...) and `WKST`.
///
/// Occurrences are computed on the wall clock of the event's own zone (its TZID, or UTC for a
/// UTC start), so they keep the first one's local time across daylight-saving changes: a local
/// time that does not exist (a spring-forward gap) is read with the offset before the gap, and
/// one that exists twice is the first (RFC 5545 3.3.5, as Python's zoneinfo reads it). DTSTART
/// is always the first occurrence and counts towards `COUNT`, even where the rule's days do not
/// include it. A listing window is reached by arithmetic, not by stepping from the start, so a
/// rule without an end repeats for as long as dates go (year 9999).
public struct Recurrence: Sendable, Hashable {
  /// How often the rule repeats.
  public enum Frequency: String, Sendable, Hashable {
    case daily = "DAILY"
    case weekly = "WEEKLY"
    case monthly = "MONTHLY"
    case yearly = "YEARLY"
  }

  /// Where a rule stops (`UNTIL`), as written: an instant (`Z`), a wall-clock time in the
  /// event's zone, or a whole day there (inclusive).
  public enum Until: Sendable, Hashable {
    case instant(Date)
    case wallClock(seconds: Int64)
    case day(Int64)
  }

  public var frequency: Frequency
  public var interval: Int
  public var count: Int?
  public var until: Until?
  /// Weekdays of a weekly rule (Calendar weekday numbers, 1 = Sunday); empty: the first
  /// occurrence's weekday.
  public var weekdays: Set<Int>
  /// The first day of a week (`WKST`, Calendar weekday numbers; default Monday): where the
  /// weeks of a weekly rule with `INTERVAL` above 1 begin.
  public var weekStart: Int

  /// Reads a rule (`FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;COUNT=10`); nil for a rule without a
  /// frequency this reads, or with parts it cannot honour (`BYSETPOS`, ordinal `BYDAY` such
  /// as `2MO`, ...), so a listing never shows occurrences the rule does not have.
  public init?(_ text: String) {
    var frequency: Frequency?
    var interval = 1
    var count: Int?
    var until: Until?
    var weekdays: Set<Int> = []
    var weekStart = 2
    for part in text.split(separator: ";") {
      let pair = part.split(separator: "=", maxSplits: 1).map { $0.uppercased() }
      guard pair.count == 2 else { return nil }
      switch pair[0] {
      case "FREQ": frequency = Frequency(rawValue: pair[1])
      case "INTERVAL":
        guard let value = Int(pair[1]), value >= 1 else { return nil }
        interval = value
      case "COUNT":
        guard let value = Int(pair[1]), value >= 1 else { return nil }
        count = value
      case "UNTIL":
        guard let value = Self.until(pair[1]) else { return nil }
        until = value
      case "BYDAY":
        for day in pair[1].split(separator: ",") {
          guard let number = Self.weekdayNames[String(day)] else { return nil }
          weekdays.insert(number)
        }
      case "WKST":
        guard let number = Self.weekdayNames[pair[1]] else { return nil }
        weekStart = number
      default:
        return nil
      }
    }
    guard let frequency else { return nil }
    if !weekdays.isEmpty && frequency != .weekly { return nil }
    self.frequency = frequency
    self.interval = interval
    self.count = count
    self.until = until
    self.weekdays = weekdays
    self.weekStart = weekStart
  }

  /// iCalendar's weekday names as Calendar weekday numbers (1 = Sunday).
  static let weekdayNames = ["SU": 1, "MO": 2, "TU": 3, "WE": 4, "TH": 5, "FR": 6, "SA": 7]

  /// `YYYYMMDD`, `YYYYMMDDTHHMMSS` or `YYYYMMDDTHHMMSSZ`.
  static func until(_ text: String) -> Until? {
    guard let wall = WallClock(text) else { return nil }
    if text.count == 8 { return .day(wall.day) }
    return text.hasSuffix("Z")
      ? .instant(Date(timeIntervalSince1970: Double(wall.seconds))) : .wallClock(seconds: wall.seconds)
  }

  /// The occurrences from `start` (the first) that fall in `range`, at most `limit`, in order,
  /// on the wall clock of `timeZone`.
  /// - Complexity: O(occurrences in the range + one period's days), not O(periods since `start`)
  ///   (a monthly or yearly rule with `COUNT` also walks at most one 400-year cycle of periods).
  public func occurrences(from start: Date, in range: Range<Date>, timeZone: TimeZone, limit: Int = 500)
    -> [Date]
  {
    guard limit > 0, start < range.upperBound else { return [] }
    let first = WallClock(
      Int64(floor(start.timeIntervalSince1970)) + Int64(timeZone.secondsFromGMT(for: start)))
    let timeOfDay = first.seconds - first.day * 86_400
    var found: [Date] = []
    // DTSTART is always the first occurrence, whether or not the rule's days include it.
    var produced = 1
    if start >= range.lowerBound { found.append(start) }
    let startMatches = weekdays.isEmpty || weekdays.contains(Self.weekday(first.day))
    // Rule instances other than DTSTART: those after it, in period order.
    let lowerWallDay =
      CivilCalendar.floorDivision(
        Int64(floor(range.lowerBound.timeIntervalSince1970))
          + Int64(timeZone.secondsFromGMT(for: range.lowerBound)),
        86_400) - 2
    let upperWallDay =
      CivilCalendar.floorDivision(
        Int64(ceil(range.upperBound.timeIntervalSince1970))
          + Int64(timeZone.secondsFromGMT(for: range.upperBound)),
        86_400) + 2
    var period = max(0, firstPeriod(reaching: lowerWallDay, from: first.day))
    if period > 0 {
      produced = instancesBefore(period: period, firstDay: first.day) + (startMatches ? 0 : 1)
    }
    let lastDay = WallClock.lastDay
    while found.count < limit {
      // A period's days lie at most a week before the day it is counted from.
      guard let periodStart = periodStartDay(period, firstDay: first.day), periodStart - 7 <= upperWallDay,
        let days = days(ofPeriod: period, firstDay: first.day)
      else { break }
      period += 1
      for day in days where day > first.day && day <= lastDay {
        if let count, produced >= count { return found }
        let wall = day * 86_400 + timeOfDay
        let date = Self.instant(wall: wall, in: timeZone)
        if let until {
          switch until {
          case .instant(let end): if date > end { return found }
          case .wallClock(let end): if wall > end { return found }
          case .day(let end): if day > end { return found }
          }
        }
        produced += 1
        if date >= range.upperBound { return found }
        if date >= range.lowerBound, date > start {
          found.append(date)
          if found.count >= limit { return found }
        }
      }
    }
    return found
  }

  // MARK: Periods

  /// The first period whose days can reach `day` (a wall-clock day number), a little early.
  func firstPeriod(reaching day: Int64, from firstDay: Int64) -> Int64 {
    guard day > firstDay else { return 0 }
    switch frequency {
    case .daily: return (day - firstDay) / Int64(interval) - 1
    case .weekly: return (day - firstDay) / (7 * Int64(interval)) - 1
    case .monthly, .yearly:
      let months = WallClock.monthIndex(day) - WallClock.monthIndex(firstDay)
      return months / Int64(monthsPerPeriod) - 1
    }
  }

  /// Months from one monthly or yearly period to the next.
  var monthsPerPeriod: Int { frequency == .yearly ? 12 * interval : interval }

  /// The day a period begins on (its first candidate, valid or not); nil past year 9999.
  func periodStartDay(_ period: Int64, firstDay: Int64) -> Int64? {
    switch frequency {
    case .daily: return firstDay + period * Int64(interval)
    case .weekly: return firstDay + period * 7 * Int64(interval)
    case .monthly, .yearly:
      let (month, overflow) = (WallClock.monthIndex(firstDay)).addingReportingOverflow(
        period * Int64(monthsPerPeriod))
      guard !overflow, month < 10_000 * 12 else { return nil }
      return WallClock.day(monthIndex: month, dayOfMonth: 1)
    }
  }

  /// The rule's days in `period` (wall-clock day numbers, ascending); empty when the period has
  /// none (the 31st of a 30-day month, February 29 of a common year); nil past year 9999.
  func days(ofPeriod period: Int64, firstDay: Int64) -> [Int64]? {
    switch frequency {
    case .daily:
      let day = firstDay + period * Int64(interval)
      return day > WallClock.lastDay ? nil : [day]
    case .weekly:
      if weekdays.isEmpty {
        let day = firstDay + period * 7 * Int64(interval)
        return day > WallClock.lastDay ? nil : [day]
      }
      let weekBegins =
        firstDay - Int64((Self.weekday(firstDay) - weekStart + 7) % 7) + period * 7 * Int64(interval)
      guard weekBegins <= WallClock.lastDay else { return nil }
      return (0..<7).map { weekBegins + Int64($0) }.filter { weekdays.contains(Self.weekday($0)) }
    case .monthly, .yearly:
      let (month, overflow) = WallClock.monthIndex(firstDay).addingReportingOverflow(
        period * Int64(monthsPerPeriod))
      guard !overflow, month < 10_000 * 12 else { return nil }
      let dayOfMonth = WallClock.dayOfMonth(firstDay)
      guard dayOfMonth <= WallClock.daysIn(monthIndex: month) else { return [] }
      return [WallClock.day(monthIndex: month, dayOfMonth: dayOfMonth)]
    }
  }

  /// How many rule instances the periods before `period` hold (DTSTART's own included when it
  /// is one).
  func instancesBefore(period: Int64, firstDay: Int64) -> Int {
    guard period > 0 else { return 0 }
    switch frequency {
    case .daily: return Int(period)
    case .weekly:
      guard !weekdays.isEmpty, let first = days(ofPeriod: 0, firstDay: firstDay) else { return Int(period) }
      return first.filter { $0 >= firstDay }.count + Int(period - 1) * weekdays.count
    case .monthly, .yearly:
      // The Gregorian calendar repeats every 4,800 months, so validity repeats every `cycle`
      // periods.
      let step = Int64(monthsPerPeriod)
      let cycle = 4_800 / Self.gcd(step, 4_800)
      var prefix = [0]
      prefix.reserveCapacity(Int(min(cycle, period)) + 1)
      for index in 0..<min(cycle, period) {
        prefix.append(
          prefix[prefix.count - 1] + ((days(ofPeriod: index, firstDay: firstDay)?.isEmpty ?? true) ? 0 : 1))
      }
      guard period > cycle else { return prefix[Int(period)] }
      return Int(period / cycle) * prefix[Int(cycle)] + prefix[Int(period % cycle)]
    }
  }

  // MARK: Time

  /// The instant a wall-clock time (seconds from 1970-01-01T00:00 on the wall) is in `zone`:
  /// a time in a gap takes the offset before the gap; a time that happens twice, the first.
  static func instant(wall: Int64, in zone: TimeZone) -> Date {
    let before = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(wall - 86_400))))
    let after = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(wall + 86_400))))
    var earliest: Int64?
    for offset in [before, after] {
      let candidate = wall - offset
      if Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(candidate)))) == offset {
        earliest = min(earliest ?? candidate, candidate)
      }
    }
    return Date(timeIntervalSince1970: Double(earliest ?? wall - before))
  }

  /// The weekday of a day number (1 = Sunday; day 0 = 1970-01-01, a Thursday).
  static func weekday(_ day: Int64) -> Int { Int(((day % 7) + 7 + 4) % 7) + 1 }

  static func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? a : gcd(b, a % b) }
}

/// A proleptic Gregorian wall-clock time: days and seconds from 1970-01-01T00:00, as if UTC.
struct WallClock: Equatable {
  /// Seconds from 1970-01-01T00:00.
  var seconds: Int64
  /// Days from 1970-01-01.
  var day: Int64 { CivilCalendar.floorDivision(seconds, 86_400) }

  init(_ seconds: Int64) { self.seconds = seconds }

  /// `YYYYMMDD`, `YYYYMMDDTHHMMSS` or `YYYYMMDDTHHMMSSZ`; nil for anything else or a day that
  /// does not exist.
  init?(_ text: String) {
    let digits = Array(text.utf8)
    func number(_ range: Range<Int>) -> Int? {
      var result = 0
      for index in range {
        guard index < digits.count, (0x30...0x39).contains(digits[index]) else { return nil }
        result = result * 10 + Int(digits[index] - 0x30)
      }
      return result
    }
    guard digits.count == 8 || digits.count == 15 || (digits.count == 16 && digits[15] == UInt8(ascii: "Z")),
      let year = number(0..<4), let month = number(4..<6), let dayOfMonth = number(6..<8), year >= 1,
      (1...12).contains(month), dayOfMonth >= 1
    else { return nil }
    let monthIndex = Int64(year) * 12 + Int64(month - 1)
    guard dayOfMonth <= Self.daysIn(monthIndex: monthIndex) else { return nil }
    var seconds = Self.day(monthIndex: monthIndex, dayOfMonth: dayOfMonth) * 86_400
    if digits.count > 8 {
      guard digits[8] == UInt8(ascii: "T"), let hour = number(9..<11), let minute = number(11..<13),
        let second = number(13..<15), hour < 24, minute < 60, second <= 60
      else { return nil }
      seconds += Int64(hour * 3600 + minute * 60 + min(second, 59))
    }
    self.seconds = seconds
  }

  /// The last day a file can name: 9999-12-31.
  static let lastDay: Int64 = day(monthIndex: 9999 * 12 + 11, dayOfMonth: 31)
  /// The first: 0001-01-01.
  static let firstDay: Int64 = day(monthIndex: 12, dayOfMonth: 1)

  /// The day number of a date (month index = year * 12 + month - 1; days from 1970-01-01).
  static func day(monthIndex: Int64, dayOfMonth: Int) -> Int64 {
    let year = CivilCalendar.floorDivision(monthIndex, 12)
    return CivilCalendar.days(year: year, month: monthIndex - year * 12 + 1, day: Int64(dayOfMonth))
  }

  /// (year, month 1-12, day 1-31) of a day number.
  static func civil(_ day: Int64) -> (year: Int64, month: Int, day: Int) {
    let date = CivilCalendar.civil(days: day)
    return (date.year, Int(date.month), Int(date.day))
  }

  /// year * 12 + month - 1 of a day number.
  static func monthIndex(_ day: Int64) -> Int64 {
    let date = civil(day)
    return date.year * 12 + Int64(date.month - 1)
  }

  /// The day of the month of a day number.
  static func dayOfMonth(_ day: Int64) -> Int { civil(day).day }

  /// The days of a month.
  static func daysIn(monthIndex: Int64) -> Int {
    let year = CivilCalendar.floorDivision(monthIndex, 12)
    return Int(CivilCalendar.daysIn(year: year, month: monthIndex - year * 12 + 1))
  }

  /// `YYYYMMDD`.
  static func dateText(_ day: Int64) -> String {
    let date = civil(day)
    return String(format: "%04d%02d%02d", Int(date.year), date.month, date.day)
  }

  /// `YYYYMMDDTHHMMSS`.
  var text: String {
    let rest = seconds - day * 86_400
    return Self.dateText(day)
      + String(format: "T%02d%02d%02d", Int(rest / 3600), Int(rest / 60 % 60), Int(rest % 60))
  }
}
