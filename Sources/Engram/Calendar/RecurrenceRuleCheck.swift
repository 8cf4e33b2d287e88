import Foundation

/// What an import refuses in an `RRULE` value (RFC 5545 3.3.10): the rule parts it names are
/// checked for their form, so `INTERVAL=0`, `COUNT=-1`, an unknown `FREQ` or `COUNT` with
/// `UNTIL` stop the import with their line. A well-formed rule Engram does not expand (ordinal
/// `BYDAY`, `BYSETPOS`, ...) is kept and written back as it came.
enum RecurrenceRuleCheck {
  /// Why `rule` is not a recurrence rule, or nil when it is one.
  static func problem(_ rule: String) -> String? {
    var seen: Set<String> = []
    for part in rule.split(separator: ";", omittingEmptySubsequences: false) {
      let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard pair.count == 2, !pair[0].isEmpty else { return "'\(part)' is not NAME=VALUE" }
      let name = pair[0].uppercased()
      let value = String(pair[1]).uppercased()
      guard seen.insert(name).inserted else { return "\(name) is given twice" }
      if name.hasPrefix("X-") { continue }
      switch name {
      case "FREQ":
        guard ["SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"].contains(value)
        else {
          return "FREQ must be one of SECONDLY ... YEARLY, not \(value)"
        }
      case "INTERVAL", "COUNT":
        guard let number = Int(value), number >= 1, value.allSatisfy(\.isNumber) else {
          return "\(name) must be a whole number of at least 1, not \(value)"
        }
      case "UNTIL":
        guard WallClock(value) != nil else { return "UNTIL must be a date or date-time, not \(value)" }
      case "BYDAY":
        for day in value.split(separator: ",", omittingEmptySubsequences: false) {
          let weekday = String(day.suffix(2))
          guard Recurrence.weekdayNames[weekday] != nil, ordinalIsValid(day.dropLast(2), limit: 53) else {
            return "BYDAY must list weekdays (MO, 2TU, -1FR), not \(day)"
          }
        }
      case "WKST":
        guard Recurrence.weekdayNames[value] != nil else {
          return "WKST must be a weekday (MO ... SU), not \(value)"
        }
      case "BYSECOND", "BYMINUTE", "BYHOUR":
        let limit = ["BYSECOND": 60, "BYMINUTE": 59, "BYHOUR": 23][name]!
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
          guard let number = Int(item), (0...limit).contains(number), item.allSatisfy(\.isNumber) else {
            return "\(name) must list numbers from 0 to \(limit), not \(item)"
          }
        }
      case "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYSETPOS", "BYMONTH":
        let limit = ["BYMONTHDAY": 31, "BYYEARDAY": 366, "BYWEEKNO": 53, "BYSETPOS": 366, "BYMONTH": 12][
          name]!
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
          guard !item.isEmpty, ordinalIsValid(item, limit: limit),
            !(name == "BYMONTH" && item.hasPrefix("-")),
            Int(item).map({ $0 != 0 }) ?? false
          else { return "\(name) must list numbers from 1 to \(limit) (or -\(limit) to -1), not \(item)" }
        }
      default:
        return "\(name) is not a rule part"
      }
    }
    guard seen.contains("FREQ") else { return "it has no FREQ" }
    if seen.contains("COUNT") && seen.contains("UNTIL") { return "COUNT and UNTIL cannot both be given" }
    return nil
  }

  /// Empty, or `[+-]digits` between 1 and `limit`.
  static func ordinalIsValid(_ text: Substring, limit: Int) -> Bool {
    guard !text.isEmpty else { return true }
    var digits = text
    if digits.first == "+" || digits.first == "-" { digits = digits.dropFirst() }
    guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(digits) else {
      return false
    }
    return (1...limit).contains(number)
  }
}
