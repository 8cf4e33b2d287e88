import EngramTestSupport
import Foundation
import Testing

@testable import EngramCore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct DateParserTests {
  let utc = TimeZone(secondsFromGMT: 0)!

  @Test func wholeDaysStartAtMidnightInTheGivenZone() throws {
    let parsed = try #require(DateParser.parse("2024-05-01", timeZone: utc))
    #expect(parsed.isWholeDay)
    #expect(parsed.date == Date(timeIntervalSince1970: 1_714_521_600))
    #expect(parsed.end == Date(timeIntervalSince1970: 1_714_608_000))
    let plusTwo = try #require(DateParser.parse("2024-05-01", timeZone: TimeZone(secondsFromGMT: 7_200)!))
    #expect(plusTwo.date == Date(timeIntervalSince1970: 1_714_521_600 - 7_200))
  }

  @Test(arguments: [
    ("2024-05-01T12:30:00Z", 1_714_566_600.0), ("2024-05-01T12:30Z", 1_714_566_600),
    ("2024-05-01t12:30:00z", 1_714_566_600), ("2024-05-01T14:30:00+02:00", 1_714_566_600),
    ("2024-05-01T07:00:00-0530", 1_714_566_600), ("2024-05-01 12:30:00.250Z", 1_714_566_600.25),
    ("2024-05-01T12:30", 1_714_566_600),
  ])
  func readsTimestamps(text: String, seconds: Double) throws {
    let parsed = try #require(DateParser.parse(text, timeZone: utc))
    #expect(!parsed.isWholeDay)
    #expect(abs(parsed.date.timeIntervalSince1970 - seconds) < 0.001)
    #expect(parsed.end == parsed.date)
  }

  @Test(arguments: [
    "", "2024", "2024-5-1", "2024-13-01", "2024-02-30", "2023-02-29", "2024-05-01T25:00", "2024-05-01T12:60",
    "2024-05-01T12", "2024-05-01T12:30:00+25:00", "2024-05-01T12:30:00.Z", "2024-05-01X", "yesterday",
    "2024-05-01T12:30:00Z extra",
  ])
  func rejectsMalformedDates(text: String) {
    #expect(DateParser.parse(text, timeZone: utc) == nil)
  }

  @Test func acceptsLeapDays() {
    #expect(DateParser.parse("2024-02-29", timeZone: utc) != nil)
  }
}

/// The one rule at the edges: days across daylight-saving changes, zones west of UTC, and
/// dates shown in the zone they were typed in.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct DateParserTimeZoneTests {
  let newYork = TimeZone(identifier: "America/New_York")!
  let utc = TimeZone(secondsFromGMT: 0)!

  @Test func aDayAtTheSpringChangeLasts23Hours() throws {
    // 2024-03-10: clocks in New York jump from 02:00 to 03:00.
    let day = try #require(DateParser.parse("2024-03-10", timeZone: newYork))
    #expect(day.end.timeIntervalSince(day.date) == 23 * 3_600)
    #expect(DateParser.display(day.end, timeZone: newYork) == "2024-03-11 00:00")
  }

  @Test func aDayAtTheAutumnChangeLasts25Hours() throws {
    // 2024-11-03: clocks in New York fall back from 02:00 to 01:00.
    let day = try #require(DateParser.parse("2024-11-03", timeZone: newYork))
    #expect(day.end.timeIntervalSince(day.date) == 25 * 3_600)
  }

  @Test func aDayInANegativeOffsetStartsAtLocalMidnight() throws {
    // UTC-5 in winter: local midnight is 05:00 UTC.
    let day = try #require(DateParser.parse("2024-01-15", timeZone: newYork))
    #expect(DateParser.display(day.date, timeZone: utc) == "2024-01-15 05:00")
    #expect(DateParser.display(day.date, timeZone: newYork) == "2024-01-15 00:00")
  }

  @Test func aTimeShownInTheReadersZoneFallsInTheDayTypedThere() throws {
    // At UTC-5, an item stored at 2024-05-01 02:00 UTC happened on April 30 locally: the
    // day typed there excludes it, and it is shown on April 30, not May 1.
    let item = try #require(DateParser.parse("2024-05-01T02:00Z", timeZone: newYork)).date
    let since = try #require(DateParser.parse("2024-05-01", timeZone: newYork))
    #expect(item < since.date)
    #expect(DateParser.day(item, timeZone: newYork) == "2024-04-30")
  }

  @Test func anOffsetInTheTextWinsOverTheReadersZone() throws {
    let parsed = try #require(DateParser.parse("2024-05-01T09:00:00-07:00", timeZone: newYork))
    #expect(parsed.timeZone.secondsFromGMT(for: parsed.date) == -7 * 3_600)
    #expect(DateParser.iso8601(parsed.date, timeZone: parsed.timeZone) == "2024-05-01T09:00:00-07:00")
  }

  @Test func instantsWithOffsetsAreTheOnlyFixedClocks() throws {
    let (date, zone) = try #require(DateParser.instantWithOffset("2025-06-11T10:00:00+08:00"))
    #expect(zone.secondsFromGMT(for: date) == 8 * 3_600)
    #expect(DateParser.instantWithOffset("2025-06-11T10:00:00Z")?.timeZone.secondsFromGMT() == 0)
    #expect(DateParser.instantWithOffset("2025-06-11T10:00:00") == nil)
    #expect(DateParser.instantWithOffset("2025-06-11") == nil)
  }
}

