import Engram
import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct BuiltInSkillsTests {
  // Wednesday 11 June 2025, 10:00 in Shanghai.
  let clock = AgentClock.fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai)

  func route(_ text: String) async throws -> RouteDecision {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    return try #require(try await SkillRouter(registry: registry).route(text, clock: clock))
  }

  @Test func datedTaskBecomesReminderWithoutTheDateInItsTitle() async throws {
    let text = "明天下午三点把报告发给王经理"
    let decision = try await route(text)
    #expect(decision.skillID == "reminder.create")
    #expect(decision.arguments["title"] == .string("把报告发给王经理"))
    #expect(decision.arguments["when"] == .date(wallClock(2025, 6, 12, 15, in: Zones.shanghai)))

    let memory = try TestMemory()
    let context = SkillContext(userText: text, clock: clock, engine: memory.engine)
    let skill = ReminderSkill()
    #expect(
      skill.confirmationText(arguments: decision.arguments, context: context)
        == "创建提醒「把报告发给王经理」，时间 2025-06-12 15:00（周四）？")
    let output = try await SkillExecutor.run(skill, arguments: decision.arguments, context: context)
    guard case .created(let item, _) = output else { Issue.record("expected created, got \(output)"); return }
    #expect(item.kind == .reminder)
    let stored = try #require(try await memory.item(item.id))
    #expect(stored.kind == .reminder)
    #expect(stored.title == "把报告发给王经理")
    #expect(stored.dueAt == wallClock(2025, 6, 12, 15, in: Zones.shanghai))
    #expect(stored.body == nil)
    #expect(stored.createdAt == clock.now)
  }

  @Test(arguments: [
    ("提醒我明天下午三点开会", "开会"), ("明天上午十点提醒我交报告", "交报告"), ("remind me to call mom tomorrow at 3pm", "call mom"),
    ("remind me in 30 minutes to take out the trash", "take out the trash"), ("别忘了周六上午去取快递", "去取快递"),
    ("我要在周六上午取快递，提醒我", "取快递"),
  ])
  func reminderTitles(_ text: String, _ title: String) async throws {
    let decision = try await route(text)
    #expect(decision.skillID == "reminder.create")
    #expect(decision.arguments["title"] == .string(title))
    #expect(decision.arguments["when"] != nil)
  }

  @Test func eventGetsItsOwnTitleAndEnglishConfirmation() async throws {
    let decision = try await route("schedule a meeting with Bob next Friday at 10am")
    #expect(decision.skillID == "calendar.create")
    #expect(decision.arguments["title"] == .string("meeting with Bob"))
    let memory = try TestMemory()
    let context = SkillContext(userText: "schedule", clock: clock, engine: memory.engine)
    #expect(
      CalendarSkill().confirmationText(arguments: decision.arguments, context: context)
        == "Create calendar event “meeting with Bob” at 2025-06-20 10:00 (Fri)?")
  }

  @Test func reminderWithoutDateIsMissingWhen() async throws {
    let arguments = ReminderSkill().extractArguments(from: "remind me to buy milk", clock: clock)
    #expect(arguments["title"] == .string("buy milk"))
    let memory = try TestMemory()
    await #expect(throws: SkillError.missingArgument(name: "when")) {
      try await SkillExecutor.run(
        ReminderSkill(), arguments: arguments, context: context("x", memory: memory, clock: clock))
    }
    #expect(try await memory.engine.agentRecords.items().isEmpty)
  }

  @Test func rememberStoresPreference() async throws {
    let memory = try TestMemory()
    let decision = try await route("记住我喜欢喝美式咖啡")
    #expect(decision.skillID == "memory.remember")
    #expect(decision.arguments["content"] == .string("我喜欢喝美式咖啡"))
    let output = try await SkillExecutor.run(
      RememberSkill(), arguments: decision.arguments, context: context("记住", memory: memory))
    #expect(output.text == "好的，我记住了。")
    let stored = try await memory.engine.memories.list()
    #expect(stored.map(\.kind) == [.preference])
    #expect(stored.map(\.content) == ["我喜欢喝美式咖啡"])
  }

  @Test func recallAnswersWithDates() async throws {
    let memory = try TestMemory()
    let id = try await memory.remember(
      "My sister's birthday is May 3", at: wallClock(2025, 5, 1, 9, in: Zones.shanghai))
    let decision = try await route("when is my sister's birthday?")
    #expect(decision.skillID == "memory.recall")
    let output = try await SkillExecutor.run(
      RecallSkill(), arguments: decision.arguments,
      context: context("when is my sister's birthday?", memory: memory))
    guard case .memories(let answer, let hits) = output else { Issue.record("expected memories"); return }
    #expect(hits.map(\.id) == [id])
    #expect(answer.contains("My sister's birthday is May 3 (2025-05-01)"))
    let nothing = try TestMemory()
    let empty = try await RecallSkill().execute(
      arguments: ["query": .string("wifi password")],
      context: context("what's the wifi password?", memory: nothing))
    #expect(empty == .memories(answer: "I don't have anything about that yet.", hits: []))
  }

  @Test func recallPrefersMemoriesAlreadyInContext() async throws {
    // The engine holds an older answer a search would find; the context's hits are used.
    let memory = try TestMemory()
    try await memory.remember("车停在B1层", at: wallClock(2025, 6, 1, 10, in: Zones.shanghai))
    var ctx = context("我的车停在哪？", memory: memory)
    ctx.turn.hits = [testHit(id: 9, text: "车停在B2层", memoryKind: .fact)]
    let output = try await RecallSkill().execute(arguments: ["query": .string("车停在哪")], context: ctx)
    #expect(output.text == "车停在B2层（2025-06-11）")
  }

  @Test func forgetByIDAndByDescription() async throws {
    let memory = try TestMemory()
    try await memory.remember("my locker is number 12")
    let id = try await memory.remember("I like green tea")
    let byID = try await route("forget memory #\(id)")
    #expect(byID.skillID == "memory.forget")
    #expect(byID.arguments["id"] == .int(Int(id)))
    var ctx = context("forget memory #\(id)", memory: memory)
    ctx.turn.hits = [testHit(id: id, text: "I like green tea")]
    #expect(
      ForgetSkill().confirmationText(arguments: byID.arguments, context: ctx)
        == "Delete memory #\(id): “I like green tea”? This cannot be undone.")
    // A conversation turn that happens to have the id is never shown as that memory.
    var turnOnly = ctx
    turnOnly.turn.hits = [testHit(id: id, text: "let's meet at noon", kind: .message)]
    #expect(
      ForgetSkill().confirmationText(arguments: byID.arguments, context: turnOnly)
        == "Delete memory #\(id)? This cannot be undone.")

    let list = try await SkillExecutor.run(
      ForgetSkill(), arguments: ["query": .string("green tea")],
      context: context("forget green tea", memory: memory))
    guard case .list(let title, let items) = list else {
      Issue.record("expected a list, got \(list)"); return
    }
    #expect(title == "Which one should I forget? Tell me its id:")
    #expect(items.first == "#\(id) I like green tea")
    #expect(try await memory.engine.memories.get(id) != nil)

    _ = try await SkillExecutor.run(ForgetSkill(), arguments: byID.arguments, context: ctx)
    #expect(try await memory.engine.memories.get(id) == nil)
    #expect(try await memory.engine.memories.list().map(\.content) == ["my locker is number 12"])
    // Forgotten already: the engine's answer reaches the user.
    await #expect(
      throws: SkillError.executionFailed(skill: "memory.forget", reason: "no memory with id \(id)")
    ) {
      try await SkillExecutor.run(ForgetSkill(), arguments: byID.arguments, context: ctx)
    }
  }

  @Test func dontForgetIsAReminderNotAForget() async throws {
    #expect(try await route("don't forget to water the plants tomorrow").skillID == "reminder.create")
    #expect(try await route("别忘了明天带伞").skillID == "reminder.create")
  }

  @Test func noteUsesFirstWordsAsTitle() async throws {
    let memory = try TestMemory()
    let decision = try await route("take a note: the garage code is 4512")
    #expect(decision.skillID == "note.create")
    #expect(decision.arguments["content"] == .string("the garage code is 4512"))
    let output = try await SkillExecutor.run(
      NoteSkill(), arguments: decision.arguments, context: context("x", memory: memory))
    guard case .created(let item, _) = output else { Issue.record("expected created"); return }
    let stored = try await memory.item(item.id)
    #expect(stored?.body == "the garage code is 4512")
    #expect(stored?.kind == .note)
  }

  @Test func timeNowInChineseAndEnglish() async throws {
    #expect(try await route("现在几点了？").skillID == "time.now")
    let memory = try TestMemory()
    let zh = try await TimeNowSkill().execute(
      arguments: [:], context: context("现在几点了？", memory: memory, clock: clock))
    #expect(zh == .text("现在是 2025-06-11 10:00（周三），Asia/Shanghai。"))
    let en = try await TimeNowSkill().execute(
      arguments: [:], context: context("what time is it", memory: memory, clock: clock))
    #expect(en == .text("It's 2025-06-11 10:00 (Wed), Asia/Shanghai."))
  }

  @Test func calculatorConvertsUnits() async throws {
    let memory = try TestMemory()
    for (text, reply) in [
      ("please convert 100 celsius to fahrenheit", "100 °C = 212 °F"),
      ("how many kilometers is 26.2 miles", "26.2 mi = 42.16 km"),
      ("把3斤换算成公斤", "3 斤 = 1.5 kg"),
    ] {
      let decision = try await route(text)
      #expect(decision.skillID == "calculator", "\(text)")
      let output = try await SkillExecutor.run(
        CalculatorSkill(), arguments: decision.arguments, context: context(text, memory: memory))
      #expect(output == .text(reply), "\(text)")
    }
  }

  @Test func calculatorRoutesAndComputes() async throws {
    let decision = try await route("what is (3 + 4) * 2?")
    #expect(decision.skillID == "calculator")
    let memory = try TestMemory()
    let output = try await SkillExecutor.run(
      CalculatorSkill(), arguments: decision.arguments, context: context("x", memory: memory))
    #expect(output == .text("(3 + 4) * 2 = 14"))
    let zh = try await route("帮我算一下12乘以3等于多少")
    #expect(zh.skillID == "calculator")
    #expect(zh.arguments["expression"] == .string("12乘以3"))
    await #expect(throws: SkillError.divisionByZero) {
      try await SkillExecutor.run(
        CalculatorSkill(), arguments: ["expression": .string("5/0")], context: context("x", memory: memory))
    }
    await #expect(throws: SkillError.self) {
      try await SkillExecutor.run(
        CalculatorSkill(), arguments: ["expression": .string("5 +")], context: context("x", memory: memory))
    }
  }

  @Test func sideEffectsAndConfirmationFlags() {
    for skill in BuiltInSkills.all() {
      #expect(skill.requiresConfirmation == skill.hasSideEffects, "\(skill.id)")
      if skill.hasSideEffects { #expect(skill.effectiveRetryCount == 0, "\(skill.id)") }
    }
    #expect(!RecallSkill().requiresConfirmation)
    #expect(ReminderSkill().requiresConfirmation)
  }
}
