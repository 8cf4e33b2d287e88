import EngramCore
import Foundation

/// The days (or weeks) between two days, asked as a number ("how many days until 26 July",
/// 距离国庆还有多少天, "weeks since 3 March"): from the earlier day to the later, today being
/// the other when the text names one day only.
///
/// The calculator keeps it as `days from 2025-06-11 to 2025-07-26`, which reads the same
/// whatever the clock; a request whose other day is one the user stored ("…till the date I
/// gave you") gets it from the recall before it (`DateSpan.completed(_:with:clock:)`).
struct DateSpan: Sendable, Equatable {
  enum Unit: String, Sendable {
    case days, weeks
  }

  /// The earlier and the later day, as civil dates.
  var from: (year: Int64, month: Int64, day: Int64)
  var to: (year: Int64, month: Int64, day: Int64)
  var unit: Unit

  static func == (lhs: DateSpan, rhs: DateSpan) -> Bool {
    lhs.from == rhs.from && lhs.to == rhs.to && lhs.unit == rhs.unit
  }

  /// The whole days from `from` to `to`.
  var days: Int64 { Self.number(to) - Self.number(from) }

  /// The span in its unit (weeks may be fractional).
  var value: Double { unit == .weeks ? Double(days) / 7 : Double(days) }

  /// The form the calculator keeps: `days from 2025-06-11 to 2025-07-26`.
  var expression: String {
    "\(unit.rawValue) from \(Self.iso(from)) to \(Self.iso(to))"
  }

  /// The unit a text asks a span in ("how many days", 还有几周), or nil when it asks none.
  static func askedUnit(in text: String) -> Unit? {
    let lower = text.lowercased()
    if SkillWords.list("calculator.span_asks_weeks").contains(where: { lower.contains($0) }) { return .weeks }
    if SkillWords.list("calculator.span_asks_days").contains(where: { lower.contains($0) }) { return .days }
    return nil
  }

  /// The span `text` asks for, with both days read (one of them may be today, unsaid); nil when
  /// it asks none, or names no day but today (the other is then one the user stored).
  static func parse(_ text: String, clock: AgentClock) -> DateSpan? {
    if let kept = parseExpression(text) { return kept }
    guard let unit = askedUnit(in: text) else { return nil }
    var days = self.days(in: text, clock: clock)
    let today = civil(clock.now, clock: clock)
    // A day said without its year is the next one: "since 3 March" means the last one, and
    // "between 3 March and 26 July" the one before the second day.
    let namesYear = text.contains(/\d{4}/) || text.contains("年")
    func yearEarlier(_ day: (year: Int64, month: Int64, day: Int64)) -> (
      year: Int64, month: Int64, day: Int64
    ) {
      (day.year - 1, day.month, min(day.day, CivilCalendar.daysIn(year: day.year - 1, month: day.month)))
    }
    switch days.count {
    case 1 where days[0] != today:
      let lower = text.lowercased()
      if !namesYear, number(days[0]) > number(today),
        SkillWords.list("calculator.span_since").contains(where: { lower.contains($0) })
      {
        days[0] = yearEarlier(days[0])
      }
      return ordered(days[0], today, unit: unit)
    case 2...:
      if !namesYear, number(days[0]) > number(days[1]), number(yearEarlier(days[0])) <= number(days[1]) {
        days[0] = yearEarlier(days[0])
      }
      return ordered(days[0], days[1], unit: unit)
    default:
      return nil
    }
  }

  private static func number(_ day: (year: Int64, month: Int64, day: Int64)) -> Int64 {
    CivilCalendar.days(year: day.year, month: day.month, day: day.day)
  }

  /// `text`'s span with its missing day taken from `answer` (a recalled fact that names a
  /// date): nil when `text` asks no span or `answer` names no day.
  static func completed(_ text: String, with answer: String, clock: AgentClock) -> DateSpan? {
    // A memory's answer ends with the day it was stored, "(2025-05-02)": not the day it names.
    let named = answer.replacing(/\(\d{4}-\d{2}-\d{2}\)/, with: "")
    guard let unit = askedUnit(in: text) ?? parseExpression(text)?.unit,
      let recalled = self.days(in: named, clock: clock).first
    else { return nil }
    let asked = self.days(in: text, clock: clock).first ?? civil(clock.now, clock: clock)
    return ordered(asked, recalled, unit: unit)
  }

  /// What a span's stored end is ("the visa expiry date" of "how many days until the visa
  /// expiry date I gave you"): the text without the question for a span, today, and the words
  /// that say it was stored; what to recall.
  static func subject(of text: String) -> String {
    var rest = text.lowercased()
    let phrases =
      [
        "calculator.span_asks_weeks", "calculator.span_asks_days", "calculator.span_openers",
        "plan.stored_before",
      ]
      .flatMap(SkillWords.list).sorted { $0.count > $1.count }
    for phrase in phrases {
      rest = rest.replacingOccurrences(of: phrase, with: " ")
    }
    let words = rest.split(whereSeparator: { $0.isWhitespace || $0 == "?" || $0 == "？" })
    let subject = words.joined(separator: " ").trimmingCharacters(in: .whitespaces)
    return subject.isEmpty ? text : subject
  }

  /// The calculator's own form, read back.
  static func parseExpression(_ text: String) -> DateSpan? {
    guard
      let match = text.lowercased().wholeMatch(
        of: /\s*(days|weeks) from (\d{1,4})-(\d{2})-(\d{2}) to (\d{1,4})-(\d{2})-(\d{2})\s*/),
      let unit = Unit(rawValue: String(match.output.1)),
      let fromYear = Int64(match.output.2), let fromMonth = Int64(match.output.3),
      let fromDay = Int64(match.output.4),
      let toYear = Int64(match.output.5), let toMonth = Int64(match.output.6),
      let toDay = Int64(match.output.7),
      (1...12).contains(fromMonth), (1...12).contains(toMonth),
      (1...CivilCalendar.daysIn(year: fromYear, month: fromMonth)).contains(fromDay),
      (1...CivilCalendar.daysIn(year: toYear, month: toMonth)).contains(toDay)
    else { return nil }
    return ordered((fromYear, fromMonth, fromDay), (toYear, toMonth, toDay), unit: unit)
  }

  /// The days `text` names, in order (a second one read after the first).
  private static func days(in text: String, clock: AgentClock) -> [(year: Int64, month: Int64, day: Int64)] {
    let parser = DateExpressionParser(clock: clock)
    var found: [(year: Int64, month: Int64, day: Int64)] = []
    var rest = Substring(text)
    while found.count < 2, let match = parser.parse(String(rest)), match.hasDay {
      found.append(civil(match.date, clock: clock))
      let searched = String(rest)
      rest = rest.dropFirst(searched.distance(from: searched.startIndex, to: match.range.upperBound))
    }
    return found
  }

  private static func civil(_ date: Date, clock: AgentClock) -> (year: Int64, month: Int64, day: Int64) {
    let parts = clock.calendar.dateComponents([.year, .month, .day], from: date)
    return (Int64(parts.year ?? 1), Int64(parts.month ?? 1), Int64(parts.day ?? 1))
  }

  private static func ordered(
    _ first: (year: Int64, month: Int64, day: Int64), _ second: (year: Int64, month: Int64, day: Int64),
    unit: Unit
  ) -> DateSpan {
    number(first) <= number(second)
      ? DateSpan(from: first, to: second, unit: unit) : DateSpan(from: second, to: first, unit: unit)
  }

  private static func iso(_ day: (year: Int64, month: Int64, day: Int64)) -> String {
    String(format: "%04d-%02d-%02d", day.year, day.month, day.day)
  }
}
