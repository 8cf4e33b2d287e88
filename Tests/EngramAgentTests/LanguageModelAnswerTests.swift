import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// With a language model, a question for memory is answered by the model from the retrieved
/// memories in one or two sentences citing their ids; a citation of anything not retrieved
/// is taken out.
@MainActor
@Suite(.timeLimit(.minutes(5)), .watchdog) struct LanguageModelAnswerTests {
  @Test func theModelComposesTheAnswerCitingRetrievedIds() async throws {
    let harness = try AgentHarness()
    let id = try await harness.engine.memories.remember(
      "The spare key is under the blue flowerpot", kind: .fact)
    let answer = "It is under the blue flowerpot [memory #\(id)] [memory #99999]."
    let deltas = stride(from: 0, to: answer.count, by: 7).map {
      String(answer.dropFirst($0).prefix(7))
    }
    let server = try StubHTTPServer(responses: [
      .streamed(
        parts: ChatCompletionStream.pieces(ChatCompletionStream.body(deltas), size: 19), pauseSeconds: 0)
    ])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    let agent = try harness.agent(
      router: SkillRouter(registry: harness.registry),
      planner: Planner(model: client, registry: harness.registry))
    let state = try await agent.send("where is the spare key?")
    guard case .finished(let reply) = state else {
      Issue.record("expected a reply, got \(state)")
      return
    }
    #expect(reply.text == "It is under the blue flowerpot [memory #\(id)].")
    guard case .memories(_, let hits)? = reply.outputs.first else {
      Issue.record("expected the cited memories, got \(reply.outputs)")
      return
    }
    #expect(hits.map(\.id) == [id])
    // The model was asked to answer from the memories, which it received with their ids.
    let request = try #require(server.requests.first)
    let body = String(decoding: request.body, as: UTF8.self)
    #expect(body.contains("one or two"))
    #expect(body.contains("[memory #\(id)"))
    #expect(body.contains("Question: where is the spare key?"))
  }

  @Test func citationsOfItemsNotRetrievedAreTakenOut() {
    let kept = testHit(id: 4, text: "a", kind: .message)
    let checked = AnswerCitations.check(
      "Yes [message #4], twice [message #4] [memory #4] [summary #7].", memories: [kept])
    #expect(checked.text == "Yes [message #4], twice [message #4].")
    #expect(checked.cited == [kept])
    #expect(AnswerCitations.check("no ids", memories: []).text == "no ids")
  }
}
