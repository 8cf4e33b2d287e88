import Engram
import Foundation

/// A type an option or positional argument can hold: the parser checks the text against
/// ``valueKind`` and the declaration builds the value from what the parser produced.
public protocol ExpressibleByArgument: Sendable {
  /// What the parser accepts for this type (and how help and errors describe it).
  static var valueKind: ValueKind { get }

  /// The value from what the parser produced for ``valueKind``; `nil` when it does not fit.
  init?(argument value: ArgumentValue)

  /// How help shows this value as a default (`10`, `hybrid`, `30d`).
  var defaultValueDescription: String { get }
}

extension String: ExpressibleByArgument {
  /// Any text.
  public static var valueKind: ValueKind { .string }

  /// The text given.
  public init?(argument value: ArgumentValue) {
    guard case .string(let text) = value else { return nil }
    self = text
  }

  /// The text itself.
  public var defaultValueDescription: String { self }
}

extension Int: ExpressibleByArgument {
  /// A base-10 integer.
  public static var valueKind: ValueKind { .integer }

  /// The integer given.
  public init?(argument value: ArgumentValue) {
    guard case .integer(let number) = value else { return nil }
    self = number
  }

  /// `10`.
  public var defaultValueDescription: String { String(self) }
}

extension Double: ExpressibleByArgument {
  /// A finite decimal number.
  public static var valueKind: ValueKind { .double }

  /// The number given.
  public init?(argument value: ArgumentValue) {
    guard case .double(let number) = value else { return nil }
    self = number
  }

  /// `0.5`.
  public var defaultValueDescription: String { String(self) }
}

extension ParsedDate: ExpressibleByArgument {
  /// A date `YYYY-MM-DD` or an ISO 8601 timestamp.
  public static var valueKind: ValueKind { .date }

  /// The date given.
  public init?(argument value: ArgumentValue) {
    guard case .date(let date) = value else { return nil }
    self = date
  }

  /// The instant in ISO 8601.
  public var defaultValueDescription: String { DateParser.iso8601(date, timeZone: timeZone) }
}

/// A closed set of words (`--mode hybrid|vector|keyword`): every case is a choice, by raw value.
extension ExpressibleByArgument where Self: CaseIterable & RawRepresentable, RawValue == String {
  /// One of the cases' raw values, in declaration order.
  public static var valueKind: ValueKind { .choice(allCases.map(\.rawValue)) }

  /// The case whose raw value was given.
  public init?(argument value: ArgumentValue) {
    guard case .string(let word) = value else { return nil }
    self.init(rawValue: word)
  }

  /// The raw value.
  public var defaultValueDescription: String { rawValue }
}

extension SearchMode: ExpressibleByArgument {}
extension ItemKind: ExpressibleByArgument {}
extension ConversationFile.Format: ExpressibleByArgument {}
extension DateOrder: ExpressibleByArgument {}

/// A length of time given as `30d`, `12h` or `1h30m` (see ``DurationParser``).
public struct TimeSpan: ExpressibleByArgument, Hashable {
  /// The length in seconds.
  public var seconds: TimeInterval
  /// How it was written, when it was (help shows a default as written: `30d`, not `4w 2d`).
  var text: String?

  /// A span of `seconds`.
  public init(seconds: TimeInterval) {
    self.seconds = seconds
  }

  /// `days` days, written `<days>d`.
  public static func days(_ days: Int) -> TimeSpan {
    var span = TimeSpan(seconds: Double(days) * 86_400)
    span.text = "\(days)d"
    return span
  }

  /// A duration with units s, m, h, d, w.
  public static var valueKind: ValueKind { .duration }

  /// The span given.
  public init?(argument value: ArgumentValue) {
    guard case .duration(let seconds) = value else { return nil }
    self.init(seconds: seconds)
  }

  /// `30d`.
  public var defaultValueDescription: String { text ?? DurationParser.format(seconds) }
}
