import EngramTestSupport
import Foundation
import Testing

@testable import Engram
@testable import EngramAgent

/// Routines in chat (issue 47): a sentence defines one, saying its name runs its steps as one
/// plan, a disabled skill's step is left out with a sentence, and a step that changes
/// something makes the whole routine confirm once. The phrases are written for these tests.
@MainActor @Suite(.timeLimit(.minutes(5)), .watchdog) struct AgentRoutineTests {
  @Test func aRoutineDefinedInChatRunsByNameAsOnePlan() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let defined = try await agent.send(
      "When I say evening wrap up, show today's calendar and my reminders")
    guard case .finished(let saved) = defined else {
      Issue.record("expected the routine to be saved, got \(defined)")
      return
    }
    #expect(saved.route == .routine)
    #expect(saved.text.contains("evening wrap up"))
    let routine = try #require(try await harness.engine.agentRecords.routine(named: "Evening Wrap Up"))
    #expect(routine.steps.map(\.skill) == ["calendar.list", "reminder.list"])
    #expect(routine.steps.map(\.text) == ["show today's calendar", "my reminders"])

    let ran = try await agent.send("evening wrap up")
    guard case .finished(let reply) = ran else {
      Issue.record("expected the routine to run without a question, got \(ran)")
      return
    }
    #expect(reply.route == .routine)
    #expect(reply.outputs.count == 2)
    let traces = try await harness.engine.agentRecords.traces(executionID: reply.executionID.uuidString)
    #expect(traces.compactMap(\.skillID).filter { $0 != Agent.planSkillID }.contains("calendar.list"))
    #expect(traces.compactMap(\.skillID).contains("reminder.list"))
  }

  @Test func aNearlySaidNameRunsTheRoutine() async throws {
    let harness = try AgentHarness()
    try await harness.engine.agentRecords.saveRoutine(
      Routine(
        name: "evening review",
        steps: [Routine.Step(text: "show my reminders", skill: "reminder.list")], createdAt: testClock.now))
    let agent = try await harness.agent()
    let state = try await agent.send("please run evening reveiw")
    guard case .finished(let reply) = state else {
      Issue.record("expected the routine to run, got \(state)")
      return
    }
    #expect(reply.route == .routine)
  }

  @Test func aChineseDefinitionIsSavedAndRunsByItsName() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let defined = try await agent.send("以后我说“早安”就看看今天的日程和我的提醒")
    guard case .finished(let saved) = defined else {
      Issue.record("expected the routine to be saved, got \(defined)")
      return
    }
    #expect(saved.text.contains("已保存例程"))
    let routine = try #require(try await harness.engine.agentRecords.routine(named: "早安"))
    #expect(routine.steps.map(\.skill) == ["calendar.list", "reminder.list"])
    let ran = try await agent.send("早安！")
    guard case .finished(let reply) = ran else {
      Issue.record("expected the routine to run, got \(ran)")
      return
    }
    #expect(reply.route == .routine)
    #expect(reply.outputs.count == 2)
  }

  @Test func aDisabledSkillIsLeftOutOfTheRoutineWithASentence() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    _ = try await agent.send("When I say evening wrap up, show today's calendar and my reminders")
    try await harness.registry.setEnabled(false, id: "reminder.list")
    let state = try await agent.send("evening wrap up")
    guard case .finished(let reply) = state else {
      Issue.record("expected the routine to finish, got \(state)")
      return
    }
    #expect(reply.text.contains("Not done (reminder.list): the skill reminder.list is disabled."))
    #expect(reply.outputs.count == 1)
  }

  @Test func aRoutineThatChangesSomethingIsConfirmedOnce() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    _ = try await agent.send(
      "when I say \"wind down\", remind me tomorrow at 9pm to stretch, then show my reminders")
    let routine = try #require(try await harness.engine.agentRecords.routine(named: "wind down"))
    #expect(routine.steps.map(\.skill) == ["reminder.create", "reminder.list"])
    #expect(try await harness.engine.agentRecords.items().isEmpty)
    let state = try await agent.send("wind down")
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected one confirmation, got \(state)")
      return
    }
    #expect(action.skillID == Agent.planSkillID)
    _ = try await agent.confirm()
    #expect(try await harness.engine.agentRecords.items().map(\.title) == ["stretch"])
  }

  @Test func routinesAreListedAndRemovedInChat() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    _ = try await agent.send("When I say evening wrap up, show today's calendar and my reminders")
    guard case .finished(let listed) = try await agent.send("list my routines") else {
      Issue.record("expected the list")
      return
    }
    #expect(listed.text.contains("“evening wrap up”: show today's calendar; my reminders"))
    guard case .finished(let removed) = try await agent.send("remove the routine evening wrap up") else {
      Issue.record("expected the removal")
      return
    }
    #expect(removed.text == "Removed the routine “evening wrap up”.")
    #expect(try await harness.engine.agentRecords.routines().isEmpty)
    guard case .finished(let again) = try await agent.send("删除例程“早安”") else {
      Issue.record("expected the removal")
      return
    }
    #expect(again.text == "没有名为“早安”的例程，没有删除任何内容。")
  }

  @Test func aDefinitionWithAStepNoSkillClaimsSavesNothing() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let state = try await agent.send("when I say tidy up, blorp the flibbet")
    guard case .finished(let reply) = state else {
      Issue.record("expected a refusal, got \(state)")
      return
    }
    #expect(reply.text.contains("did not save the routine"))
    #expect(try await harness.engine.agentRecords.routines().isEmpty)
  }
}
