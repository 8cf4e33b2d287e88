import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ReminderSkillTests {
  // Wednesday 11 June 2025, 10:00 in Shanghai.
  let clock = AgentClock.fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai)

  /// Titles keep the task, without the date and without filler, in both languages.
  @Test(arguments: [
    ("can you remind me to call mom tomorrow at 6 please", "call mom"),
    ("please remind me to pay rent on the 25th", "pay rent"),
    ("set a reminder for me to renew my passport next Friday", "renew my passport"),
    ("don't let me forget to water the plants tonight", "water the plants"),
    ("remind me about the dentist bill on June 20", "the dentist bill"),
    ("ping me in 20 minutes to check the oven", "check the oven"),
    ("记得提醒我明天交报告", "交报告"), ("明天早上七点记得吃药", "吃药"), ("提醒我下个月5号交房租", "交房租"),
    ("帮我设个提醒，周五下午三点去取快递", "去取快递"), ("麻烦提醒我一下10月2日给妈妈打电话，谢谢", "给妈妈打电话"),
  ])
  func titlesWithoutFiller(_ text: String, _ title: String) {
    let arguments = ReminderSkill().extractArguments(from: text, clock: clock)
    #expect(arguments["title"] == .string(title))
    #expect(arguments["when"]?.dateValue != nil)
  }

  @Test(arguments: [
    ("remind me to call mom at 6:15 tomorrow", [2025, 6, 12, 6, 15]),
    ("remind me to pay rent on the 25th", [2025, 6, 25, 9, 0]), ("提醒我下个月5号交房租", [2025, 7, 5, 9, 0]),
    ("remind me at 9 tonight to lock the door", [2025, 6, 11, 21, 0]),
  ])
  func whenIsTheDateAsSaid(_ text: String, _ expected: [Int]) {
    let arguments = ReminderSkill().extractArguments(from: text, clock: clock)
    let e = expected
    #expect(arguments["when"] == .date(wallClock(e[0], e[1], e[2], e[3], e[4], in: Zones.shanghai)))
  }

  /// An unreadable date is never today or tomorrow: it travels as text, and running the skill
  /// reports it with the words the user wrote; nothing is stored.
  @Test(arguments: [
    ("remind me to pay rent on the 32nd", "the 32nd", "pay rent"),
    ("remind me to call Bob at 25:00", "25:00", "call Bob"),
    ("提醒我32号交房租", "32号", "交房租"), ("remind me about the party on June 31", "June 31", "the party"),
  ])
  func unreadableDateIsReportedNotReplaced(_ text: String, _ written: String, _ title: String) async throws {
    let arguments = ReminderSkill().extractArguments(from: text, clock: clock)
    #expect(arguments["when"] == .string(written))
    #expect(arguments["title"] == .string(title))
    let memory = try TestMemory()
    await #expect(throws: SkillError.unreadableDate(name: "when", text: written)) {
      try await SkillExecutor.run(
        ReminderSkill(), arguments: arguments, context: context(text, memory: memory))
    }
    #expect(try await memory.engine.agentRecords.items().isEmpty)
    await #expect(throws: SkillError.unreadableDate(name: "when", text: written)) {
      try await ReminderSkill().execute(arguments: arguments, context: context(text, memory: memory))
    }
    let english = FriendlyMessage.text(
      for: SkillError.unreadableDate(name: "when", text: written), language: .english)
    let chinese = FriendlyMessage.text(
      for: SkillError.unreadableDate(name: "when", text: written), language: .chinese)
    #expect(english.contains("“\(written)”"))
    #expect(chinese.contains("「\(written)」"))
  }

  @Test func noDateWordsLeaveWhenAbsent() {
    let arguments = ReminderSkill().extractArguments(from: "remind me to buy milk", clock: clock)
    #expect(arguments["when"] == nil)
    #expect(arguments["title"] == .string("buy milk"))
  }
}
