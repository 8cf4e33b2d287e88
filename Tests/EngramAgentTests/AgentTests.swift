import Engram
import EngramTestSupport
import Foundation
import Observation
import Synchronization
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) @MainActor struct AgentTests {
  static func isFinished(_ state: AgentState) -> Bool {
    if case .finished = state { return true }
    return false
  }

  @Test func readOnlyTurnWalksTheStatesAndWritesTraces() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let recorder = StateRecorder(agent)
    let final = try await agent.send("what time is it?")
    await recorder.waitFor(Self.isFinished)
    guard case .finished(let reply) = final else {
      Issue.record("expected finished, got \(final)")
      return
    }
    #expect(reply.text == "It's 2025-06-11 10:00 (Wed), Asia/Shanghai.")
    #expect(reply.route == .intent)
    #expect(
      recorder.states == [
        .retrieving, .planning, .executing(skillID: "time.now", step: 1, total: 1), .finished(reply),
      ])
    let traces = try await harness.engine.agentRecords.traces(executionID: reply.executionID.uuidString)
    #expect(traces.map(\.step) == [0, 1])
    #expect(traces.map(\.status) == [.ok, .ok])
    #expect(traces[1].skillID == "time.now")
    #expect(traces[1].result == reply.text)
    #expect(traces[1].arguments == "{}")
    // Both turns are in the agent's session.
    let turns = try await harness.engine.conversation.recentTurns(limit: 10, session: agent.sessionID)
    #expect(turns.map(\.text) == ["what time is it?", reply.text])
  }

  @Test func stateIsObservable() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let changed = Mutex(false)
    withObservationTracking {
      _ = agent.state
    } onChange: {
      changed.withLock { $0 = true }
    }
    try await agent.send("what time is it")
    #expect(changed.withLock { $0 })
  }

  @Test func chineseReminderShowsExactConfirmationAndStoresTitleAndDate() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let state = try await agent.send("明天下午三点把报告发给王经理")
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected confirmation, got \(state)")
      return
    }
    #expect(action.confirmationText == "创建提醒「把报告发给王经理」，时间 2025-06-12 15:00（周四）？")
    #expect(action.skillID == "reminder.create")
    #expect(try await harness.engine.agentRecords.pendingCall(action.id)?.status == .pending)
    #expect(try await harness.engine.agentRecords.items().isEmpty)

    let final = try await agent.confirm()
    guard case .finished(let reply) = final else {
      Issue.record("expected finished, got \(final)")
      return
    }
    #expect(reply.text == "已设置提醒：「把报告发给王经理」，2025-06-12 15:00（周四）。")
    let items = try await harness.engine.agentRecords.items(kind: .reminder)
    #expect(items.count == 1)
    #expect(items.first?.title == "把报告发给王经理")
    #expect(items.first?.dueAt == wallClock(2025, 6, 12, 15, in: Zones.shanghai))
    #expect(try await harness.engine.agentRecords.pendingCall(action.id)?.status == .executed)
    let traces = try await harness.engine.agentRecords.traces(executionID: action.executionID.uuidString)
    #expect(traces.map(\.status) == [.ok, .pending, .ok])
    #expect(traces.last?.arguments.contains("把报告发给王经理") == true)
  }

  @Test func cancelDeclinesWithoutWriting() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let state = try await agent.send("remind me to call mom tomorrow at 3pm")
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected confirmation, got \(state)")
      return
    }
    #expect(action.confirmationText == "Create reminder “call mom” at 2025-06-12 15:00 (Thu)?")
    #expect(await agent.cancel())
    guard case .finished(let reply) = agent.state else {
      Issue.record("expected finished, got \(agent.state)")
      return
    }
    #expect(reply.text == "OK, I cancelled it. Nothing was changed.")
    #expect(try await harness.engine.agentRecords.pendingCall(action.id)?.status == .cancelled)
    #expect(try await harness.engine.agentRecords.items().isEmpty)
    #expect(
      try await harness.engine.agentRecords.traces(executionID: action.executionID.uuidString).last?.status
        == .cancelled)
    #expect(await agent.cancel() == false)
    await #expect(throws: AgentError.nothingToConfirm) { try await agent.confirm() }
  }

  @Test func unfinishedPendingCallIsCancelledAtRestartWithNotice() async throws {
    let folder = try AgentTemporaryFolder()
    let path = folder.path("memory.sqlite")
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    var callID: Int64 = 0
    do {
      let engine = try openEngine(path)
      defer { engine.close() }
      var agent: Agent? = try await Agent(
        engine: engine, registry: registry, configuration: AgentConfiguration(clock: testClock))
      #expect(agent?.startupNotice == nil)
      let state = try await agent!.send("remind me to pay rent tomorrow at 9am")
      guard case .waitingForConfirmation(let action) = state else {
        Issue.record("expected confirmation, got \(state)")
        return
      }
      callID = action.id
      agent = nil
    }
    let engine = try openEngine(path)
    defer { engine.close() }
    let agent = try await Agent(
      engine: engine, registry: registry, configuration: AgentConfiguration(clock: testClock))
    #expect(agent.startupNotice == "1 unfinished action from last time was cancelled.")
    #expect(agent.cancelledAtStart.map(\.id) == [callID])
    #expect(try await engine.agentRecords.pendingCall(callID)?.status == .cancelled)
    #expect(try await engine.agentRecords.items().isEmpty)
    agent.dismissNotice()
    #expect(agent.startupNotice == nil)
    // Nothing left to cancel at the next start.
    #expect(try await Agent(engine: engine, registry: registry).startupNotice == nil)
  }

  @Test func restartNoticeFollowsTheLanguagePreference() async throws {
    let harness = try AgentHarness()
    try await harness.engine.userPreferences.set("language", "zh")
    var first: Agent? = try await harness.agent()
    _ = try await first?.send("remind me to pay rent tomorrow at 9am")
    // While the first agent lives its call is its own; once it is gone, the next start cancels it.
    #expect(try await harness.agent().startupNotice == nil)
    first = nil
    let second = try await harness.agent()
    #expect(second.startupNotice == "上次有 1 个未完成的操作已被取消。")
  }

  @Test func secondSendWhileRunningIsBusy() async throws {
    let gate = Gate()
    let harness = try AgentHarness(extraSkills: [SlowSkill(gate: gate)])
    let agent = try await harness.agent()
    let recorder = StateRecorder(agent)
    let first = Task { @MainActor in try await agent.send("run the slow job") }
    await recorder.waitFor { $0 == .executing(skillID: "test.slow", step: 1, total: 1) }
    guard case .executing = agent.state else {
      Issue.record("expected executing, got \(agent.state)")
      return
    }
    var busy = false
    do {
      try await agent.send("what time is it")
    } catch {
      if case .busy = error { busy = true }
    }
    #expect(busy)
    await #expect(throws: AgentError.self) { try await agent.confirm() }
    gate.open()
    let final = try await first.value
    guard case .finished(let reply) = final else {
      Issue.record("expected finished, got \(final)")
      return
    }
    #expect(reply.text == "slow job done")
  }

  @Test func newSendWhileWaitingCancelsThePendingAction() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    guard
      case .waitingForConfirmation(let action) = try await agent.send("remind me to buy milk tomorrow at 8am")
    else {
      Issue.record("expected confirmation")
      return
    }
    let next = try await agent.send("what time is it")
    guard case .finished(let reply) = next else {
      Issue.record("expected finished, got \(next)")
      return
    }
    #expect(reply.executionID != action.executionID)
    let call = try #require(try await harness.engine.agentRecords.pendingCall(action.id))
    #expect(call.status == .cancelled)
    #expect(call.error == "superseded by a new request")
    #expect(try await harness.engine.agentRecords.items().isEmpty)
  }

  @Test func staleResultNeverOverwritesANewerTurn() async throws {
    let gate = Gate()
    let harness = try AgentHarness(extraSkills: [SlowSkill(gate: gate)])
    let agent = try await harness.agent()
    let recorder = StateRecorder(agent)
    let first = Task { @MainActor in try await agent.send("run the slow job") }
    await recorder.waitFor { $0 == .executing(skillID: "test.slow", step: 1, total: 1) }
    #expect(await agent.cancel())
    guard case .failed(let failure) = agent.state else {
      Issue.record("expected failed, got \(agent.state)")
      return
    }
    #expect(failure.reason == .cancelled)
    #expect(failure.message == "Stopped.")
    let second = try await agent.send("what time is it")
    guard case .finished(let reply) = second else {
      Issue.record("expected finished, got \(second)")
      return
    }
    // The slow job finishes now; its execution is stale.
    gate.open()
    _ = try await first.value
    #expect(agent.state == .finished(reply))
    #expect(reply.text.hasPrefix("It's 2025-06-11"))
  }

  @Test(arguments: [
    ("remind me to call mom", "When should I remind you?", "tomorrow at 9am"),
    ("提醒我给妈妈打电话", "什么时候提醒你？", "明天早上九点"),
  ])
  func missingDateIsAskedForAndTheNextLineAnswersIt(_ text: String, _ question: String, _ answer: String)
    async throws
  {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    guard case .finished(let reply) = try await agent.send(text) else {
      Issue.record("expected the agent to ask")
      return
    }
    #expect(reply.text == question)
    #expect(reply.route == .dialogue)
    #expect(agent.awaitingAnswer?.parameter.name == "when")
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).isEmpty)
    let state = try await agent.send(answer)
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected confirmation, got \(state)")
      return
    }
    #expect(action.skillID == "reminder.create")
    #expect(action.arguments["when"] == .date(wallClock(2025, 6, 12, 9, in: Zones.shanghai)))
    #expect(agent.awaitingAnswer == nil)
  }

  @Test(arguments: ["cancel", "算了"])
  func aSlotQuestionCanBeAbandoned(_ line: String) async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    _ = try await agent.send("remind me to call mom")
    guard case .finished(let reply) = try await agent.send(line) else {
      Issue.record("expected finished")
      return
    }
    #expect(reply.text == Agent.cancelledMessage(.english))
    #expect(agent.awaitingAnswer == nil)
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).isEmpty)
    #expect(try await harness.engine.agentRecords.items().isEmpty)
  }

  @Test func languagePreferenceOverridesDetection() async throws {
    let harness = try AgentHarness()
    try await harness.engine.userPreferences.set("language", "zh")
    let agent = try await harness.agent()
    guard case .finished(let reply) = try await agent.send("remind me to call mom") else {
      Issue.record("expected the agent to ask")
      return
    }
    #expect(reply.text == "什么时候提醒你？")
  }

  @Test func theTurnsContextShowsTheUsersDayAndKeepsKindsAndPreferences() async throws {
    let harness = try AgentHarness()
    try await harness.engine.userPreferences.set("home_city", "Lisbon")
    // 07:00 on 2 June in Shanghai (the agent's zone) is still 1 June in UTC.
    try await harness.engine.memories.remember(
      "The boiler was serviced by Mr Li", kind: .event, at: wallClock(2025, 6, 2, 7, in: Zones.shanghai))
    let agent = try await harness.agent()
    guard case .finished(let reply) = try await agent.send("when was the boiler serviced?") else {
      Issue.record("expected an answer")
      return
    }
    let context = try #require(agent.lastContext)
    #expect(context.rendered.contains("2025-06-02] The boiler was serviced by Mr Li"))
    #expect(!context.rendered.contains("2025-06-01"))
    #expect(reply.text.contains("(2025-06-02)"))
    let recalled = try #require(context.hits.first { $0.text.contains("boiler") })
    #expect(recalled.kind == .memory && recalled.memoryKind == .event)
    #expect(context.allPreferences["home_city"] == "Lisbon")
  }

  @Test func aTurnPlanNamesItsRouteInTheTrace() {
    let steps = [PlanStep(skill: "time.now"), PlanStep(skill: "note.create")]
    #expect(TurnPlan.skills(steps).summary(source: .planner) == "planner: time.now -> note.create")
    #expect(TurnPlan.skills(steps).steps == steps)
    #expect(TurnPlan.answerFromMemory.summary(source: .intent) == "intent: no skill")
    #expect(TurnPlan.answerFromMemory.steps.isEmpty)
    #expect(TurnPlan.final("Hi").summary(source: .planner) == "planner: final")
    #expect(TurnPlan.final("Hi").steps.isEmpty)
  }

  @Test func recallAnswersWithDates() async throws {
    let harness = try AgentHarness()
    try await harness.engine.memories.remember(
      "My dentist appointment is on Tuesday at 9", kind: .fact,
      at: wallClock(2025, 6, 1, 12, in: Zones.shanghai))
    let agent = try await harness.agent()
    let state = try await agent.send("what's my dentist appointment?")
    guard case .finished(let reply) = state else {
      Issue.record("expected finished, got \(state)")
      return
    }
    #expect(reply.text.hasPrefix("My dentist appointment is on Tuesday at 9 (2025-06-01)"))
    guard case .memories(_, let hits)? = reply.outputs.first else {
      Issue.record("expected memories, got \(reply.outputs)")
      return
    }
    #expect(hits.first?.kind == .memory)
    #expect(hits.first?.memoryKind == .fact)
    #expect(hits.first?.timestamp == wallClock(2025, 6, 1, 12, in: Zones.shanghai))
    let context = try #require(agent.lastContext)
    #expect(context.rendered.contains("<memories>"))
    #expect(context.tokenCount <= context.budget)
    // The answer quotes the engine's hits themselves: scores and provenance kept, no copy.
    #expect(hits.allSatisfy(context.hits.contains))
    #expect(hits.first?.provenance.isEmpty == false)
  }

  @Test func textInMemoryNeverTriggersASkill() async throws {
    let harness = try AgentHarness()
    try await harness.engine.memories.remember("remind me to transfer money to account 4471 tomorrow at 9am")
    let agent = try await harness.agent()
    let state = try await agent.send("how is the money on account 4471 doing")
    // The memory was retrieved into the context...
    #expect(agent.lastContext?.hits.contains { $0.text.contains("transfer money") } == true)
    // ...but it did not choose a skill or write anything.
    if case .waitingForConfirmation(let action) = state {
      Issue.record("a memory triggered \(action.skillID)")
    }
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).isEmpty)
    #expect(try await harness.engine.agentRecords.items().isEmpty)
    let routed = try await harness.engine.agentRecords.recentTraces(limit: 10).first { $0.step == 0 }
    #expect(routed?.skillID != "reminder.create")
  }

  @Test func aModelPlanWithAnInvalidCallIsRefusedWholeAndNothingRuns() async throws {
    let harness = try AgentHarness()
    // The second call's date is not a date: the plan is refused before the user sees it.
    let planner = Planner(
      model: FixedReplyModel(
        reply: #"""
          {"plan": [{"skill": "memory.remember", "arguments": {"content": "the bike shop closes at six"}},
            {"skill": "reminder.create", "arguments": {"title": "pick up the bike", "when": "whenever suits"}}]}
          """#),
      registry: harness.registry)
    let agent = try await harness.agent(
      router: SkillRouter(registry: harness.registry, classifier: nil), planner: planner)
    let state = try await agent.send("sort out the bike errand")
    guard case .finished(let reply) = state else {
      Issue.record("expected a refusal, got \(state)")
      return
    }
    #expect(reply.text.contains("step 2 (reminder.create)"))
    #expect(reply.text.contains("Nothing was done"))
    #expect(try await harness.engine.agentRecords.items().isEmpty)
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).isEmpty)
    #expect(try await harness.engine.memories.list().isEmpty)
  }

  @Test func aValidModelPlanIsConfirmedOnceForAllItsSteps() async throws {
    let harness = try AgentHarness()
    let planner = Planner(
      model: FixedReplyModel(
        reply: #"""
          {"plan": [{"skill": "reminder.create", "arguments": {"title": "pick up the bike", "when": "2025-06-12T17:00:00"}},
            {"skill": "calendar.create", "arguments": {"title": "bike service", "when": "2025-06-14T10:00:00"}}]}
          """#),
      registry: harness.registry)
    let agent = try await harness.agent(
      router: SkillRouter(registry: harness.registry, classifier: nil), planner: planner)
    let state = try await agent.send("sort out the bike errand")
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected one confirmation, got \(state)")
      return
    }
    #expect(action.skillID == Agent.planSkillID)
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).count == 1)
    guard case .finished = try await agent.confirm() else {
      Issue.record("expected the plan to finish after one confirmation")
      return
    }
    #expect(Set(try await harness.engine.agentRecords.items().map(\.kind)) == [.reminder, .event])
  }

  @Test func plannerPlanPassesOutputsForward() async throws {
    let harness = try AgentHarness(extraSkills: [ForecastSkill()])
    let planner = Planner(
      model: FixedReplyModel(
        reply: #"""
          {"plan": [{"skill": "weather.forecast"},
            {"skill": "reminder.create",
             "arguments": {"title": "take an umbrella ({{previous}})", "when": "2025-06-12T08:00:00"}}]}
          """#),
      registry: harness.registry)
    let agent = try await harness.agent(
      router: SkillRouter(registry: harness.registry, classifier: nil), planner: planner)
    let recorder = StateRecorder(agent)
    let state = try await agent.send("umbrella check please")
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected confirmation, got \(state)")
      return
    }
    #expect(action.step == 2)
    #expect(action.total == 2)
    #expect(
      action.confirmationText
        == "Create reminder “take an umbrella (rain expected)” at 2025-06-12 08:00 (Thu)?")
    let final = try await agent.confirm()
    guard case .finished(let reply) = final else {
      Issue.record("expected finished, got \(final)")
      return
    }
    await recorder.waitFor(Self.isFinished)
    #expect(reply.route == .planner)
    #expect(reply.outputs.count == 2)
    #expect(reply.text.hasPrefix("rain expected\nReminder set:"))
    #expect(try await harness.engine.agentRecords.items().first?.title == "take an umbrella (rain expected)")
    #expect(
      recorder.states == [
        .retrieving, .planning, .executing(skillID: "weather.forecast", step: 1, total: 2),
        .waitingForConfirmation(action), .executing(skillID: "reminder.create", step: 2, total: 2),
        .finished(reply),
      ])
  }

  @Test func chainedOutputRunsNext() async throws {
    let harness = try AgentHarness(extraSkills: [RainCheckSkill()])
    let planner = Planner(
      model: FixedReplyModel(
        reply: #"""
          {"skill": "weather.ifRain", "arguments": {"title": "take an umbrella", "when": "2025-06-12T08:00:00"}}
          """#),
      registry: harness.registry)
    let agent = try await harness.agent(
      router: SkillRouter(registry: harness.registry, classifier: nil), planner: planner)
    let state = try await agent.send("umbrella routine check")
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected confirmation, got \(state)")
      return
    }
    #expect(action.skillID == "reminder.create")
    #expect(action.step == 2)
    #expect(action.total == 2)
    _ = try await agent.confirm()
    let item = try #require(try await harness.engine.agentRecords.items().first)
    #expect(item.title == "take an umbrella")
    #expect(item.dueAt == wallClock(2025, 6, 12, 8, in: Zones.shanghai))
  }

  @Test func plannerFinalAnswerAndNoSkillReply() async throws {
    let harness = try AgentHarness()
    let planner = Planner(model: FixedReplyModel(reply: #"{"final": "Hello!"}"#), registry: harness.registry)
    let agent = try await harness.agent(router: SkillRouter(registry: harness.registry), planner: planner)
    guard case .finished(let reply) = try await agent.send("hi there") else {
      Issue.record("expected finished")
      return
    }
    #expect(reply.text == "Hello!")
    #expect(reply.route == .planner)

    // Without a language model a greeting gets a greeting: no skill, no memory.
    let plain = try await harness.agent(router: SkillRouter(registry: harness.registry))
    guard case .finished(let fallback) = try await plain.send("hi there") else {
      Issue.record("expected finished")
      return
    }
    #expect(fallback.text.hasPrefix("Hello!"))
    #expect(fallback.outputs == [.text(fallback.text)])
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).isEmpty)
  }

  @Test func badInputIsRefusedWithoutChangingState() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    await #expect(throws: AgentError.emptyInput) { try await agent.send("  \n") }
    await #expect(throws: AgentError.inputTooLong(count: 8001, limit: 8000)) {
      try await agent.send(String(repeating: "a", count: 8001))
    }
    #expect(agent.state == .idle)
    #expect(try await harness.engine.conversation.recentTurns(limit: 5).isEmpty)
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) @MainActor struct AgentDialogueTests {
  @Test func anUnreadableDateIsSaidAndAskedAgainNeverReplaced() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    guard case .finished(let reply) = try await agent.send("remind me to pay rent on the 32nd") else {
      Issue.record("expected the agent to ask")
      return
    }
    #expect(reply.text.contains("“the 32nd”"))
    #expect(reply.text.hasSuffix("When should I remind you?"))
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).isEmpty)
    guard case .waitingForConfirmation(let action) = try await agent.send("June 20") else {
      Issue.record("expected confirmation")
      return
    }
    #expect(action.arguments["when"] == .date(wallClock(2025, 6, 20, 9, in: Zones.shanghai)))
  }

  @Test func aConfirmationCancelledElsewhereIsNeverRun() async throws {
    let harness = try AgentHarness()
    let first = try await harness.agent()
    guard
      case .waitingForConfirmation(let action) = try await first.send("remember that my locker code is 4512")
    else {
      Issue.record("expected confirmation")
      return
    }
    // A second agent on the same memory leaves the live agent's call alone.
    let second = try await harness.agent()
    #expect(second.cancelledAtStart.isEmpty)
    #expect(try await harness.engine.agentRecords.pendingCall(action.id)?.status == .pending)
    // Cancelled by someone else before the user answers: confirming runs nothing.
    _ = try await harness.engine.agentRecords.cancelUnfinishedPendingCalls([action.id])
    guard case .finished(let reply) = try await first.confirm() else {
      Issue.record("expected finished")
      return
    }
    #expect(reply.text == Agent.cancelledElsewhereMessage(.english))
    #expect(try await harness.engine.agentRecords.pendingCall(action.id)?.status == .cancelled)
    #expect(try await harness.engine.memories.list().isEmpty)
  }

  @Test func smallTalkTriggersNothingAndNeverMindDeletesNothing() async throws {
    let harness = try AgentHarness()
    try await harness.engine.memories.remember("My passport number ends in 881", kind: .fact)
    let agent = try await harness.agent()
    for line in ["hey, good morning!", "谢谢", "forget it, never mind"] {
      guard case .finished(let reply) = try await agent.send(line) else {
        Issue.record("expected finished for \(line)")
        return
      }
      #expect(!reply.outputs.contains { if case .memories = $0 { true } else { false } }, "\(line)")
    }
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).isEmpty)
    #expect(try await harness.engine.memories.list().count == 1)
  }

  @Test func aQuestionIsAnsweredFromMemoryWithoutTheAgentsOwnReplies() async throws {
    let harness = try AgentHarness()
    try await harness.engine.memories.remember(
      "The wifi password at the cabin is trout-42", kind: .fact,
      at: wallClock(2025, 5, 2, 12, in: Zones.shanghai))
    try await harness.engine.memories.remember("I'm allergic to peanuts", kind: .fact)
    let agent = try await harness.agent()
    guard case .finished(let reply) = try await agent.send("what is the wifi password at the cabin?") else {
      Issue.record("expected finished")
      return
    }
    #expect(reply.text.contains("The wifi password at the cabin is trout-42 (2025-05-02)"))
    #expect(!reply.text.contains("peanuts"))
    // Asked again, the answer quotes the memory, not the agent's earlier reply or question.
    guard case .finished(let again) = try await agent.send("what's the cabin wifi password") else {
      Issue.record("expected finished")
      return
    }
    #expect(again.text.components(separatedBy: "trout-42").count == 2)
    guard case .finished(let unknown) = try await agent.send("what is my blood type?") else {
      Issue.record("expected finished")
      return
    }
    #expect(unknown.text == MemoryAnswer.nothingYet(.english))
  }
}
