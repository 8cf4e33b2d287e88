import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// A recurrence's days come from EngramCore's calendar arithmetic (`CivilCalendar`): checked
/// against Foundation's Gregorian `Calendar` as an independent oracle, for every start day of
/// two years (month ends, February 29) in zones with and without daylight saving.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RecurrenceCalendarTests {
  static let zones = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago"]

  /// The first `count` occurrences of a monthly (or, with `months` 12, yearly) rule from
  /// `start` day in `zone` at 10:30 local, by `Calendar`: the same day of the month in each
  /// period that has it, the periods without it skipped.
  static func oracle(
    year: Int, month: Int, day: Int, months: Int, count: Int, calendar: Calendar
  ) -> [Date] {
    var found: [Date] = []
    var period = 0
    while found.count < count {
      let index = year * 12 + month - 1 + period * months
      let (periodYear, periodMonth) = (index / 12, index % 12 + 1)
      let first = calendar.date(from: DateComponents(year: periodYear, month: periodMonth, day: 1))!
      if day <= calendar.range(of: .day, in: .month, for: first)!.count {
        found.append(
          calendar.date(
            from: DateComponents(year: periodYear, month: periodMonth, day: day, hour: 10, minute: 30))!)
      }
      period += 1
    }
    return found
  }

  @Test(arguments: zones) func monthlyAndYearlyDaysMatchFoundationsCalendar(zone: String) throws {
    let timeZone = try #require(TimeZone(identifier: zone))
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let monthly = try #require(Recurrence("FREQ=MONTHLY;COUNT=14"))
    let yearly = try #require(Recurrence("FREQ=YEARLY;COUNT=9"))
    let end = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01
    var day = calendar.date(from: DateComponents(year: 2023, month: 1, day: 1, hour: 10, minute: 30))!
    var checked = 0
    while calendar.component(.year, from: day) < 2025 {
      let parts = calendar.dateComponents([.year, .month, .day], from: day)
      let (year, month, dayOfMonth) = (parts.year!, parts.month!, parts.day!)
      #expect(
        monthly.occurrences(from: day, in: day..<end, timeZone: timeZone)
          == Self.oracle(year: year, month: month, day: dayOfMonth, months: 1, count: 14, calendar: calendar),
        "\(zone) monthly from \(year)-\(month)-\(dayOfMonth)")
      #expect(
        yearly.occurrences(from: day, in: day..<end, timeZone: timeZone)
          == Self.oracle(year: year, month: month, day: dayOfMonth, months: 12, count: 9, calendar: calendar),
        "\(zone) yearly from \(year)-\(month)-\(dayOfMonth)")
      day = calendar.date(byAdding: .day, value: 1, to: day)!
      checked += 1
    }
    #expect(checked == 731)
  }

  @Test func aDailyRuleKeepsItsWallClockAcrossEveryChangeOfADaylightSavingZone() throws {
    for zone in Self.zones {
      let timeZone = try #require(TimeZone(identifier: zone))
      var calendar = Calendar(identifier: .gregorian)
      calendar.timeZone = timeZone
      let start = calendar.date(from: DateComponents(year: 2023, month: 1, day: 1, hour: 10, minute: 30))!
      let daily = try #require(Recurrence("FREQ=DAILY;COUNT=1500"))
      let found = daily.occurrences(
        from: start, in: start..<Date(timeIntervalSince1970: 4_102_444_800), timeZone: timeZone, limit: 2000)
      #expect(found.count == 1500)
      for (offset, date) in found.enumerated() {
        let expected = calendar.date(byAdding: .day, value: offset, to: start)!
        #expect(date == expected, "\(zone) day \(offset)")
        if date != expected { break }
      }
    }
  }
}
