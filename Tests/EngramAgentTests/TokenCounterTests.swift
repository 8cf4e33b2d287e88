import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// The prompt context's tokens counted by the language model's server (llama.cpp's
/// `/tokenize`), the context trimmed to the budget in those tokens, and the estimate when the
/// server cannot count.
@MainActor
@Suite(.timeLimit(.minutes(5)), .watchdog) struct TokenCounterTests {
  private static func tokens(_ count: Int) -> StubHTTPServer.Response {
    StubHTTPServer.Response(
      status: 200, body: "{\"tokens\": [\((0..<count).map(String.init).joined(separator: ","))]}")
  }

  private static func streamedAnswer(_ text: String) -> StubHTTPServer.Response {
    .streamed(
      parts: ChatCompletionStream.pieces(ChatCompletionStream.body([text]), size: 64), pauseSeconds: 0)
  }

  /// An agent over `client` that counts the context's tokens with it (`engram chat --show-context`).
  private static func countingAgent(_ harness: AgentHarness, client: OpenAIChatClient) async throws -> Agent {
    var configuration = AgentConfiguration(clock: testClock)
    configuration.countsTokensWithModel = true
    return try await Agent(
      engine: harness.engine, registry: harness.registry, router: SkillRouter(registry: harness.registry),
      planner: Planner(model: client, registry: harness.registry), configuration: configuration)
  }

  @Test func theClientCountsWithTheServersTokenizeEndpoint() async throws {
    let server = try StubHTTPServer(responses: [Self.tokens(4)])
    defer { server.stop() }
    // A base URL naming the API version still finds /tokenize at the server's root.
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL.appendingPathComponent("v1"), model: "m"), environment: [:]
    )
    #expect(try await client.countTokens("my locker code") == 4)
    let request = try #require(server.requests.first)
    #expect(request.path == "/tokenize")
    let body = try JSONSerialization.jsonObject(with: request.body) as? [String: Any]
    #expect(body?["content"] as? String == "my locker code")
  }

  @Test func aServerWithoutTokenizeIsAnHTTPStatusError() async throws {
    let server = try StubHTTPServer(responses: [.init(status: 404, body: "{\"error\": \"not found\"}")])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    await #expect(throws: LanguageModelError.httpStatus(code: 404, body: "{\"error\": \"not found\"}")) {
      _ = try await client.countTokens("x")
    }
  }

  @Test func theAgentTrimsTheContextToTheServersCount() async throws {
    let harness = try AgentHarness()
    _ = try await harness.engine.memories.remember("my locker code is 4512", kind: .fact)
    _ = try await harness.engine.memories.remember("my locker is on the second floor", kind: .fact)
    // First count: far over any budget; after one item is taken out: 7.
    let server = try StubHTTPServer(responses: [
      Self.tokens(100_000), Self.tokens(7), Self.streamedAnswer("Your locker code is 4512."),
    ])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    let agent = try await Self.countingAgent(harness, client: client)
    let state = try await agent.send("what is my locker code?")
    guard case .finished = state else {
      Issue.record("expected a reply, got \(state)")
      return
    }
    #expect(agent.lastContextTokens == ContextTokenCount(tokens: 7, source: .server))
    #expect(agent.contextsBuilt == 1)
    let context = try #require(agent.lastContext)
    #expect(context.omitted >= 1)
    #expect(server.requests.prefix(2).allSatisfy { $0.path == "/tokenize" })
    // The second count was of the trimmed context, which the model then received.
    let counted = try JSONSerialization.jsonObject(with: server.requests[1].body) as? [String: Any]
    #expect(counted?["content"] as? String == context.rendered)
    #expect(
      String(decoding: server.requests[2].body, as: UTF8.self).contains("Question: what is my locker code?"))
  }

  @Test func withoutTokenizeTheEstimateServesAndTheTurnGoesOn() async throws {
    let harness = try AgentHarness()
    _ = try await harness.engine.memories.remember("my locker code is 4512", kind: .fact)
    let server = try StubHTTPServer(responses: [
      .init(status: 404, body: "{}"), Self.streamedAnswer("Your locker code is 4512."),
    ])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    let agent = try await Self.countingAgent(harness, client: client)
    let state = try await agent.send("what is my locker code?")
    guard case .finished(let reply) = state else {
      Issue.record("expected a reply, got \(state)")
      return
    }
    #expect(reply.text == "Your locker code is 4512.")
    let context = try #require(agent.lastContext)
    #expect(agent.lastContextTokens == ContextTokenCount(tokens: context.tokenCount, source: .estimate))
    #expect(agent.tokenizerFailed)
  }
}
