import EngramTestSupport
import Foundation
import Testing

@testable import EngramCore

/// The one Gregorian arithmetic (`CivilCalendar`) against Foundation's `Calendar` as an
/// independent oracle, and against itself over every day a date can name.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct CivilCalendarTests {
  /// Every day from 0001-01-01 to 9999-12-31 reads back as its number, and each follows the
  /// one before it: the next day of the month, or the first of the next month after the
  /// month's last day (February 29 exactly in leap years).
  @Test func everyDayFromYearOneToYear9999FollowsTheOneBefore() {
    let first = CivilCalendar.days(year: 1, month: 1, day: 1)
    let last = CivilCalendar.days(year: 9999, month: 12, day: 31)
    var previous = CivilCalendar.civil(days: first)
    #expect(previous == (1, 1, 1))
    var mismatches = 0
    for day in (first + 1)...last {
      let date = CivilCalendar.civil(days: day)
      let follows =
        previous.day < CivilCalendar.daysIn(year: previous.year, month: previous.month)
        ? date == (previous.year, previous.month, previous.day + 1)
        : previous.month < 12
          ? date == (previous.year, previous.month + 1, 1) : date == (previous.year + 1, 1, 1)
      if !follows || CivilCalendar.days(year: date.year, month: date.month, day: date.day) != day {
        mismatches += 1
      }
      previous = date
    }
    #expect(mismatches == 0)
    #expect(last - first + 1 == 3_652_059)
  }

  /// Month lengths and the day numbers of every month's first and last day, 1583 (the first
  /// whole Gregorian year `Calendar` counts) to 9999, are `Calendar`'s.
  @Test func monthsMatchFoundationsGregorianCalendar() throws {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
    var mismatches: [String] = []
    for year in 1583...9999 {
      for month in 1...12 {
        let start = try #require(calendar.date(from: DateComponents(year: year, month: month, day: 1)))
        let length = try #require(calendar.range(of: .day, in: .month, for: start)).count
        let days = CivilCalendar.days(year: Int64(year), month: Int64(month), day: 1)
        let lastDay = days + Int64(length) - 1
        if CivilCalendar.daysIn(year: Int64(year), month: Int64(month)) != Int64(length)
          || days * 86_400 != Int64(start.timeIntervalSince1970)
          || CivilCalendar.civil(days: lastDay) != (Int64(year), Int64(month), Int64(length))
        {
          mismatches.append("\(year)-\(month)")
        }
      }
    }
    #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
  }

  @Test func leapDaysAndDivisionBeforeNineteenSeventy() {
    #expect(CivilCalendar.daysIn(year: 2000, month: 2) == 29)
    #expect(CivilCalendar.daysIn(year: 1900, month: 2) == 28)
    #expect(CivilCalendar.daysIn(year: 2024, month: 2) == 29)
    #expect(CivilCalendar.daysIn(year: 2100, month: 2) == 28)
    #expect(CivilCalendar.daysIn(year: 2400, month: 2) == 29)
    #expect(CivilCalendar.days(year: 1970, month: 1, day: 1) == 0)
    #expect(CivilCalendar.days(year: 1969, month: 12, day: 31) == -1)
    #expect(
      CivilCalendar.days(year: 2024, month: 2, day: 30) == CivilCalendar.days(year: 2024, month: 3, day: 1))
    #expect(CivilCalendar.civil(days: -1) == (1969, 12, 31))
    #expect(CivilCalendar.floorDivision(-1, 86_400) == -1)
    #expect(CivilCalendar.floorDivision(-86_400, 86_400) == -1)
    #expect(CivilCalendar.floorDivision(-86_401, 86_400) == -2)
    #expect(CivilCalendar.floorDivision(86_399, 86_400) == 0)
  }
}
