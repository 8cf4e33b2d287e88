import Foundation
import Testing

@testable import EngramCLI

@Suite struct DurationParserTests {
  @Test(arguments: [
    ("45s", 45.0), ("30m", 1_800), ("12h", 43_200), ("30d", 2_592_000), ("2w", 1_209_600),
    ("1h30m", 5_400), ("1D", 86_400), (" 0s ", 0), ("1w2d3h4m5s", 788_645),
  ])
  func parsesUnitsAndCombinations(text: String, seconds: Double) {
    #expect(DurationParser.parse(text) == seconds)
  }

  @Test(arguments: ["", "30", "d", "30x", "1.5h", "-3d", "3d4", "1h1h", "h1", "30 d", "３０d"])
  func rejectsEverythingElse(text: String) {
    #expect(DurationParser.parse(text) == nil)
  }

  @Test func rejectsOverflow() {
    #expect(DurationParser.parse(String(repeating: "9", count: 40) + "s") == nil)
  }

  @Test func formatsTheTwoLargestUnits() {
    #expect(DurationParser.format(0) == "0s")
    #expect(DurationParser.format(45) == "45s")
    #expect(DurationParser.format(93_784) == "1d 2h")
    #expect(DurationParser.format(-1) == "?")
  }
}

@Suite struct DateParserTests {
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
