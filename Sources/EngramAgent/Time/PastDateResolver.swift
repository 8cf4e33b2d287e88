import EngramCore
import Foundation

/// Reads when something a person told happened, from a sentence and the day it was said:
/// "yesterday", "last Saturday", "two weeks ago", "last year", 昨天, 去年 (the parser of
/// `DateExpressionParser` reads times ahead, for reminders; this one reads times behind).
/// Answers to "when ..." questions lead with what it finds.
public enum PastDateResolver {
  /// What a sentence says about when, resolved against the day it was said.
  public struct Resolved: Sendable, Hashable {
    /// The expression as written ("last Saturday").
    public var expression: String
    /// The day (or the first day of the week, month or year) it names.
    public var date: Date
    /// How precise it is.
    public var unit: Unit

    public enum Unit: Sendable, Hashable {
      case day, week, weekend, month, year
    }
  }

  /// The first past time expression of `sentence`, resolved against `said`; nil when it
  /// names none (or only the day it was said: "today").
  public static func resolve(_ sentence: String, said: Date, calendar: Calendar) -> Resolved? {
    let lowered = sentence.lowercased()
    var found: [(range: Range<String.Index>, resolved: Resolved)] = []
    func add(_ pattern: String, _ make: (Regex<AnyRegexOutput>.Match) -> (Date, Resolved.Unit)?) {
      guard let regex = try? Regex(pattern), let match = lowered.firstMatch(of: regex),
        let (date, unit) = make(match)
      else { return }
      found.append(
        (
          match.range,
          Resolved(
            expression: String(sentence[match.range]), date: calendar.startOfDay(for: date), unit: unit)
        ))
    }
    let day = calendar.startOfDay(for: said)
    func shift(_ component: Calendar.Component, _ value: Int) -> Date? {
      calendar.date(byAdding: component, value: value, to: day)
    }
    add(#"\byesterday\b|\blast night\b"#) { _ in shift(.day, -1).map { ($0, .day) } }
    add(#"\bthe day before yesterday\b"#) { _ in shift(.day, -2).map { ($0, .day) } }
    add(#"\blast (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"#) { match in
      guard let name = match.output[1].substring, let target = weekdays.firstIndex(of: String(name)) else {
        return nil
      }
      let today = calendar.component(.weekday, from: day) - 1
      var back = (today - target + 7) % 7
      if back == 0 { back = 7 }
      return shift(.day, -back).map { ($0, .day) }
    }
    add(#"\blast weekend\b"#) { _ in
      let today = calendar.component(.weekday, from: day) - 1
      // The Saturday before the day it was said (a Sunday's "last weekend" is the one before).
      var back = (today - 6 + 7) % 7
      if back == 0 || today == 0 { back += 7 }
      return shift(.day, -back).map { ($0, .weekend) }
    }
    add(#"\blast week\b"#) { _ in shift(.day, -7).map { ($0, .week) } }
    add(#"\blast month\b"#) { _ in shift(.month, -1).map { ($0, .month) } }
    add(#"\blast year\b"#) { _ in shift(.year, -1).map { ($0, .year) } }
    add(
      #"\b(a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|\d{1,2}) (day|week|month|year)s? ago\b"#
    ) {
      match in
      guard let count = match.output[1].substring.flatMap({ number(String($0)) }),
        let unitText = match.output[2].substring
      else { return nil }
      switch unitText {
      case "day": return shift(.day, -count).map { ($0, .day) }
      case "week": return shift(.day, -7 * count).map { ($0, .week) }
      case "month": return shift(.month, -count).map { ($0, .month) }
      default: return shift(.year, -count).map { ($0, .year) }
      }
    }
    for (text, value, unit) in chinese {
      if let range = sentence.range(of: text), let date = shift(value.0, value.1) {
        found.append((range, Resolved(expression: text, date: date, unit: unit)))
      }
    }
    return found.min { $0.range.lowerBound < $1.range.lowerBound }?.resolved
  }

  /// The resolved time as an answer reads it: "7 May 2023", "the week of 1 May 2023",
  /// "April 2023", "2022" (Chinese: 2023年5月7日, ...).
  public static func describe(_ resolved: Resolved, calendar: Calendar, language: MessageLanguage)
    -> String
  {
    let parts = calendar.dateComponents([.year, .month, .day], from: resolved.date)
    let (year, month, day) = (parts.year!, parts.month!, parts.day!)
    switch language {
    case .english:
      let monthName = months[month - 1]
      switch resolved.unit {
      case .day: return "\(day) \(monthName) \(year)"
      case .week: return "the week of \(day) \(monthName) \(year)"
      case .weekend: return "the weekend of \(day) \(monthName) \(year)"
      case .month: return "\(monthName) \(year)"
      case .year: return String(year)
      }
    case .chinese:
      switch resolved.unit {
      case .day: return "\(year)年\(month)月\(day)日"
      case .week: return "\(year)年\(month)月\(day)日那一周"
      case .weekend: return "\(year)年\(month)月\(day)日那个周末"
      case .month: return "\(year)年\(month)月"
      case .year: return "\(year)年"
      }
    }
  }

  static func number(_ text: String) -> Int? {
    if let value = Int(text) { return value }
    return ["a": 1, "an": 1, "a few": 3][text] ?? Lexicon.englishNumbers[text]
  }

  static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
  static let months = Lexicon.months
  static let chinese: [(String, (Calendar.Component, Int), Resolved.Unit)] = [
    ("前天", (.day, -2), .day), ("昨天", (.day, -1), .day), ("昨晚", (.day, -1), .day),
    ("上周", (.day, -7), .week), ("上个星期", (.day, -7), .week), ("上个月", (.month, -1), .month),
    ("去年", (.year, -1), .year), ("前年", (.year, -2), .year),
  ]
}
