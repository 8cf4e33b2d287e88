import Foundation

/// Why an iCalendar file (RFC 5545) was refused, and on which line. Nothing from a refused
/// file is stored.
public struct ICalendarError: Error, Equatable, Sendable {
  /// What was wrong.
  public enum Problem: Equatable, Sendable {
    /// The file does not begin with `BEGIN:VCALENDAR`.
    case notCalendar
    /// The bytes of the line are not valid UTF-8.
    case invalidUTF8
    /// The line is not `NAME[;PARAM=VALUE...]:VALUE`.
    case malformedLine
    /// A component begun on this line has no `END`.
    case unterminated(component: String)
    /// An `END` that closes no open component (or another than the one open).
    case unexpectedEnd(component: String)
    /// A date or date-time value that cannot be read.
    case invalidDate(property: String, value: String)
    /// A `DURATION` value that cannot be read.
    case invalidDuration(value: String)
    /// A `TZID` that names neither an IANA time zone nor a `VTIMEZONE` Engram can read.
    case unknownTimeZone(String)
    /// A required property is missing from the component begun on this line.
    case missingProperty(property: String, component: String)
    /// An end (`DTEND`) before the start (for an all-day event: not after it).
    case endBeforeStart(property: String, start: String)
    /// A negative `DURATION`.
    case negativeDuration(value: String)
    /// A `DURATION` with hours, minutes or seconds on an all-day event.
    case durationNotInDays(value: String)
    /// A time that falls after 9999-12-31, the last day a file can hold.
    case outOfRange(property: String)
    /// Two properties that exclude each other (`DTEND` and `DURATION`).
    case conflictingProperties(String, String)
    /// A `DTEND` that is a date-time where `DTSTART` is a date, or the other way round.
    case valueTypeMismatch(property: String, date: Bool)
    /// An `RRULE` that is not a recurrence rule, and why.
    case invalidRecurrence(value: String, reason: String)
  }

  /// The line (1-based; a folded line counts from its first physical line).
  public var line: Int
  /// What was wrong.
  public var problem: Problem

  /// Creates an error.
  public init(line: Int, _ problem: Problem) {
    self.line = line
    self.problem = problem
  }
}

extension ICalendarError: CustomStringConvertible {
  /// `line N: what was wrong`.
  public var description: String { "line \(line): \(reason)" }

  /// What was wrong, without the line.
  public var reason: String {
    switch problem {
    case .notCalendar: return "not an iCalendar file (it must begin with BEGIN:VCALENDAR)"
    case .invalidUTF8: return "invalid UTF-8"
    case .malformedLine: return "not an iCalendar content line (NAME:VALUE)"
    case .unterminated(let component): return "BEGIN:\(component) has no END:\(component)"
    case .unexpectedEnd(let component): return "END:\(component) closes no open \(component)"
    case .invalidDate(let property, let value): return "\(property) is not a date or date-time: \(value)"
    case .invalidDuration(let value): return "DURATION is not a duration: \(value)"
    case .unknownTimeZone(let zone):
      return "unknown time zone \(zone) (neither an IANA identifier nor a VTIMEZONE with a fixed offset)"
    case .missingProperty(let property, let component): return "\(component) has no \(property)"
    case .endBeforeStart(let property, let start): return "\(property) is before \(start)"
    case .negativeDuration(let value): return "DURATION is negative: \(value)"
    case .durationNotInDays(let value):
      return "DURATION of an all-day event must be whole days or weeks: \(value)"
    case .outOfRange(let property):
      return "\(property) falls after 9999-12-31, the last day iCalendar can hold"
    case .conflictingProperties(let first, let second): return "\(first) and \(second) cannot both be given"
    case .valueTypeMismatch(let property, let date):
      return date
        ? "\(property) must be a date (VALUE=DATE), as DTSTART is"
        : "\(property) must be a date-time, as DTSTART is"
    case .invalidRecurrence(let value, let reason):
      return "RRULE is not a recurrence rule (\(reason)): \(value)"
    }
  }
}
