import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ArgumentValidatorTests {
  let schema = SkillInputSchema([
    SkillParameter("count", .int, description: "a count"),
    SkillParameter("ratio", .number, required: false, description: "a ratio"),
    SkillParameter("flag", .bool, required: false, description: "a flag"),
    SkillParameter("when", .date, required: false, description: "a date"),
    SkillParameter("title", .string, required: false, description: "a title"),
  ])

  func validate(_ arguments: SkillArguments) throws(SkillError) -> SkillArguments {
    try ArgumentValidator.validate(arguments, against: schema, timeZone: Zones.shanghai)
  }

  @Test func coercesSafeStrings() throws {
    let result = try validate([
      "count": .string(" 3 "), "ratio": .string("0.25"), "flag": .string("true"),
      "when": .string("2027-01-05 14:00"),
      "title": .int(7),
    ])
    #expect(result["count"] == .int(3))
    #expect(result["ratio"] == .number(0.25))
    #expect(result["flag"] == .bool(true))
    #expect(result["when"] == .date(wallClock(2027, 1, 5, 14, in: Zones.shanghai)))
    #expect(result["title"] == .string("7"))
  }

  @Test func coercesNumbersAndBooleans() throws {
    #expect(try validate(["count": .number(4)])["count"] == .int(4))
    #expect(try validate(["count": .int(1), "ratio": .int(2)])["ratio"] == .number(2))
    #expect(try validate(["count": .int(1), "flag": .string("否")])["flag"] == .bool(false))
    #expect(try validate(["count": .int(1), "flag": .int(1)])["flag"] == .bool(true))
  }

  @Test func isoDatesWithOffsetsAndZulu() throws {
    let zulu = try validate(["count": .int(1), "when": .string("2027-01-05T06:00:00Z")])
    #expect(zulu["when"] == .date(wallClock(2027, 1, 5, 14, in: Zones.shanghai)))
    let offset = try validate(["count": .int(1), "when": .string("2027-01-05T14:00:00+08:00")])
    #expect(offset["when"] == zulu["when"])
    let dateOnly = try validate(["count": .int(1), "when": .string("2027-01-05")])
    #expect(dateOnly["when"] == .date(wallClock(2027, 1, 5, in: Zones.shanghai)))
  }

  @Test func missingAndEmptyRequiredArguments() {
    #expect(throws: SkillError.missingArgument(name: "count")) { try validate([:]) }
    #expect(throws: SkillError.missingArgument(name: "count")) { try validate(["count": .string("  ")]) }
  }

  @Test func invalidArguments() {
    #expect(throws: SkillError.invalidArgument(name: "count", reason: .expectedType(.int, value: "three"))) {
      try validate(["count": .string("three")])
    }
    #expect(throws: SkillError.invalidArgument(name: "count", reason: .expectedType(.int, value: "2.5"))) {
      try validate(["count": .number(2.5)])
    }
    #expect(throws: SkillError.invalidArgument(name: "ratio", reason: .notFinite)) {
      try validate(["count": .int(1), "ratio": .string("nan")])
    }
    #expect(throws: SkillError.invalidArgument(name: "ratio", reason: .notFinite)) {
      try validate(["count": .int(1), "ratio": .number(.infinity)])
    }
    #expect(throws: SkillError.unreadableDate(name: "when", text: "2027-02-30")) {
      try validate(["count": .int(1), "when": .string("2027-02-30")])
    }
    #expect(throws: SkillError.invalidArgument(name: "flag", reason: .expectedType(.bool, value: "maybe"))) {
      try validate(["count": .int(1), "flag": .string("maybe")])
    }
    #expect(throws: SkillError.invalidArgument(name: "extra", reason: .unknownParameter)) {
      try validate(["count": .int(1), "extra": .int(2)])
    }
    #expect(throws: SkillError.invalidArgument(name: "count", reason: .expectedType(.int, value: "true"))) {
      try validate(["count": .bool(true)])
    }
  }

  /// Date text a skill could not read arrives as a string and is reported with its words.
  @Test(arguments: ["the 32nd", "June 31", "25:00", "13pm", "32号", " next blursday "])
  func unreadableDateTextIsReportedAsWritten(_ text: String) {
    #expect(throws: SkillError.unreadableDate(name: "when", text: text.trimmingCharacters(in: .whitespaces)))
    {
      try validate(["count": .int(1), "when": .string(text)])
    }
  }

  /// Swift's `\d` matches any decimal digit; fullwidth ISO text is unreadable, never a crash.
  @Test func fullwidthDigitsAreUnreadableNotACrash() {
    #expect(ArgumentValidator.parseISODate("２０２７-０１-０５", timeZone: Zones.shanghai) == nil)
    #expect(throws: SkillError.unreadableDate(name: "when", text: "２０２７-０１-０５")) {
      try validate(["count": .int(1), "when": .string("２０２７-０１-０５")])
    }
  }
}
