import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Occurrences of repeating events: to the rule's own end (not an iteration cap), on the wall
/// clock of the event's own zone, DTSTART always first; a window far from the start is reached
/// by arithmetic and lists what stepping from the start would.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RecurrenceTests {
  let utc = TimeZone(identifier: "UTC")!
  let newYork = TimeZone(identifier: "America/New_York")!

  func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

  @Test func aDailyRuleWithoutAnEndIsListedSeventyYearsOn() throws {
    let rule = try #require(Recurrence("FREQ=DAILY"))
    let start = instant("1990-01-01T09:00:00Z")
    let window = instant("2060-06-01T00:00:00Z")..<instant("2060-06-04T00:00:00Z")
    #expect(
      rule.occurrences(from: start, in: window, timeZone: utc) == [
        instant("2060-06-01T09:00:00Z"), instant("2060-06-02T09:00:00Z"), instant("2060-06-03T09:00:00Z"),
      ])
    // A weekly rule begun in 2025 is still there in 2100, and a yearly one in 9999.
    let weekly = try #require(Recurrence("FREQ=WEEKLY"))
    #expect(
      weekly.occurrences(
        from: instant("2025-01-06T10:00:00Z"),
        in: instant("2100-01-01T00:00:00Z")..<instant("2100-01-08T00:00:00Z"),
        timeZone: utc
      ).count == 1)
    let yearly = try #require(Recurrence("FREQ=YEARLY"))
    let far = Date(timeIntervalSince1970: 253_370_764_800)  // 9999-01-01T00:00:00Z
    #expect(
      yearly.occurrences(
        from: instant("2025-03-01T10:00:00Z"), in: far..<far.addingTimeInterval(366 * 86_400), timeZone: utc
      )
      .count == 1)
  }

  @Test func aCountEndsTheRuleExactlyFarFromItsStart() throws {
    let rule = try #require(Recurrence("FREQ=DAILY;COUNT=20000"))
    let start = instant("1990-01-01T09:00:00Z")
    let last = start.addingTimeInterval(19_999 * 86_400)
    let window = last.addingTimeInterval(-86_400)..<last.addingTimeInterval(5 * 86_400)
    #expect(
      rule.occurrences(from: start, in: window, timeZone: utc) == [last.addingTimeInterval(-86_400), last])
    // The 31st of a month, COUNT=40: months without one are skipped and not counted.
    let monthly = try #require(Recurrence("FREQ=MONTHLY;COUNT=40"))
    let january31 = instant("2001-01-31T12:00:00Z")
    let all = monthly.occurrences(
      from: january31, in: january31..<instant("2100-01-01T00:00:00Z"), timeZone: utc)
    #expect(all.count == 40)
    let tail = monthly.occurrences(
      from: january31, in: all[37]..<instant("2100-01-01T00:00:00Z"), timeZone: utc)
    #expect(tail == Array(all[37...]))
  }

  @Test func aWeeklyRuleRunsOnItsOwnZonesDaysAndCountsDTSTART() throws {
    // Saturday 19:00 in New York is Sunday 08:00 in Tokyo: the rule's days are New York's.
    let rule = try #require(Recurrence("FREQ=WEEKLY;BYDAY=SA;COUNT=3"))
    let start = instant("2025-06-14T19:00:00-04:00")
    let window = instant("2025-06-01T00:00:00Z")..<instant("2025-12-01T00:00:00Z")
    #expect(
      rule.occurrences(from: start, in: window, timeZone: newYork) == [
        start, instant("2025-06-21T19:00:00-04:00"), instant("2025-06-28T19:00:00-04:00"),
      ])
    // A DTSTART on a day the rule does not name is still the first occurrence, and counts.
    let friday = instant("2025-06-13T19:00:00-04:00")
    #expect(
      rule.occurrences(from: friday, in: window, timeZone: newYork) == [
        friday, instant("2025-06-14T19:00:00-04:00"), instant("2025-06-21T19:00:00-04:00"),
      ])
    // Across the change to winter time, 19:00 stays 19:00 in New York.
    let weekly = try #require(Recurrence("FREQ=WEEKLY;COUNT=2"))
    #expect(
      weekly.occurrences(from: instant("2025-10-29T19:00:00-04:00"), in: window, timeZone: newYork) == [
        instant("2025-10-29T19:00:00-04:00"), instant("2025-11-05T19:00:00-05:00"),
      ])
  }

  /// A window far from the start (reached by arithmetic) lists exactly the occurrences that a
  /// walk from the start finds in it, over random rules, zones and windows.
  @Test func aFarWindowListsWhatAWalkFromTheStartFinds() throws {
    var generator = SplitMix64(seed: 0x5EED_CA1E)
    let zones = [
      "UTC", "America/New_York", "Europe/London", "Asia/Tokyo", "Australia/Lord_Howe", "Asia/Kolkata",
    ]
    for _ in 0..<300 {
      let text = RuleSamples.rule(using: &generator, untilAfter: nil)
      let rule = try #require(Recurrence(text), "\(text)")
      let zone = TimeZone(identifier: zones.randomElement(using: &generator)!)!
      let start = Date(timeIntervalSince1970: Double(Int64.random(in: 0...2_000_000_000, using: &generator)))
      let span = Int.random(in: 1...3_000, using: &generator)
      let end = start.addingTimeInterval(Double(span) * 86_400)
      let all = rule.occurrences(from: start, in: start..<end, timeZone: zone, limit: 100_000)
      let lower = start.addingTimeInterval(Double(Int.random(in: 0..<span, using: &generator)) * 86_400)
      let part = rule.occurrences(from: start, in: lower..<end, timeZone: zone, limit: 100_000)
      #expect(part == all.filter { $0 >= lower }, "\(text) from \(start) in \(zone.identifier)")
    }
  }
}

/// Random recurrence rules of the kinds Engram expands.
enum RuleSamples {
  static func rule(using generator: inout some RandomNumberGenerator, untilAfter start: Date?) -> String {
    let frequency = ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"].randomElement(using: &generator)!
    var parts = ["FREQ=" + frequency]
    if Bool.random(using: &generator) { parts.append("INTERVAL=\(Int.random(in: 1...4, using: &generator))") }
    if frequency == "WEEKLY", Bool.random(using: &generator) {
      let days = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"].filter { _ in Bool.random(using: &generator) }
      if !days.isEmpty { parts.append("BYDAY=" + days.joined(separator: ",")) }
      if Bool.random(using: &generator) {
        parts.append("WKST=" + ["MO", "SU", "WE"].randomElement(using: &generator)!)
      }
    }
    switch Int.random(in: 0..<3, using: &generator) {
    case 0: parts.append("COUNT=\(Int.random(in: 1...60, using: &generator))")
    case 1:
      if let start {
        let until = start.addingTimeInterval(Double(Int.random(in: 0...800, using: &generator)) * 86_400)
        let text = ICalendarWriter.utc(until)
        parts.append("UNTIL=" + (Bool.random(using: &generator) ? text : String(text.prefix(8))))
      }
    default: break
    }
    return parts.joined(separator: ";")
  }
}
