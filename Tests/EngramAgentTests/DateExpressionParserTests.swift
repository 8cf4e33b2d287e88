import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct DateExpressionParserTests {
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

  /// "<place> time", <place>时间: the time on that place's clock, wherever the phrase sits; the
  /// match covers the phrase (so a title drops it); a time with no day is the next one there.
  @Test func aTimeInAPlacesZoneIsThatPlacesTime() throws {
    let cases: [(text: String, expected: Date, matched: String)] = [
      // Tokyo is an hour ahead of Shanghai.
      (
        "call Ken at 3pm tokyo time on thursday", wallClock(2025, 6, 12, 15, in: Zones.tokyo),
        "at 3pm tokyo time on thursday"
      ),
      (
        "call Ken on thursday at 3pm Tokyo time", wallClock(2025, 6, 12, 15, in: Zones.tokyo),
        "on thursday at 3pm Tokyo time"
      ),
      ("东京时间周四下午三点给Ken打电话", wallClock(2025, 6, 12, 15, in: Zones.tokyo), "东京时间周四下午三点"),
      // 10:00 in Shanghai is 03:00 in London: 9am there is still to come today.
      ("ring Ann at 9am London time", wallClock(2025, 6, 11, 9, in: Zones.london), "at 9am London time"),
      (
        "sync at 10am new york time tomorrow", wallClock(2025, 6, 12, 10, in: Zones.newYork),
        "at 10am new york time tomorrow"
      ),
    ]
    for (text, expected, matched) in cases {
      let match = try #require(parser.parse(text), "\(text)")
      #expect(match.date == expected, "\(text): \(match.date)")
      #expect(String(text[match.range]) == matched, "\(text)")
    }
    // Words before "time" that name no place leave the time as it is.
    #expect(parser.parse("lunch time at 1pm")?.date == wallClock(2025, 6, 11, 13, in: Zones.shanghai))
  }

  @Test func textWithoutDateHasNoMatch() {
    #expect(parser.parse("buy milk") == nil)
    #expect(parser.read("good morning!") == nil)
    #expect(parser.read("hey, good evening") == nil)
    #expect(parser.read("早上好") == nil)
    #expect(parser.read("晚上好呀") == nil)
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

  /// A weekday named on that same weekday is the one a week later ("the next Saturday after
  /// today"), even when the time is still ahead.
  @Test func weekdayNamedOnItsOwnDayMeansNextWeek() throws {
    // 14 June 2025 is a Saturday.
    let morning = DateExpressionParser(
      clock: .fixed(wallClock(2025, 6, 14, 8, in: Zones.shanghai), timeZone: Zones.shanghai))
    #expect(try #require(morning.parse("周六上午")).date == wallClock(2025, 6, 21, 9, in: Zones.shanghai))
    #expect(
      try #require(morning.parse("saturday 7pm")).date == wallClock(2025, 6, 21, 19, in: Zones.shanghai))
    #expect(
      try #require(morning.parse("next saturday")).date == wallClock(2025, 6, 21, 9, in: Zones.shanghai))
    #expect(try #require(morning.parse("周日")).date == wallClock(2025, 6, 15, 9, in: Zones.shanghai))
  }

  /// Day names followed by "night", Chinese hours right after a weekday, hedged offsets, time
  /// ranges (the start counts) and a trailing "for 4".
  @Test(arguments: [
    ("tomorrow night at 10", [2025, 6, 12, 22, 0]), ("friday night", [2025, 6, 13, 20, 0]),
    ("周一六点一刻", [2025, 6, 16, 6, 15]), ("星期二三点", [2025, 6, 17, 15, 0]), ("周四十点", [2025, 6, 12, 10, 0]),
    ("in like 15 min", [2025, 6, 11, 10, 15]), ("in about 2 hours", [2025, 6, 11, 12, 0]),
    ("from 3 to 5 tomorrow", [2025, 6, 12, 15, 0]), ("between 9 and 11 on Friday", [2025, 6, 13, 9, 0]),
    ("1-2pm tomorrow", [2025, 6, 12, 13, 0]), ("2 to 4 this afternoon", [2025, 6, 11, 14, 0]),
    ("call with the bank for 4", [2025, 6, 11, 16, 0]), ("wed 7pm", [2025, 6, 18, 19, 0]),
    ("in a couple of hours", [2025, 6, 11, 12, 0]), ("in a few days", [2025, 6, 14, 9, 0]),
    ("in 2 months", [2025, 8, 11, 9, 0]), ("at seven tomorrow", [2025, 6, 12, 7, 0]),
    ("tomorrow at six thirty", [2025, 6, 12, 6, 30]), ("at 7.30pm", [2025, 6, 11, 19, 30]),
    ("tomorrow @ 3", [2025, 6, 12, 15, 0]), ("半夜12点", [2025, 6, 12, 0, 0]), ("深夜11点", [2025, 6, 11, 23, 0]),
  ])
  func moreWaysOfSaying(_ text: String, _ expected: [Int]) throws {
    #expect(try #require(parser.parse(text)).date == Self.at(expected))
  }

  /// "on" makes any d/d a date, so an impossible one is unreadable; without it, it may be a fraction.
  @Test func slashDateAfterOnIsADate() throws {
    guard case .unreadable(let written, _) = try #require(parser.read("on 14/40")) else {
      Issue.record("expected unreadable")
      return
    }
    #expect(written == "14/40")
    #expect(parser.read("table for 4 people") == nil)
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

  // MARK: - docs/requests.md conventions

  static func at(_ e: [Int]) -> Date { wallClock(e[0], e[1], e[2], e[3], e[4], in: Zones.shanghai) }

  /// A clock time without am/pm: the period decides; on another day 1-5 is afternoon, 6-11
  /// morning, 12 noon; with no day or today, the next time h:mm or h+12:mm comes (now is 10:00).
  @Test(arguments: [
    ("at 6:15 tomorrow", [2025, 6, 12, 6, 15]), ("at 3 tomorrow", [2025, 6, 12, 15, 0]),
    ("tomorrow at 5", [2025, 6, 12, 17, 0]), ("tomorrow at 6", [2025, 6, 12, 6, 0]),
    ("tomorrow at 11", [2025, 6, 12, 11, 0]), ("tomorrow at 12", [2025, 6, 12, 12, 0]),
    ("Friday at 2", [2025, 6, 13, 14, 0]), ("tomorrow at 14:00", [2025, 6, 12, 14, 0]),
    ("at 9 tonight", [2025, 6, 11, 21, 0]), ("9 tonight", [2025, 6, 11, 21, 0]),
    ("at 8 in the morning", [2025, 6, 12, 8, 0]), ("tomorrow morning at 6", [2025, 6, 12, 6, 0]),
    ("at 3", [2025, 6, 11, 15, 0]), ("at 9", [2025, 6, 11, 21, 0]), ("at 11", [2025, 6, 11, 11, 0]),
    ("at 10", [2025, 6, 11, 22, 0]), ("at 12", [2025, 6, 11, 12, 0]), ("today at 5", [2025, 6, 11, 17, 0]),
    ("at 3 o'clock tomorrow", [2025, 6, 12, 15, 0]), ("half past 7 tomorrow", [2025, 6, 12, 7, 30]),
    ("a quarter to 5 on Friday", [2025, 6, 13, 16, 45]), ("noon tomorrow", [2025, 6, 12, 12, 0]),
    ("三点半", [2025, 6, 11, 15, 30]), ("晚上八点", [2025, 6, 11, 20, 0]), ("早上七点", [2025, 6, 12, 7, 0]),
    ("明天三点", [2025, 6, 12, 15, 0]), ("明天八点", [2025, 6, 12, 8, 0]), ("九点", [2025, 6, 11, 21, 0]),
    ("十一点", [2025, 6, 11, 11, 0]), ("下午三点", [2025, 6, 11, 15, 0]), ("三点十五", [2025, 6, 11, 15, 15]),
    ("明天十二点", [2025, 6, 12, 12, 0]),
  ])
  func clockTimeWithoutMeridiem(_ text: String, _ expected: [Int]) throws {
    let match = try #require(parser.parse(text))
    #expect(match.date == Self.at(expected))
    #expect(match.hasTime)
  }

  /// Relative offsets are exact from now (10:00).
  @Test(arguments: [
    ("in an hour and a half", [2025, 6, 11, 11, 30]), ("in 1.5 hours", [2025, 6, 11, 11, 30]),
    ("in 2 hours and 15 minutes", [2025, 6, 11, 12, 15]), ("in 90 mins", [2025, 6, 11, 11, 30]),
    ("两个小时后", [2025, 6, 11, 12, 0]), ("in 3 days at 5pm", [2025, 6, 14, 17, 0]),
  ])
  func relativeOffsets(_ text: String, _ expected: [Int]) throws {
    #expect(try #require(parser.parse(text)).date == Self.at(expected))
  }

  /// Periods without a clock time have fixed hours; a passed period with no day is tomorrow's.
  @Test(arguments: [
    ("tomorrow morning", [2025, 6, 12, 9, 0]), ("tomorrow afternoon", [2025, 6, 12, 15, 0]),
    ("tomorrow evening", [2025, 6, 12, 20, 0]), ("tonight", [2025, 6, 11, 20, 0]),
    ("this afternoon", [2025, 6, 11, 15, 0]), ("明天中午", [2025, 6, 12, 12, 0]), ("今晚", [2025, 6, 11, 20, 0]),
    ("明天早上", [2025, 6, 12, 9, 0]), ("下午", [2025, 6, 11, 15, 0]), ("早上", [2025, 6, 12, 9, 0]),
  ])
  func periodsHaveDefaultHours(_ text: String, _ expected: [Int]) throws {
    #expect(try #require(parser.parse(text)).date == Self.at(expected))
  }

  /// Absolute dates are parsed, not replaced; a month/day already past this year is next year.
  @Test(arguments: [
    ("June 20", [2025, 6, 20, 9, 0]), ("20 June", [2025, 6, 20, 9, 0]), ("Jun 20th", [2025, 6, 20, 9, 0]),
    ("on June 20 at 3pm", [2025, 6, 20, 15, 0]), ("the 20th of June", [2025, 6, 20, 9, 0]),
    ("June 20, 2026", [2026, 6, 20, 9, 0]), ("6/20", [2025, 6, 20, 9, 0]),
    ("12/25 at 7", [2025, 12, 25, 7, 0]),
    ("the 25th", [2025, 6, 25, 9, 0]), ("on the 5th", [2025, 7, 5, 9, 0]), ("the 31st", [2025, 7, 31, 9, 0]),
    ("the 11th at 4", [2025, 6, 11, 16, 0]), ("下个月5号", [2025, 7, 5, 9, 0]), ("10月2日", [2025, 10, 2, 9, 0]),
    ("2025-10-02", [2025, 10, 2, 9, 0]), ("25号", [2025, 6, 25, 9, 0]), ("20号下午三点", [2025, 6, 20, 15, 0]),
    ("March 3", [2026, 3, 3, 9, 0]), ("June 5", [2026, 6, 5, 9, 0]), ("3月3日", [2026, 3, 3, 9, 0]),
    ("sept 9th", [2025, 9, 9, 9, 0]),
  ])
  func absoluteDates(_ text: String, _ expected: [Int]) throws {
    #expect(try #require(parser.parse(text)).date == Self.at(expected))
  }

  /// "Friday", "this Friday", 周五, 这周五: the coming one; "next Friday", 下周五: next week's.
  /// Now is Wednesday 11 June; weeks start on Monday.
  @Test(arguments: [
    ("Friday", [2025, 6, 13, 9, 0]), ("this Friday", [2025, 6, 13, 9, 0]),
    ("on Friday", [2025, 6, 13, 9, 0]),
    ("next Friday", [2025, 6, 20, 9, 0]), ("周五", [2025, 6, 13, 9, 0]), ("这周五", [2025, 6, 13, 9, 0]),
    ("下周五", [2025, 6, 20, 9, 0]), ("next Monday", [2025, 6, 16, 9, 0]), ("this Monday", [2025, 6, 16, 9, 0]),
    ("next Wednesday", [2025, 6, 18, 9, 0]), ("fri at 4pm", [2025, 6, 13, 16, 0]),
  ])
  func weekdays(_ text: String, _ expected: [Int]) throws {
    #expect(try #require(parser.parse(text)).date == Self.at(expected))
  }

  /// Shaped like a date or time but naming none: reported with the text as written.
  @Test(arguments: [
    ("pay rent on the 32nd", "the 32nd"), ("party on June 31", "June 31"), ("call at 25:00", "25:00"),
    ("meet at 13pm", "13pm"), ("2月30日交报告", "2月30日"), ("32号交房租", "32号"),
    ("tomorrow at 25:00", "tomorrow at 25:00"),
    ("25点开会", "25点"), ("Feb 30", "Feb 30"), ("星期八开会", "星期八"), ("June 32", "June 32"),
  ])
  func unreadableExpressionsAreReportedNotReplaced(_ text: String, _ written: String) throws {
    #expect(parser.parse(text) == nil)
    let reading = try #require(parser.read(text))
    guard case .unreadable(let found, let range) = reading else {
      Issue.record("expected unreadable, got \(reading)")
      return
    }
    #expect(found == written)
    #expect(text[range].hasSuffix(written))
  }

  /// Numbers that only look like dates are no dates: arithmetic, decimals, building numbers.
  @Test(arguments: ["12/7 + 3", "what is 36/20", "1.6/20", "三点五加二", "去5号楼", "buy 3 apples"])
  func arithmeticIsNoDate(_ text: String) {
    #expect(parser.read(text) == nil)
  }

  /// A negative UTC offset: days are the clock's days, not UTC's.
  @Test func negativeOffsetClockUsesLocalDays() throws {
    // Tuesday 10 June 2025, 22:30 in New York, already 11 June in UTC.
    let now = wallClock(2025, 6, 10, 22, 30, in: Zones.newYork)
    let parser = DateExpressionParser(clock: .fixed(now, timeZone: Zones.newYork))
    #expect(try #require(parser.parse("tomorrow at 9")).date == wallClock(2025, 6, 11, 9, in: Zones.newYork))
    #expect(try #require(parser.parse("at 11")).date == wallClock(2025, 6, 10, 23, in: Zones.newYork))
    #expect(try #require(parser.parse("next Friday")).date == wallClock(2025, 6, 20, 9, in: Zones.newYork))
    #expect(try #require(parser.parse("the 25th")).date == wallClock(2025, 6, 25, 9, in: Zones.newYork))
    #expect(try #require(parser.parse("明天下午三点")).date == wallClock(2025, 6, 11, 15, in: Zones.newYork))
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = Zones.newYork
    let rendered = formatter.string(from: try #require(parser.parse("tomorrow at 9")).date)
    #expect(rendered == "2025-06-11T09:00:00-04:00")
  }

  /// 9 March 2025 springs forward in New York: "tomorrow at 9" stays 09:00 on the wall clock.
  @Test func springForwardKeepsWallClockForAmbiguousHours() throws {
    let now = wallClock(2025, 3, 8, 10, in: Zones.newYork)
    let parser = DateExpressionParser(clock: .fixed(now, timeZone: Zones.newYork))
    let nine = try #require(parser.parse("tomorrow at 9")).date
    #expect(nine == wallClock(2025, 3, 9, 9, in: Zones.newYork))
    #expect(nine.timeIntervalSince(now) == 22 * 3600)
    #expect(try #require(parser.parse("明天三点")).date == wallClock(2025, 3, 9, 15, in: Zones.newYork))
    // Said on the change day itself at 01:30 EST: "at 3" is 03:00 EDT, half an hour later.
    let early = DateExpressionParser(
      clock: .fixed(wallClock(2025, 3, 9, 1, 30, in: Zones.newYork), timeZone: Zones.newYork))
    let three = try #require(early.parse("at 3")).date
    #expect(three == wallClock(2025, 3, 9, 3, in: Zones.newYork))
    #expect(three.timeIntervalSince(early.clock.now) == 30 * 60)
  }

  @Test func chineseNumeralsWithUnits() {
    #expect(ChineseNumeral.value(of: "一千二") == 1200)
    #expect(ChineseNumeral.value(of: "三百四") == 340)
    #expect(ChineseNumeral.value(of: "一千零二") == 1002)
    #expect(ChineseNumeral.value(of: "一千二百三") == 1230)
    #expect(ChineseNumeral.number(of: "两万五") == 25000)
    #expect(ChineseNumeral.number(of: "十二万") == 120_000)
    #expect(ChineseNumeral.number(of: "一万二千") == 12000)
    #expect(ChineseNumeral.number(of: "一万零五") == 10005)
    #expect(ChineseNumeral.number(of: "一亿二") == 120_000_000)
    #expect(ChineseNumeral.number(of: "三点五") == 3.5)
    #expect(ChineseNumeral.number(of: "三点一四") == 3.14)
    #expect(ChineseNumeral.number(of: "3万") == 30000)
    #expect(ChineseNumeral.number(of: "万万") == nil)
    #expect(ChineseNumeral.number(of: "三点") == nil)
  }

  /// Hostile input: long digit runs, huge counts, out-of-range fields. Nothing traps; each is
  /// a date, unreadable, or nothing.
  @Test(arguments: [
    String(repeating: "九", count: 40) + "月五日", "一二三四五六七八九一二三四五六七八九一二三四五六七八九点",
    "in 99999999999999999999 days", "9999个月后", "on 99/99", "at 99:99", "the 99th", "下个月99号",
    "9999年12月31日", String(repeating: "在明天", count: 300), "2025-99-99 99:99",
  ])
  func hostileInputNeverTraps(_ text: String) {
    // A date is a real instant within the calendar's years (not a wrapped or clamped value).
    switch parser.read(text) {
    case .date(let match)?:
      #expect(match.date.timeIntervalSince1970.isFinite, "\(text)")
      let year = Calendar(identifier: .gregorian).component(.year, from: match.date)
      #expect((1...9999).contains(year), "\(text) read as year \(year)")
      #expect(match.range.lowerBound >= text.startIndex && match.range.upperBound <= text.endIndex)
    case .unreadable(_, let range)?:
      #expect(range.lowerBound >= text.startIndex && range.upperBound <= text.endIndex)
    case nil:
      break
    }
    // A numeral or an answer is a finite number, or there is none.
    if let number = ChineseNumeral.number(of: text) { #expect(number.isFinite, "\(text) -> \(number)") }
    if let answer = CalculatorSkill.answer(for: text) { #expect(answer.isFinite, "\(text) -> \(answer)") }
  }
}