/// `display` and `day` compute their text by calendar arithmetic (no formatter per call):
/// the text must be the formatter's, in every zone and at the edges of the arithmetic.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct DateParserDisplayTests {
  static func formatted(_ date: Date, _ zone: TimeZone, _ pattern: String) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.calendar = Calendar(identifier: .gregorian)
    formatter.timeZone = zone
    formatter.dateFormat = pattern
    return formatter.string(from: date)
  }

  static let zones = [
    "UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "Pacific/Honolulu", "Australia/Lord_Howe",
    "Europe/London",
  ].compactMap { TimeZone(identifier: $0) }

  @Test func matchesTheFormatterInEveryZone() {
    #expect(Self.zones.count == 7)
    var generator = SystemRandomNumberGenerator()
    var instants: [Date] = [
      Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -1), Date(timeIntervalSince1970: -0.5),
      Date(timeIntervalSince1970: 86_399.9), Date(timeIntervalSince1970: 951_782_400),  // 2000-02-29
      Date(timeIntervalSince1970: 1_710_054_000), Date(timeIntervalSince1970: 1_730_613_600),  // DST edges
      Date(timeIntervalSince1970: -12_219_292_800 + 86_400 * 400),  // 1583
      Date(timeIntervalSince1970: 253_402_300_799),  // 9999-12-31 23:59:59 UTC
    ]
    for _ in 0..<400 {
      instants.append(
        Date(timeIntervalSince1970: Double.random(in: -2_208_988_800...4_102_444_800, using: &generator)))
    }
    for zone in Self.zones {
      for date in instants {
        let expected = Self.formatted(date, zone, "yyyy-MM-dd HH:mm")
        #expect(DateParser.display(date, timeZone: zone) == expected, "\(date.timeIntervalSince1970) \(zone)")
        #expect(DateParser.day(date, timeZone: zone) == Self.formatted(date, zone, "yyyy-MM-dd"))
      }
    }
  }

  @Test func outsideYears1583To9999TheFormatterAnswers() {
    let utc = TimeZone(secondsFromGMT: 0)!
    let julian = Date(timeIntervalSince1970: -12_219_292_800 - 86_400)  // 1582-10-14 (Gregorian)
    #expect(DateParser.civilText(julian, timeZone: utc, time: true) == nil)
    #expect(DateParser.display(julian, timeZone: utc) == Self.formatted(julian, utc, "yyyy-MM-dd HH:mm"))
    let far = Date(timeIntervalSince1970: 253_402_300_800)  // 10000-01-01
    #expect(DateParser.civilText(far, timeZone: utc, time: false) == nil)
    #expect(DateParser.day(far, timeZone: utc) == Self.formatted(far, utc, "yyyy-MM-dd"))
    #expect(
      DateParser.civilText(Date(timeIntervalSince1970: 1_714_528_800), timeZone: utc, time: true)
        == "2024-05-01 02:00")
  }
}
