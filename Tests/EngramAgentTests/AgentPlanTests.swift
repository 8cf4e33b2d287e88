import EngramTestSupport
import Foundation
import Testing

@testable import Engram
@testable import EngramAgent

/// A plan of several steps in the agent's turn: confirmed once, conditions checked when the
/// step runs (a condition that fails or is about a later moment never runs its step), a
/// failed step reported while the others run. The phrases are written for these tests.
@MainActor @Suite(.timeLimit(.minutes(5)), .watchdog) struct AgentPlanTests {
  static func isFinished(_ state: AgentState) -> Bool {
    if case .finished = state { return true }
    return false
  }

  @Test func aTwoStepPlanIsConfirmedOnceAndRunsBothSteps() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let state = try await agent.send(
      "remind me to return the library books on Monday at 8, and add the chess club to my calendar for Thursday at 7pm"
    )
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected one confirmation, got \(state)")
      return
    }
    #expect(action.skillID == Agent.planSkillID)
    #expect(action.confirmationText.contains("1. "))
    #expect(action.confirmationText.contains("2. "))
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).count == 1)
    let final = try await agent.confirm()
    guard case .finished(let reply) = final else {
      Issue.record("expected finished, got \(final)")
      return
    }
    let items = try await harness.engine.agentRecords.items()
    #expect(Set(items.map(\.kind)) == [.reminder, .event])
    #expect(reply.outputs.count == 2)
  }

  @Test func aDeclinedPlanWritesNothing() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    _ = try await agent.send(
      "remind me to return the library books on Monday at 8, and add the chess club to my calendar for Thursday at 7pm"
    )
    #expect(await agent.cancel())
    #expect(try await harness.engine.agentRecords.items().isEmpty)
  }

  @Test func aTimeConditionThatDoesNotHoldLeavesItsStepOut() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    // 10:00 in Shanghai is 11:00 in Tokyo: not yet after 9pm.
    let state = try await agent.send(
      "if it's already after 9pm in Tokyo, remind me tomorrow at 8 to message Kenji")
    guard case .finished(let reply) = state else {
      Issue.record("expected the turn to finish without asking, got \(state)")
      return
    }
    #expect(reply.text.contains("does not hold"))
    #expect(try await harness.engine.agentRecords.items().isEmpty)
  }

  @Test func aTimeConditionThatHoldsRunsItsStepAfterConfirmation() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let state = try await agent.send(
      "if it's already after 9am in Tokyo, remind me tomorrow at 8 to message Kenji")
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected confirmation, got \(state)")
      return
    }
    #expect(action.confirmationText.contains("only if"))
    _ = try await agent.confirm()
    #expect(try await harness.engine.agentRecords.items().map(\.title) == ["message Kenji"])
  }

  @Test func aReminderKeepsAConditionOnALaterDayToBeCheckedWhenItComesDue() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let state = try await agent.send(
      "if it snows on Saturday, remind me on Friday evening to put the shovel by the door")
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected one confirmation, got \(state)")
      return
    }
    #expect(action.confirmationText.contains("(only if it snows on Saturday, checked when it comes due)"))
    // Nothing is checked (or stored) before the confirmation.
    #expect(try await harness.engine.agentRecords.items().isEmpty)
    let final = try await agent.confirm()
    guard case .finished(let reply) = final else {
      Issue.record("expected finished, got \(final)")
      return
    }
    #expect(reply.text.contains("Only if it snows on Saturday (checked when it comes due)."))
    let items = try await harness.engine.agentRecords.items()
    #expect(items.map(\.title) == ["put the shovel by the door"])
    let stored = try #require(items.first?.condition.flatMap(StepCondition.init(storedText:)))
    #expect(stored.kind == .weather && stored.about == "snow" && !stored.negated)
    #expect(stored.text == "it snows on Saturday")
    // Saturday 2025-06-14 in Shanghai, after the reminder (Friday evening) comes due.
    let saturday = try #require(stored.when)
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = testClock.timeZone
    #expect(calendar.component(.weekday, from: saturday) == 7)
    #expect(try #require(items.first?.dueAt) < saturday)
    #expect(items.first?.conditionOutcome == nil)
  }

  @Test func aConditionOnALaterDayIsNeverRunAsIfItHeldByAStepThatCannotKeepIt() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let saturday = testClock.now.addingTimeInterval(3 * 86_400)
    let steps = [
      PlanStep(
        skill: "calendar.create",
        arguments: ["title": .string("shovel the drive"), "when": .date(saturday)],
        condition: StepCondition(kind: .weather, about: "snow", when: saturday, text: "it snows on Saturday"))
    ]
    let state = await agent.runPlanForTesting(steps, text: "if it snows on Saturday, add shovelling")
    guard case .finished(let reply) = state else {
      Issue.record("expected the turn to finish without asking, got \(state)")
      return
    }
    #expect(reply.text.contains("later moment"))
    #expect(try await harness.engine.agentRecords.items().isEmpty)
  }

  @Test func aStepConditionRoundTripsThroughItsStoredText() throws {
    let condition = StepCondition(
      kind: .weather, about: "rain", negated: true, when: Date(timeIntervalSince1970: 1_749_900_000),
      zone: "Asia/Tokyo", place: "Lisbon", text: "unless it rains on Saturday")
    #expect(StepCondition(storedText: condition.storedText) == condition)
    #expect(StepCondition(storedText: "not json") == nil)
    #expect(condition.storedText.contains(#""when":"2025-06-14T11:20:00Z""#))
  }

  /// A sum over a value the user stored recalls it, and the calculator takes the number found.
  @Test func aSumOverAStoredValueTakesTheRecalledNumber() async throws {
    let harness = try AgentHarness()
    try await harness.engine.memories.remember("My monthly rent for the flat is 2400")
    let agent = try await harness.agent()
    let state = try await agent.send("what's 12 percent of the rent I gave you")
    guard case .finished(let reply) = state else {
      Issue.record("expected the look-up and the sum to run without asking, got \(state)")
      return
    }
    #expect(reply.outputs.count == 2, "\(reply.outputs.map(\.text)) \(reply.text)")
    #expect(reply.outputs.last?.text.contains("288") == true, "\(reply.outputs.map(\.text))")
  }

  @Test func aFailedMiddleStepIsReportedAndTheOthersRun() async throws {
    let failing = StubSkill(
      id: "test.fail", accepts: { _ in false },
      body: { _ in throw SkillError.executionFailed(skill: "test.fail", reason: "boom") })
    let harness = try AgentHarness(extraSkills: [failing])
    let agent = try await harness.agent()
    // No request routes to the stub: the plan is handed to the orchestrator as the rules would.
    let steps = [
      PlanStep(skill: "note.create", arguments: ["content": .string("first list")]),
      PlanStep(skill: "test.fail"),
      PlanStep(skill: "note.create", arguments: ["content": .string("third list")]),
      PlanStep(skill: "reminder.create", arguments: ["title": .string("after the failure")], inputFrom: 1),
    ]
    let state = await agent.runPlanForTesting(steps, text: "three things")
    guard case .waitingForConfirmation = state else {
      Issue.record("expected one confirmation, got \(state)")
      return
    }
    let final = try await agent.confirm()
    guard case .finished(let reply) = final else {
      Issue.record("expected finished, got \(final)")
      return
    }
    let notes = try await harness.engine.agentRecords.items().filter { $0.kind == .note }
    #expect(notes.count == 2)
    #expect(reply.text.contains("Not done (test.fail)"))
    #expect(reply.text.contains("Not done (reminder.create)"))
    #expect(try await harness.engine.agentRecords.items().allSatisfy { $0.kind != .reminder })
  }

  /// A question no skill takes, asked beside a request, is answered in its place: from memory
  /// without a language model (honestly: nothing about it), by the model when there is one;
  /// the request is confirmed and runs as before.
  @Test func aQuestionNoSkillTakesIsAnsweredInItsPlace() async throws {
    let text = "who composed the Moonlight Sonata? also remind me at 6 to water the ferns"
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let state = try await agent.send(text)
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected one confirmation, got \(state)")
      return
    }
    #expect(
      action.confirmationText.contains("1. \(MemoryAnswer.nothingYet(.english))"),
      "\(action.confirmationText)")
    #expect(action.confirmationText.contains("2. "))
    guard case .finished(let reply) = try await agent.confirm() else {
      Issue.record("expected the plan to finish")
      return
    }
    #expect(try await harness.engine.agentRecords.items().map(\.kind) == [.reminder])
    #expect(reply.outputs.count == 2)

    let answer = "Beethoven wrote it."
    let server = try StubHTTPServer(responses: [
      .streamed(
        parts: ChatCompletionStream.pieces(ChatCompletionStream.body([answer]), size: 7), pauseSeconds: 0)
    ])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    let withModel = try AgentHarness()
    let modelAgent = try await withModel.agent(planner: Planner(model: client, registry: withModel.registry))
    guard case .waitingForConfirmation(let asked) = try await modelAgent.send(text) else {
      Issue.record("expected one confirmation with a model")
      return
    }
    #expect(asked.confirmationText.contains("1. \(answer)"), "\(asked.confirmationText)")
    let body = String(decoding: try #require(server.requests.first).body, as: UTF8.self)
    #expect(body.contains("who composed the Moonlight Sonata?"))
  }

  /// A step that runs when its condition's words do not hold ("unless it snows", the other
  /// branch of "if it snows") says "unless" on its line, never "only if".
  @Test func aStepThatRunsWhenTheWordsDoNotHoldSaysUnless() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    let branches = try await agent.send(
      "if it snows on Sunday, remind me at 9 to shovel the path, otherwise remind me at 9 to wash the car")
    guard case .waitingForConfirmation(let action) = branches else {
      Issue.record("expected one confirmation, got \(branches)")
      return
    }
    #expect(action.confirmationText.contains("(only if it snows on Sunday"), "\(action.confirmationText)")
    #expect(action.confirmationText.contains("(unless it snows on Sunday"), "\(action.confirmationText)")
    #expect(await agent.cancel())
    let unless = try await agent.send("remind me at 7 on Sunday to go cycling unless it snows that day")
    guard case .waitingForConfirmation(let single) = unless else {
      Issue.record("expected one confirmation, got \(unless)")
      return
    }
    #expect(single.confirmationText.contains("(unless it snows that day"), "\(single.confirmationText)")
    #expect(!single.confirmationText.contains("only if"), "\(single.confirmationText)")
  }
}
