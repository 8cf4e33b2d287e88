import Foundation
import Testing

@testable import EngramAgent

@Suite struct DateExpressionParserTests {
  // Wednesday 11 June 2025, 10:00 in Shanghai.
  static let now = wallClock(2025, 6, 11, 10, in: Zones.shanghai)
  let parser = DateExpressionParser(clock: .fixed(now, timeZone: Zones.shanghai))

  struct Case: Sendable, CustomStringConvertible {
    var text: String
    var expected: [Int]  // year, month, day, hour, minute
    var matched: String
    var description: String { text }
  }

  static let cases: [Case] = [
    Case(text: "明天下午三点", expected: [2025, 6, 12, 15, 0], matched: "明天下午三点"),
    Case(text: "后天上午十点半开会", expected: [2025, 6, 13, 10, 30], matched: "后天上午十点半"),
    Case(text: "周六上午去取快递", expected: [2025, 6, 14, 9, 0], matched: "周六上午"),
    Case(text: "下周一交报告", expected: [2025, 6, 16, 9, 0], matched: "下周一"),
    Case(text: "下周三", expected: [2025, 6, 18, 9, 0], matched: "下周三"),
    Case(text: "两小时后提醒我", expected: [2025, 6, 11, 12, 0], matched: "两小时后"),
    Case(text: "一个半小时后", expected: [2025, 6, 11, 11, 30], matched: "一个半小时后"),
    Case(text: "三天后", expected: [2025, 6, 14, 9, 0], matched: "三天后"),
    Case(text: "今晚八点看电影", expected: [2025, 6, 11, 20, 0], matched: "今晚八点"),
    Case(text: "明天三点一刻", expected: [2025, 6, 12, 15, 15], matched: "明天三点一刻"),
    Case(text: "明天晚上十二点", expected: [2025, 6, 13, 0, 0], matched: "明天晚上十二点"),
    Case(text: "明早七点", expected: [2025, 6, 12, 7, 0], matched: "明早七点"),
    Case(text: "6月20日下午2点", expected: [2025, 6, 20, 14, 0], matched: "6月20日下午2点"),
    Case(text: "1月5号", expected: [2026, 1, 5, 9, 0], matched: "1月5号"),
    Case(text: "tomorrow at 3pm", expected: [2025, 6, 12, 15, 0], matched: "tomorrow at 3pm"),
    Case(text: "call mom next Friday", expected: [2025, 6, 20, 9, 0], matched: "next Friday"),
    Case(text: "in 2 hours", expected: [2025, 6, 11, 12, 0], matched: "in 2 hours"),
    Case(text: "in 30 minutes", expected: [2025, 6, 11, 10, 30], matched: "in 30 minutes"),
    Case(text: "in half an hour", expected: [2025, 6, 11, 10, 30], matched: "in half an hour"),
    Case(text: "tonight at 8", expected: [2025, 6, 11, 20, 0], matched: "tonight at 8"),
    Case(text: "dentist on Monday", expected: [2025, 6, 16, 9, 0], matched: "on Monday"),
    Case(text: "on Wednesday", expected: [2025, 6, 18, 9, 0], matched: "on Wednesday"),
    Case(text: "standup at 9:30", expected: [2025, 6, 11, 21, 30], matched: "at 9:30"),
    Case(text: "at 11:15", expected: [2025, 6, 11, 11, 15], matched: "at 11:15"),
    Case(text: "at 9:30 am", expected: [2025, 6, 12, 9, 30], matched: "at 9:30 am"),
    Case(text: "review 2027-01-05 14:00", expected: [2027, 1, 5, 14, 0], matched: "2027-01-05 14:00"),
    Case(text: "in 3 days", expected: [2025, 6, 14, 9, 0], matched: "in 3 days"),
    Case(text: "tomorrow morning", expected: [2025, 6, 12, 9, 0], matched: "tomorrow morning"),
    Case(text: "at noon", expected: [2025, 6, 11, 12, 0], matched: "at noon"),
    Case(text: "Friday at 10am", expected: [2025, 6, 13, 10, 0], matched: "Friday at 10am"),
  ]

  @Test(arguments: cases)
  func resolvesExpression(_ testCase: Case) throws {
    let match = try #require(parser.parse(testCase.text))
    let e = testCase.expected
    #expect(match.date == wallClock(e[0], e[1], e[2], e[3], e[4], in: Zones.shanghai))
    #expect(String(testCase.text[match.range]) == testCase.matched)
  }

  @Test func textWithoutDateHasNoMatch() {
    #expect(parser.parse("buy milk") == nil)
    #expect(parser.parse("把会议记录发我") == nil)
    #expect(parser.parse("") == nil)
  }

  @Test func dayOnlyExpressionsUseDefaultHourAndSayNoTime() throws {
    let match = try #require(parser.parse("明天"))
    #expect(!match.hasTime)
    #expect(match.date == wallClock(2025, 6, 12, 9, in: Zones.shanghai))
    #expect(try #require(parser.parse("明天下午")).hasTime)
  }

