import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct LanguageModelTests {
  @Test func postsChatCompletionAndReadsReply() async throws {
    let server = try StubHTTPServer(responses: [.init(status: 200, body: StubHTTPServer.completion("hello"))])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: LanguageModelConfiguration(
        baseURL: server.baseURL, model: "qwen2.5:3b", apiKeyEnvironmentVariable: "KEY"),
      environment: ["KEY": "secret"])
    let reply = try await client.complete(messages: [.system("be brief"), .user("hi")])
    #expect(reply == "hello")
    let request = try #require(server.requests.first)
    #expect(request.requestLine == "POST /v1/chat/completions HTTP/1.1")
    #expect(request.headers["authorization"] == "Bearer secret")
    let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
    #expect(body["model"] as? String == "qwen2.5:3b")
    #expect(body["stream"] as? Bool == false)
    let messages = try #require(body["messages"] as? [[String: String]])
    #expect(messages == [["role": "system", "content": "be brief"], ["role": "user", "content": "hi"]])
  }

  @Test func noKeyMeansNoAuthorizationHeader() async throws {
    let server = try StubHTTPServer(responses: [.init(status: 200, body: StubHTTPServer.completion("ok"))])
    defer { server.stop() }
    let base = URL(string: "http://localhost:\(server.port)/v1/")!
    let client = try OpenAIChatClient(configuration: .init(baseURL: base, model: "m"), environment: [:])
    #expect(try await client.complete(messages: [.user("x")]) == "ok")
    #expect(server.requests.first?.headers["authorization"] == nil)
    #expect(server.requests.first?.requestLine == "POST /v1/chat/completions HTTP/1.1")
  }

  @Test func httpErrorsAndMalformedBodiesAreTyped() async throws {
    let server = try StubHTTPServer(responses: [
      .init(status: 503, body: "{\"error\":\"loading\"}"), .init(status: 200, body: "{\"choices\": []}"),
      .init(status: 200, body: "not json"),
    ])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    await #expect(throws: LanguageModelError.httpStatus(code: 503, body: "{\"error\":\"loading\"}")) {
      try await client.complete(messages: [.user("x")])
    }
    await #expect(throws: LanguageModelError.malformedResponse(reason: "no choices[0].message.content")) {
      try await client.complete(messages: [.user("x")])
    }
    do {
      _ = try await client.complete(messages: [.user("x")])
      Issue.record("expected an error")
    } catch let error as LanguageModelError {
      guard case .malformedResponse = error else { Issue.record("wrong error \(error)"); return }
    }
  }

  @Test func slowServerTimesOut() async throws {
    let server = try StubHTTPServer(responses: [
      .init(status: 200, body: StubHTTPServer.completion("late"), delaySeconds: 1.5)
    ])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m", timeout: .milliseconds(300)), environment: [:]
    )
    await #expect(throws: LanguageModelError.timedOut(seconds: 0.3)) {
      try await client.complete(messages: [.user("x")])
    }
  }

  @Test func refusesPlainHTTPToRemoteHosts() throws {
    let remote = URL(string: "http://example.com:8080")!
    #expect(throws: LanguageModelError.insecureEndpoint(host: "example.com")) {
      try OpenAIChatClient(configuration: .init(baseURL: remote, model: "m"), environment: [:])
    }
    let allowed = try OpenAIChatClient(
      configuration: .init(baseURL: remote, model: "m", allowInsecureRemote: true), environment: [:])
    #expect(allowed.configuration.allowInsecureRemote)
    _ = try OpenAIChatClient(
      configuration: .init(baseURL: URL(string: "https://api.example.com")!, model: "m"), environment: [:])
    #expect(throws: LanguageModelError.invalidBaseURL("ftp://127.0.0.1")) {
      try OpenAIChatClient(
        configuration: .init(baseURL: URL(string: "ftp://127.0.0.1")!, model: "m"), environment: [:])
    }
    #expect(throws: LanguageModelError.emptyModelName) {
      try OpenAIChatClient(configuration: .init(model: " "), environment: [:])
    }
  }

  @Test func loopbackDetection() {
    #expect(LanguageModelConfiguration.isLoopback("127.0.0.1"))
    #expect(LanguageModelConfiguration.isLoopback("127.1.2.3"))
    #expect(LanguageModelConfiguration.isLoopback("localhost"))
    #expect(LanguageModelConfiguration.isLoopback("[::1]"))
    #expect(!LanguageModelConfiguration.isLoopback("127.0.0.1.evil.com"))
    #expect(!LanguageModelConfiguration.isLoopback("10.0.0.1"))
    #expect(!LanguageModelConfiguration.isLoopback("localhost.com"))
  }
}
