import Foundation

/// A repeating event's rule as iCalendar writes it (RFC 5545 `RRULE`, the part calendar apps
/// use for everyday events): `FREQ` daily, weekly, monthly or yearly, `INTERVAL`, `COUNT`,
/// `UNTIL`, and for weekly rules `BYDAY` (MO, TU, ...). Occurrences keep the first one's
/// wall-clock time in `calendar`'s time zone across daylight-saving changes.
public struct Recurrence: Sendable, Hashable {
  /// How often the rule repeats.
  public enum Frequency: String, Sendable, Hashable {
    case daily = "DAILY"
    case weekly = "WEEKLY"
    case monthly = "MONTHLY"
    case yearly = "YEARLY"
  }

  public var frequency: Frequency
  public var interval: Int
  public var count: Int?
  public var until: Date?
  /// Weekdays of a weekly rule (Calendar weekday numbers, 1 = Sunday); empty: the first
  /// occurrence's weekday.
  public var weekdays: Set<Int>

  /// Reads a rule (`FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;COUNT=10`); nil for a rule without a
  /// frequency this reads, or with parts it cannot honour (`BYSETPOS`, ordinal `BYDAY` such
  /// as `2MO`, ...), so a listing never shows occurrences the rule does not have.
  public init?(_ text: String) {
    var frequency: Frequency?
    var interval = 1
    var count: Int?
    var until: Date?
    var weekdays: Set<Int> = []
    let names = ["SU": 1, "MO": 2, "TU": 3, "WE": 4, "TH": 5, "FR": 6, "SA": 7]
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
        guard let date = Self.date(pair[1]) else { return nil }
        until = date
      case "BYDAY":
        for day in pair[1].split(separator: ",") {
          guard let number = names[String(day)] else { return nil }
          weekdays.insert(number)
        }
      case "WKST":
        continue
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
  }

  /// `YYYYMMDD` or `YYYYMMDDTHHMMSS[Z]` (a floating time read as UTC).
  static func date(_ text: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    for format in ["yyyyMMdd'T'HHmmss'Z'", "yyyyMMdd'T'HHmmss", "yyyyMMdd"] {
      formatter.dateFormat = format
      if let date = formatter.date(from: text) {
        // A date alone includes its whole day.
        return format == "yyyyMMdd" ? date.addingTimeInterval(86_399) : date
      }
    }
    return nil
  }

  /// The occurrences from `start` (the first) that fall in `range`, at most `limit`, in order.
  public func occurrences(from start: Date, in range: Range<Date>, calendar: Calendar, limit: Int = 500)
    -> [Date]
  {
    var found: [Date] = []
    var produced = 0
    var period = 0
    // Enough periods to reach the range's end, bounded so a far range stays cheap.
    while found.count < limit, period < 10_000 {
      defer { period += 1 }
      let candidates: [Date]
      switch frequency {
      case .daily:
        candidates = [calendar.date(byAdding: .day, value: period * interval, to: start)].compactMap { $0 }
      case .monthly:
        // A day the month lacks (the 31st) has no occurrence that month, as RFC 5545 says.
        guard let date = calendar.date(byAdding: .month, value: period * interval, to: start),
          calendar.component(.day, from: date) == calendar.component(.day, from: start)
        else { continue }
        candidates = [date]
      case .yearly:
        guard let date = calendar.date(byAdding: .year, value: period * interval, to: start),
          calendar.component(.day, from: date) == calendar.component(.day, from: start)
        else { continue }
        candidates = [date]
      case .weekly:
        guard let week = calendar.date(byAdding: .day, value: period * interval * 7, to: start) else {
          continue
        }
        if weekdays.isEmpty {
          candidates = [week]
        } else {
          // The days of that week (starting from the first occurrence's weekday) on the rule's days.
          candidates = (0..<7).compactMap { offset in
            guard let day = calendar.date(byAdding: .day, value: offset, to: week),
              weekdays.contains(calendar.component(.weekday, from: day))
            else { return nil }
            return day
          }
        }
      }
      for date in candidates {
        if let until, date > until { return found }
        produced += 1
        if let count, produced > count { return found }
        if date >= range.upperBound { return found }
        if date >= range.lowerBound { found.append(date) }
      }
    }
    return found
  }
}
