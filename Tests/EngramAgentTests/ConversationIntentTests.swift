import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// Small talk and retraction are labels the intent model learns from the corpus: the router
/// decides them as no skill, and the agent's turn plan answers them in kind.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ConversationIntentTests {
  let clock = AgentClock.fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai)

  func router() throws -> SkillRouter {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    return SkillRouter(registry: registry)
  }

  @Test(arguments: [
    ("hello!", ConversationIntent.greeting), ("早上好呀", .greeting), ("thanks a lot", .thanks), ("谢谢你", .thanks),
    ("see you tomorrow", .goodbye), ("晚安", .goodbye), ("ok", .acknowledgement), ("好的", .acknowledgement),
    ("never mind", .cancellation), ("算了", .cancellation),
  ])
  func theRouterDecidesNoSkillAndSaysWhichKind(_ text: String, _ expected: ConversationIntent) async throws {
    let decision = try #require(try await router().route(text, clock: clock))
    #expect(decision.skillID == nil, "\(text)")
    #expect(decision.method == .intent)
    #expect(decision.conversation == expected, "\(text): \(String(describing: decision.conversation))")
  }

  /// A request that goes on after the thanks is the request, not small talk.
  @Test func aRequestAfterTheThanksIsTheRequest() async throws {
    let decision = try #require(
      try await router().route("thanks, and remind me to call mom tomorrow at 6pm", clock: clock))
    #expect(decision.skillID == "reminder.create")
    #expect(decision.conversation == nil)
  }

  @Test(arguments: ["cancel", "never mind", "算了", "取消"])
  func retractionWithAndWithoutAModel(_ text: String) throws {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    #expect(SkillRouter(registry: registry).isRetraction(text))
    // Without a model, the plainest retractions still drop a question.
    #expect(SkillRouter(registry: registry, classifier: nil).isRetraction(text))
  }

  /// Beyond the plain words, the model recognises a retraction.
  @Test(arguments: ["ah no, never mind", "nah, forget it", "算了算了，不用了", "还是算了吧"])
  func theModelRecognisesOtherRetractions(_ text: String) throws {
    #expect(!ConversationIntent.isPlainRetraction(text))
    #expect(try router().isRetraction(text))
  }

  @Test(arguments: ["tomorrow at 9", "call mom", "明天上午九点", "给妈妈打电话"])
  func anAnswerIsNotARetraction(_ text: String) throws {
    #expect(try !router().isRetraction(text))
  }

  @MainActor @Test func theAgentAnswersSmallTalkInKindAndTouchesNothing() async throws {
    let harness = try AgentHarness()
    let agent = try await harness.agent()
    for (line, expected) in [
      ("thanks a lot", "You're welcome!"), ("谢谢你", "不客气！"), ("see you tomorrow", "Goodbye!"),
      ("好的", "好的。"),
    ] {
      guard case .finished(let reply) = try await agent.send(line) else {
        Issue.record("expected finished for \(line)")
        return
      }
      #expect(reply.text == expected, "\(line)")
      #expect(reply.route == .intent)
    }
    #expect(try await harness.engine.agentRecords.pendingCalls(status: .pending).isEmpty)
    #expect(try await harness.engine.agentRecords.items().isEmpty)
    #expect(try await harness.engine.memories.list().isEmpty)
  }

  @Test func thePlanSummaryNamesTheLabel() {
    #expect(TurnPlan.converse(.thanks).summary(source: .intent) == "intent: smalltalk.thanks")
  }
}
