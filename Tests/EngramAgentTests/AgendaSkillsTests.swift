import Engram
import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// The list, cancel and update skills of reminders and events: what they read from a
/// request, which item they find, the new time they compute, and a whole conversation.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct AgendaSkillsTests {
  let clock = AgentClock.fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai)

  func at(_ day: Int, _ hour: Int, _ minute: Int = 0) -> Date {
    wallClock(2025, 6, day, hour, minute, in: Zones.shanghai)
  }

  /// A memory holding: reminders see the dentist (Tue 17th 9:00), 交房租 (Fri 13th 9:00), call the
  /// bank (Thu 12th 11:00), call the plumber (Sat 14th 10:00); events project review (Thu 12th
  /// 14:00), 和王老师吃饭 (Sat 14th 18:30).
  func seeded() async throws -> (TestMemory, [String: Int64]) {
    let memory = try TestMemory()
    let records = memory.engine.agentRecords
    var ids: [String: Int64] = [:]
    ids["dentist"] = try await records.addItem(
      kind: .reminder, title: "see the dentist", due: at(17, 9), at: clock.now)
    ids["rent"] = try await records.addItem(kind: .reminder, title: "交房租", due: at(13, 9), at: clock.now)
    ids["bank"] = try await records.addItem(
      kind: .reminder, title: "call the bank", due: at(12, 11), at: clock.now)
    ids["plumber"] = try await records.addItem(
      kind: .reminder, title: "call the plumber", due: at(14, 10), at: clock.now)
    ids["review"] = try await records.addItem(
      kind: .event, title: "project review", due: at(12, 14), at: clock.now)
    ids["dinner"] = try await records.addItem(
      kind: .event, title: "和王老师吃饭", due: at(14, 18, 30), at: clock.now)
    return (memory, ids)
  }

  func context(_ text: String, _ memory: TestMemory, recent: [Int64] = []) -> SkillContext {
    SkillContext(userText: text, clock: clock, engine: memory.engine, recentItems: recent)
  }

  /// Extract, validate and prepare as the agent does.
  func prepare(_ skill: any Skill, _ text: String, _ memory: TestMemory, recent: [Int64] = []) async throws
    -> SkillPreparation
  {
    let arguments = try ArgumentValidator.validate(
      skill.extractArguments(from: text, clock: clock), against: skill.inputSchema, timeZone: clock.timeZone)
    return try await skill.prepare(arguments: arguments, context: context(text, memory, recent: recent))
  }

  func ready(_ preparation: SkillPreparation, sourceLocation: SourceLocation = #_sourceLocation)
    -> SkillArguments?
  {
    guard case .ready(let arguments) = preparation else {
      Issue.record("expected ready, got \(preparation)", sourceLocation: sourceLocation)
      return nil
    }
    return arguments
  }

  // MARK: - Finding the item

  @Test func cancelFindsTheItemByTitleWordsDateOrReference() async throws {
    let (memory, ids) = try await seeded()
    let cancel = AgendaCancelSkill(kind: .reminder)
    #expect(
      ready(try await prepare(cancel, "cancel the dentist reminder", memory))?["id"]
        == .int(Int(ids["dentist"]!)))
    #expect(ready(try await prepare(cancel, "不用提醒我交房租了", memory))?["id"] == .int(Int(ids["rent"]!)))
    #expect(
      ready(try await prepare(cancel, "drop my reminder tomorrow at 11", memory))?["id"]
        == .int(Int(ids["bank"]!)))
    #expect(
      ready(try await prepare(cancel, "delete that reminder", memory, recent: [ids["rent"]!]))?["id"]
        == .int(Int(ids["rent"]!)))
    // A time alone names the item at that time of day; a period of a day, the items in it.
    let calendarCancel = AgendaCancelSkill(kind: .event)
    #expect(
      ready(try await prepare(calendarCancel, "cancel the 2pm meeting", memory))?["id"]
        == .int(Int(ids["review"]!)))
    #expect(
      ready(try await prepare(calendarCancel, "取消周六晚上的安排", memory))?["id"] == .int(Int(ids["dinner"]!)))
    #expect(
      ready(try await prepare(calendarCancel, "call off tomorrow's review", memory))?["id"]
        == .int(Int(ids["review"]!)))
    // The event of that name, though a reminder was asked for: the other kind is searched next.
    let found = ready(try await prepare(cancel, "cancel the project review reminder", memory))
    #expect(found?["id"] == .int(Int(ids["review"]!)))
    #expect(found?["kind"] == .string("event"))
  }

  @Test func severalMatchesAskWhichAndTheAnswerPicksOne() async throws {
    let (memory, ids) = try await seeded()
    let cancel = AgendaCancelSkill(kind: .reminder)
    guard
      case .ask(let parameter, let question, let arguments) = try await prepare(
        cancel, "delete the call reminder", memory)
    else {
      Issue.record("expected a question")
      return
    }
    #expect(parameter == "target")
    #expect(question.contains("“call the bank”") && question.contains("“call the plumber”"))
    #expect(!question.contains("dentist"))
    #expect(question.contains("#\(ids["bank"]!)"))
    // The bank (Thursday) comes before the plumber (Saturday): "2" is the plumber.
    for (answer, expected) in [
      ("2", "plumber"), ("the first one", "bank"), ("#\(ids["plumber"]!)", "plumber"), ("plumber", "plumber"),
    ] {
      var answered = arguments
      answered["target"] = .string(answer)
      let picked = ready(try await cancel.prepare(arguments: answered, context: context(answer, memory)))
      #expect(picked?["id"] == .int(Int(ids[expected]!)), "answer \(answer)")
    }
  }

  @Test func nothingMatchingSaysSoWithoutAnInternalError() async throws {
    let (memory, _) = try await seeded()
    for (skill, text) in [
      (AgendaCancelSkill(kind: .reminder) as any Skill, "cancel the haircut reminder"),
      (AgendaUpdateSkill(kind: .event), "move the board meeting to friday"),
    ] {
      guard case .reply(let output) = try await prepare(skill, text, memory) else {
        Issue.record("expected a reply for \(text)")
        continue
      }
      #expect(output.text.contains("couldn't find"), "\(output.text)")
      #expect(SwiftInternals.find(in: output.text).isEmpty)
    }
    let empty = try TestMemory()
    guard case .reply(let output) = try await prepare(AgendaCancelSkill(kind: .reminder), "cancel it", empty)
    else {
      Issue.record("expected a reply")
      return
    }
    #expect(output.text.contains("Nothing was changed"))
  }

  // MARK: - The new time

  @Test func aTimeAloneKeepsTheDayADayAloneKeepsTheTime() async throws {
    let (memory, ids) = try await seeded()
    let update = AgendaUpdateSkill(kind: .reminder)
    let cases: [(String, [Int64], Date)] = [
      ("shift it to 10", [ids["dentist"]!], at(17, 10)),  // keeps Tuesday
      ("move the dentist reminder to 3", [], at(17, 15)),  // 3 on another day is the afternoon
      ("把交房租的提醒改到周五晚上八点", [ids["rent"]!], at(13, 20)),
      ("把交房租的提醒挪到下周一", [], at(16, 9)),  // keeps 9:00
      ("push the dentist reminder back an hour", [], at(17, 10)),
      ("把它提前半小时", [ids["bank"]!], at(12, 10, 30)),
      ("move the call reminder from tomorrow at 11 to friday at 4", [], at(13, 16)),
      ("make it 4 instead", [ids["plumber"]!], at(14, 16)),
      ("move it to next week", [ids["dentist"]!], at(24, 9)),
      ("推到下周", [ids["rent"]!], at(20, 9)),
      ("move it to next week tuesday", [ids["bank"]!], at(17, 11)),
      ("postpone the dentist reminder until tomorrow evening", [], at(12, 20)),
      ("move the 11am reminder to 12:30", [], at(12, 12, 30)),
    ]
    for (text, recent, expected) in cases {
      let arguments = ready(try await prepare(update, text, memory, recent: recent))
      #expect(arguments?["when"] == .date(expected), "\(text)")
    }
  }

  @Test func anUpdateWithoutANewTimeAsksForOne() async throws {
    let (memory, ids) = try await seeded()
    guard
      case .ask(let parameter, let question, var arguments) = try await prepare(
        AgendaUpdateSkill(kind: .reminder), "change the dentist reminder", memory)
    else {
      Issue.record("expected a question")
      return
    }
    #expect(parameter == "to")
    #expect(question.contains("see the dentist"))
    arguments["to"] = .string("thursday at 8")
    let update = AgendaUpdateSkill(kind: .reminder)
    let answered = ready(
      try await update.prepare(arguments: arguments, context: context("thursday at 8", memory)))
    #expect(answered?["id"] == .int(Int(ids["dentist"]!)))
    #expect(answered?["when"] == .date(at(12, 8)))
  }

  // MARK: - Listing

  @Test func listingsCoverTheStretchNamed() async throws {
    let (memory, _) = try await seeded()
    let calendar = AgendaListSkill(kind: .event)
    func run(_ skill: any Skill, _ text: String) async throws -> SkillOutput {
      try await skill.execute(
        arguments: skill.extractArguments(from: text, clock: clock), context: context(text, memory))
    }
    guard case .agenda(_, let saturday, let lines) = try await run(calendar, "what's on saturday") else {
      Issue.record("expected a listing")
      return
    }
    // The dinner, and the plumber reminder that day.
    #expect(saturday.count == 2)
    #expect(lines.contains { $0.contains("和王老师吃饭") })
    let free = try await run(calendar, "am I free saturday afternoon")
    #expect(free.text.contains("“call the plumber”") == false)
    guard case .text(let morning) = try await run(calendar, "am I free friday afternoon") else {
      Issue.record("expected free")
      return
    }
    #expect(morning.contains("free"))
    guard
      case .agenda(_, let upcoming, _) = try await run(
        AgendaListSkill(kind: .reminder), "list all my reminders")
    else {
      Issue.record("expected reminders")
      return
    }
    #expect(upcoming.count == 4)
    let week = try await run(AgendaListSkill(kind: .event), "这周的日程")
    #expect(week.text.contains("project review"))
    #expect(week.text.contains("和王老师吃饭"))
  }

  // MARK: - A conversation

  @MainActor
  @Test func aConversationSetsListsMovesAndCancelsAReminder() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    func say(_ text: String) async throws -> AgentState { try await agent.send(text) }
    func confirm(_ state: AgentState, _ sourceLocation: SourceLocation = #_sourceLocation) async throws
      -> String
    {
      guard case .waitingForConfirmation = state else {
        Issue.record("expected a confirmation, got \(state)", sourceLocation: sourceLocation)
        return ""
      }
      guard case .finished(let reply) = try await agent.confirm() else { return "" }
      return reply.text
    }
    func reply(_ state: AgentState) -> String {
      if case .finished(let reply) = state { return reply.text }
      if case .waitingForConfirmation(let action) = state { return action.confirmationText }
      return "\(state)"
    }
    _ = try await confirm(try await say("remind me to call the dentist next Tuesday at 9"))
    _ = try await confirm(try await say("remind me to call the bank tomorrow at 11"))
    let listed = reply(try await say("list all my reminders"))
    #expect(listed.contains("call the dentist") && listed.contains("call the bank"))
    // "it" is now ambiguous between the two listed: the agent asks.
    let moveState = try await say("move the dentist reminder to 10")
    #expect(reply(moveState).contains("2025-06-17 10:00"))
    #expect(try await confirm(moveState).contains("2025-06-17 10:00"))
    let items = try await harness.engine.agentRecords.agenda(kind: .reminder)
    #expect(items.map(\.title) == ["call the bank", "call the dentist"])
    #expect(items.last?.dueAt == at(17, 10))
    // Ambiguous: both are calls.
    let which = reply(try await say("delete the call reminder"))
    #expect(which.contains("Which one"))
    let picked = try await say("2")
    #expect(reply(picked).contains("Cancel the reminder “call the dentist”"))
    #expect(try await confirm(picked).contains("Cancelled"))
    #expect(try await harness.engine.agentRecords.agenda(kind: .reminder).map(\.title) == ["call the bank"])
  }
}
