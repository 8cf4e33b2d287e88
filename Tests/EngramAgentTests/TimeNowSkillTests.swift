import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// `time.now` in the user's zone and in the zone of a named place.
@Suite("Time now skill", .timeLimit(.minutes(5)), .watchdog) struct TimeNowSkillTests {
  /// Wednesday 2025-06-11 10:00 in UTC+8.
  let clock = AgentClock.fixed(iso8601: "2025-06-11T10:00:00+08:00")!
  let skill = TimeNowSkill()

  func answer(_ text: String, clock: AgentClock? = nil) async throws -> String {
    let clock = clock ?? self.clock
    let arguments = skill.extractArguments(from: text, clock: clock)
    let validated = try ArgumentValidator.validate(
      arguments, against: skill.inputSchema, timeZone: clock.timeZone)
    let memory = try TestMemory()
    return try await skill.execute(arguments: validated, context: context(text, memory: memory, clock: clock))
      .text
  }

  @Test func extractsTheZoneOfANamedPlace() {
    #expect(
      skill.extractArguments(from: "what time is it in Tokyo", clock: clock)
        == ["zone": .string("Asia/Tokyo"), "place": .string("Tokyo")])
    #expect(skill.extractArguments(from: "纽约现在几点", clock: clock)["zone"] == .string("America/New_York"))
    #expect(skill.extractArguments(from: "what time is it", clock: clock).isEmpty)
    #expect(
      skill.extractArguments(from: "what time is it in Atlantis", clock: clock) == [
        "place": .string("Atlantis")
      ])
    #expect(skill.inputSchema.parameter(named: "zone")?.isRequired == false)
  }

  @Test(arguments: [
    ("what time is it in Tokyo", "It's 2025-06-11 11:00 (Wed) in Tokyo (Asia/Tokyo, UTC+9)."),
    ("what time is it in new york?", "It's 2025-06-10 22:00 (Tue) in New York (America/New_York, UTC-4)."),
    ("what's the time in UTC", "It's 2025-06-11 02:00 (Wed) in UTC (UTC+0)."),
    ("time in Asia/Kolkata", "It's 2025-06-11 07:30 (Wed) in Kolkata (Asia/Kolkata, UTC+5:30)."),
    ("London time", "It's 2025-06-11 03:00 (Wed) in London (Europe/London, UTC+1)."),
    ("纽约现在几点", "纽约现在是 2025-06-10 22:00（周二）（America/New_York，UTC-4）。"),
    ("东京几点了", "东京现在是 2025-06-11 11:00（周三）（Asia/Tokyo，UTC+9）。"),
    ("what time is it in PST", "It's 2025-06-10 19:00 (Tue) in Pacific Time (America/Los_Angeles, UTC-7)."),
  ])
  func answersInTheNamedZone(_ text: String, _ expected: String) async throws {
    #expect(try await answer(text) == expected)
  }

  @Test func daylightSavingTimeFollowsTheDate() async throws {
    let january = AgentClock.fixed(iso8601: "2025-01-15T10:00:00+08:00")!
    #expect(
      try await answer("what time is it in New York", clock: january)
        == "It's 2025-01-14 21:00 (Tue) in New York (America/New_York, UTC-5).")
  }

  @Test func withoutAPlaceItAnswersInTheUsersZone() async throws {
    #expect(try await answer("what time is it") == "It's 2025-06-11 10:00 (Wed), GMT+0800.")
  }

  @Test func aZoneFromThePlannerAloneIsNamedFromTheTable() async throws {
    let memory = try TestMemory()
    let output = try await skill.execute(
      arguments: ["zone": .string("Europe/Lisbon")],
      context: context("what time is it in Lisbon", memory: memory, clock: clock))
    #expect(output.text == "It's 2025-06-11 03:00 (Wed) in Lisbon (Europe/Lisbon, UTC+1).")
    let chinese = try await skill.execute(
      arguments: ["zone": .string("Asia/Tokyo")], context: context("东京几点", memory: memory, clock: clock))
    #expect(chinese.text == "东京现在是 2025-06-11 11:00（周三）（Asia/Tokyo，UTC+9）。")
  }

  @Test(arguments: [
    ("what time is it in Atlantis", "I don't know the time zone of “Atlantis”."),
    ("亚特兰蒂斯现在几点", "我不知道「亚特兰蒂斯」的时区。"),
  ])
  func anUnknownPlaceGetsASentence(_ text: String, _ start: String) async throws {
    let reply = try await answer(text)
    #expect(reply.hasPrefix(start), "\(reply)")
    #expect(SwiftInternals.find(in: reply).isEmpty)
  }

  @Test func anUnknownZoneFromThePlannerGetsASentence() async throws {
    let memory = try TestMemory()
    for (text, start) in [
      ("what time is it", "I don't know the time zone of “Mars/Olympus”."), ("几点", "我不知道「Mars/Olympus」"),
    ] {
      let reply = try await skill.execute(
        arguments: ["zone": .string("Mars/Olympus")], context: context(text, memory: memory, clock: clock)
      ).text
      #expect(reply.hasPrefix(start), "\(reply)")
      #expect(SwiftInternals.find(in: reply).isEmpty)
    }
  }
}
