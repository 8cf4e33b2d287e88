import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct CalendarSkillTests {
  // Wednesday 11 June 2025, 10:00 in Shanghai.
  let clock = AgentClock.fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai)

  /// Event titles keep the event, without the date and without filler, in both languages.
  @Test(arguments: [
    ("I've got the dentist on Tuesday at 3", "dentist", [2025, 6, 17, 15, 0]),
    ("put lunch with Sam on my calendar for Friday at noon", "lunch with Sam", [2025, 6, 13, 12, 0]),
    ("can you add team sync to my calendar next Monday at 10am please", "team sync", [2025, 6, 16, 10, 0]),
    ("schedule a call with Bob Friday 2pm", "call with Bob", [2025, 6, 13, 14, 0]),
    ("book a haircut for me on June 20 at 5", "haircut", [2025, 6, 20, 17, 0]),
    ("帮我加进日历里：周五下午三点牙医", "牙医", [2025, 6, 13, 15, 0]),
    ("周五下午三点开会，帮我加进日历里", "开会", [2025, 6, 13, 15, 0]),
    ("帮我在日历上加10月2日的同学聚会", "同学聚会", [2025, 10, 2, 9, 0]),
    ("下周五晚上八点和小王吃饭，加到日历里", "和小王吃饭", [2025, 6, 20, 20, 0]),
  ])
  func titlesWithoutFiller(_ text: String, _ title: String, _ e: [Int]) {
    let arguments = CalendarSkill().extractArguments(from: text, clock: clock)
    #expect(arguments["title"] == .string(title))
    #expect(arguments["when"] == .date(wallClock(e[0], e[1], e[2], e[3], e[4], in: Zones.shanghai)))
  }

  @Test func unreadableDateIsReportedNotReplaced() async throws {
    let text = "add the team offsite to my calendar on the 32nd"
    let arguments = CalendarSkill().extractArguments(from: text, clock: clock)
    #expect(arguments["when"] == .string("the 32nd"))
    #expect(arguments["title"] == .string("the team offsite"))
    let memory = try TestMemory()
    await #expect(throws: SkillError.unreadableDate(name: "when", text: "the 32nd")) {
      try await SkillExecutor.run(
        CalendarSkill(), arguments: arguments, context: context(text, memory: memory))
    }
    #expect(try await memory.engine.agentRecords.items().isEmpty)
  }
}