  @Test func newYearsEveRollsIntoNextYear() throws {
    let clock = AgentClock.fixed(
      wallClock(2025, 12, 31, 23, 30, in: Zones.shanghai), timeZone: Zones.shanghai)
    let parser = DateExpressionParser(clock: clock)
    #expect(try #require(parser.parse("明天")).date == wallClock(2026, 1, 1, 9, in: Zones.shanghai))
    #expect(try #require(parser.parse("in 2 hours")).date == wallClock(2026, 1, 1, 1, 30, in: Zones.shanghai))
    #expect(try #require(parser.parse("下周一上午十点")).date == wallClock(2026, 1, 5, 10, in: Zones.shanghai))
  }

  @Test func monthEndAndLeapYears() throws {
    let leap = DateExpressionParser(
      clock: .fixed(wallClock(2028, 2, 28, 8, in: Zones.shanghai), timeZone: Zones.shanghai))
    #expect(try #require(leap.parse("明天")).date == wallClock(2028, 2, 29, 9, in: Zones.shanghai))
    #expect(try #require(leap.parse("后天")).date == wallClock(2028, 3, 1, 9, in: Zones.shanghai))
    let common = DateExpressionParser(
      clock: .fixed(wallClock(2027, 2, 28, 8, in: Zones.shanghai), timeZone: Zones.shanghai))
    #expect(try #require(common.parse("明天")).date == wallClock(2027, 3, 1, 9, in: Zones.shanghai))
    let april = DateExpressionParser(
      clock: .fixed(wallClock(2025, 4, 30, 22, in: Zones.shanghai), timeZone: Zones.shanghai))
    #expect(
      try #require(april.parse("tomorrow at 3pm")).date == wallClock(2025, 5, 1, 15, in: Zones.shanghai))
  }

  @Test func invalidCalendarDatesAreRejected() {
    #expect(parser.parse("2027-02-30 10:00") == nil)
    #expect(parser.parse("2月30日") == nil)
    #expect(parser.parse("2027-13-01") == nil)
  }

  @Test func daylightSavingKeepsWallClockTime() throws {
    // Saturday 8 March 2025, 10:00 EST; clocks spring forward on Sunday 9 March at 02:00.
    let now = wallClock(2025, 3, 8, 10, in: Zones.newYork)
    let parser = DateExpressionParser(clock: .fixed(now, timeZone: Zones.newYork))
    let tomorrow = try #require(parser.parse("tomorrow at 10am")).date
    #expect(tomorrow == wallClock(2025, 3, 9, 10, in: Zones.newYork))
    #expect(tomorrow.timeIntervalSince(now) == 23 * 3600)
    let inHours = try #require(parser.parse("in 24 hours")).date
    #expect(inHours.timeIntervalSince(now) == 24 * 3600)
    #expect(inHours == wallClock(2025, 3, 9, 11, in: Zones.newYork))
    // Autumn: 1 November 2025 is a Saturday; clocks fall back on Sunday 2 November.
    let autumn = DateExpressionParser(
      clock: .fixed(wallClock(2025, 11, 1, 9, in: Zones.newYork), timeZone: Zones.newYork))
    #expect(try #require(autumn.parse("明天上午九点")).date == wallClock(2025, 11, 2, 9, in: Zones.newYork))
  }

  @Test func weekdayNamedOnItsOwnDayMeansTodayIfStillAhead() throws {
    // 14 June 2025 is a Saturday.
    let morning = DateExpressionParser(
      clock: .fixed(wallClock(2025, 6, 14, 8, in: Zones.shanghai), timeZone: Zones.shanghai))
    #expect(try #require(morning.parse("周六上午")).date == wallClock(2025, 6, 14, 9, in: Zones.shanghai))
    let evening = DateExpressionParser(
      clock: .fixed(wallClock(2025, 6, 14, 20, in: Zones.shanghai), timeZone: Zones.shanghai))
    #expect(try #require(evening.parse("周六上午")).date == wallClock(2025, 6, 21, 9, in: Zones.shanghai))
  }

  @Test func chineseNumerals() {
    #expect(ChineseNumeral.value(of: "十二") == 12)
    #expect(ChineseNumeral.value(of: "两") == 2)
    #expect(ChineseNumeral.value(of: "二十五") == 25)
    #expect(ChineseNumeral.value(of: "三百零五") == 305)
    #expect(ChineseNumeral.value(of: "二〇二七") == 2027)
    #expect(ChineseNumeral.value(of: "45") == 45)
    #expect(ChineseNumeral.value(of: "十十") == nil)
    #expect(ChineseNumeral.value(of: "abc") == nil)
    #expect(ChineseNumeral.value(of: "") == nil)
  }
}
