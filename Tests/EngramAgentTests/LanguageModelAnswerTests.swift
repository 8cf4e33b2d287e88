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
    let agent = try await harness.agent(
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

  /// The agent over `model`'s streamed reply `answer` (nil: a server that is not there), and
  /// its state after asking `question` with `memory` remembered.
  private func ask(
    _ question: String, remembering memory: String, modelSays answer: String?
  ) async throws -> (state: AgentState, id: Int64, harness: AgentHarness) {
    let harness = try AgentHarness()
    let id = try await harness.engine.memories.remember(memory, kind: .fact)
    var server: StubHTTPServer?
    var baseURL = URL(string: "http://127.0.0.1:1")!
    if let answer {
      let deltas = stride(from: 0, to: answer.count, by: 5).map { String(answer.dropFirst($0).prefix(5)) }
      let stub = try StubHTTPServer(responses: [
        .streamed(
          parts: ChatCompletionStream.pieces(ChatCompletionStream.body(deltas), size: 11), pauseSeconds: 0)
      ])
      server = stub
      baseURL = stub.baseURL
    }
    defer { server?.stop() }
    let client = try OpenAIChatClient(configuration: .init(baseURL: baseURL, model: "m"), environment: [:])
    let agent = try await harness.agent(
      router: SkillRouter(registry: harness.registry),
      planner: Planner(model: client, registry: harness.registry))
    return (try await agent.send(question), id, harness)
  }

  @Test func aModelReplyWithoutTheRetrievedFactKeepsTheFact() async throws {
    let (state, id, _) = try await ask(
      "what is my locker code?", remembering: "my locker code is 4512",
      modelSays: "Your locker code is 1234.")
    guard case .finished(let reply) = state else {
      Issue.record("expected a reply, got \(state)")
      return
    }
    // The model's text first (it was shown as it streamed), then memory's answer.
    #expect(reply.text.hasPrefix("Your locker code is 1234."))
    #expect(reply.text.contains("From your memories: my locker code is 4512"))
    guard case .memories(_, let hits)? = reply.outputs.first else {
      Issue.record("expected the memories, got \(reply.outputs)")
      return
    }
    #expect(hits.map(\.id) == [id])
    #expect(reply.notice == nil)
  }

  @Test func aModelReplyCarryingTheFactIsLeftAsItIs() async throws {
    let (state, _, _) = try await ask(
      "what is my locker code?", remembering: "my locker code is 4512",
      modelSays: "Your locker code is 4512.")
    guard case .finished(let reply) = state else {
      Issue.record("expected a reply, got \(state)")
      return
    }
    #expect(reply.text == "Your locker code is 4512.")
  }

  @Test func anUnreachableModelLeavesTheAnswerFromMemoryWithANotice() async throws {
    let (state, _, harness) = try await ask(
      "what is my locker code?", remembering: "my locker code is 4512", modelSays: nil)
    guard case .finished(let reply) = state else {
      Issue.record("expected memory's answer, got \(state)")
      return
    }
    #expect(reply.text.contains("my locker code is 4512"))
    #expect(reply.route == .memory)
    let notice = try #require(reply.notice)
    #expect(notice.hasPrefix("I couldn't reach the language model"))
    #expect(!notice.contains("\n"))
    // Nothing was written: the one memory is still the only one.
    #expect(try await harness.engine.memories.list(limit: 10).count == 1)
  }

  @Test(arguments: [
    ("Your code is 4512.", true),
    ("The code is 4521.", false),
    ("I do not know.", false),
  ])
  func aReplyCarriesTheFactWhenItHoldsItsNumbers(reply: String, carries: Bool) {
    let item = testHit(id: 1, text: "my locker code is 4512", kind: .memory)
    #expect(MemoryAnswer().carries(reply, answerOf: item, question: "what is my locker code?") == carries)
  }

  @Test func aReplyCarriesAFactOfWordsWhenItHoldsHalfOfThem() {
    let item = testHit(id: 1, text: "The spare key is under the blue flowerpot", kind: .memory)
    let answerer = MemoryAnswer()
    #expect(answerer.carries("Under the flowerpot.", answerOf: item, question: "where is the spare key?"))
    #expect(!answerer.carries("In the drawer.", answerOf: item, question: "where is the spare key?"))
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
