import Engram
import Foundation

/// The time source skills and the date parser use: an injectable `now` and the user's time zone.
public struct AgentClock: Sendable {
  /// The user's time zone; calendar arithmetic (days, weekdays, DST) happens in it.
  public var timeZone: TimeZone
  private let nowProvider: @Sendable () -> Date

  /// Creates a clock that reads the current instant from `now`.
  public init(timeZone: TimeZone = .current, now: @escaping @Sendable () -> Date) {
    self.timeZone = timeZone
    self.nowProvider = now
  }

  /// The system clock in `timeZone`.
  public static func system(timeZone: TimeZone = .current) -> AgentClock {
    AgentClock(timeZone: timeZone) { Date() }
  }

  /// A clock frozen at `date`, for tests and replays.
  public static func fixed(_ date: Date, timeZone: TimeZone) -> AgentClock {
    AgentClock(timeZone: timeZone) { date }
  }

  /// A clock frozen at an ISO 8601 instant with an offset (`2025-06-11T10:00:00+08:00`, or
  /// `Z`), in the fixed-offset zone that offset names; nil for text without one.
  public static func fixed(iso8601 text: String) -> AgentClock? {
    guard let (date, zone) = DateParser.instantWithOffset(text) else { return nil }
    return .fixed(date, timeZone: zone)
  }

  /// The current instant.
  public var now: Date { nowProvider() }

  /// A Gregorian calendar in the clock's time zone.
  public var calendar: Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    calendar.locale = Locale(identifier: "en_US_POSIX")
    return calendar
  }
}
