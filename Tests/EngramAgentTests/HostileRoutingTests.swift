import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// Issue 37, finding 6: a request the intent model barely understands is not routed to a
/// skill that deletes; the language model, when there is one, is asked instead.
@Suite(.timeLimit(.minutes(5)), .watchdog) @MainActor struct HostileRoutingTests {
  static let nonsense = "blorp the frobnicator about my locker code"

  @Test func aCoinTossIsNotEnoughToDelete() async throws {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let router = SkillRouter(registry: registry)
    let decision = try await router.route(Self.nonsense, clock: testClock)
    // The model leans towards forgetting, but far from clearly.
    let prediction = try #require(router.intent(of: Self.nonsense))
    #expect(prediction.label == "memory.forget")
    #expect(decision?.skillID != "memory.forget", "routed to delete at \(decision?.score ?? 0)")
    #expect(decision?.isConfident == false)
  }

  @Test func theLanguageModelIsAskedInsteadOfDeleting() async throws {
    let harness = try AgentHarness()
    try await harness.engine.memories.remember("The locker code is 4711", kind: .fact)
    let planner = Planner(
      model: FixedReplyModel(reply: #"{"final": "I am not sure what you mean."}"#), registry: harness.registry
    )
    let agent = try await harness.agent(router: SkillRouter(registry: harness.registry), planner: planner)
    let state = try await agent.send(Self.nonsense)
    guard case .finished(let reply) = state else {
      Issue.record("expected an answer, got \(state)")
      return
    }
    #expect(reply.route == .planner)
    #expect(reply.text == "I am not sure what you mean.")
    #expect(try await harness.engine.memories.list().count == 1)
  }

  @Test func aClearRequestToForgetStillAsksForConfirmation() async throws {
    let harness = try AgentHarness()
    try await harness.engine.memories.remember("The locker code is 4711", kind: .fact)
    let planner = Planner(
      model: FixedReplyModel(reply: #"{"final": "The model was asked."}"#), registry: harness.registry)
    let agent = try await harness.agent(router: SkillRouter(registry: harness.registry), planner: planner)
    let state = try await agent.send("forget my locker code")
    guard case .waitingForConfirmation(let action) = state else {
      Issue.record("expected a confirmation, got \(state)")
      return
    }
    #expect(action.skillID == "memory.forget")
  }
}
