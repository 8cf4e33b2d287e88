import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramAgent

/// A language model answering from a script and recording what it was sent.
final class ScriptedModel: LanguageModel {
  private let state: Mutex<(replies: [String], calls: [[ChatMessage]])>

  init(_ replies: [String]) { state = Mutex((replies, [])) }

  var calls: [[ChatMessage]] { state.withLock { $0.calls } }

  func complete(messages: [ChatMessage]) async throws -> String {
    state.withLock { state in
      state.calls.append(messages)
      return state.replies.isEmpty ? "" : state.replies.removeFirst()
    }
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct PlannerTests {
  func registry() throws -> SkillRegistry {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    return registry
  }

  @Test func sendsCatalogAndContextThenParses() async throws {
    let model = ScriptedModel([#"{"skill": "time.now", "arguments": {}}"#])
    let planner = Planner(model: model, registry: try registry())
    let result = try await planner.plan(
      request: "what's up with the clock", context: "<memory id=1>x</memory>")
    #expect(result.action == .skill(PlanStep(skill: "time.now")))
    #expect(result.attempts == 1)
    let messages = try #require(model.calls.first)
    #expect(messages.count == 2)
    #expect(messages[0].role == .system)
    #expect(messages[0].content.contains("- reminder.create (Create reminder)"))
    #expect(messages[1].content == "<memory id=1>x</memory>\n\nRequest: what's up with the clock")
  }

  @Test func retriesOnceWithTheParseError() async throws {
    let model = ScriptedModel(["Sure, I can help!", #"{"final": "Hello"}"#])
    let result = try await Planner(model: model, registry: try registry()).plan(request: "hi", context: "")
    #expect(result.action == .final("Hello"))
    #expect(result.attempts == 2)
    let retry = try #require(model.calls.last)
    #expect(retry.count == 4)
    #expect(retry[2] == .assistant("Sure, I can help!"))
    #expect(retry[3].content.contains("noJSONObject"))
  }

  @Test func twoBadRepliesAreATypedError() async throws {
    let model = ScriptedModel([#"{"skill": "weather.get"}"#, #"{"skill": "weather.get"}"#])
    await #expect(
      throws: PlannerError.malformedReply(
        reply: #"{"skill": "weather.get"}"#, error: .unknownSkill("weather.get"))
    ) {
      try await Planner(model: model, registry: try registry()).plan(request: "weather?", context: "")
    }
    #expect(model.calls.count == 2)
  }

  @Test func disabledSkillsAreNotOffered() async throws {
    let registry = try registry()
    try await registry.setEnabled(false, id: "calculator")
    let model = ScriptedModel([
      #"{"skill": "calculator", "arguments": {"expression": "1+1"}}"#, #"{"final": "2"}"#,
    ])
    let result = try await Planner(model: model, registry: registry).plan(request: "1+1", context: "")
    #expect(result.action == .final("2"))
    #expect(!(model.calls.first?[0].content.contains("- calculator") ?? true))
  }

  @Test func endToEndOverHTTP() async throws {
    let server = try StubHTTPServer(responses: [
      .init(
        status: 200, body: StubHTTPServer.completion("```json\n{\"plan\": [{\"skill\": \"time.now\"}]}\n```"))
    ])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    let result = try await Planner(model: client, registry: try registry()).plan(request: "time", context: "")
    #expect(result.action == .plan([PlanStep(skill: "time.now")]))
    #expect(server.requests.count == 1)
  }

  /// The planner's request asks the server to keep its reply to the action schema: one of the
  /// three forms, each skill call with the skill's own parameters and nothing else.
  @Test func theReplyIsAskedToKeepToTheActionSchema() async throws {
    let server = try StubHTTPServer(responses: [
      .init(status: 200, body: StubHTTPServer.completion(#"{"final": "hello"}"#))
    ])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    let registry = try registry()
    try await registry.setEnabled(false, id: "calculator")
    let result = try await Planner(model: client, registry: registry).plan(request: "hi", context: "")
    #expect(result.action == .final("hello"))
    let json = try #require(try JSONSerialization.jsonObject(with: server.requests[0].body) as? [String: Any])
    let format = try #require(json["response_format"] as? [String: Any])
    #expect(format["type"] as? String == "json_schema")
    let schema = try #require((format["json_schema"] as? [String: Any])?["schema"] as? [String: Any])
    let forms = try #require(schema["anyOf"] as? [[String: Any]])
    let skills = forms.compactMap { form in
      ((form["properties"] as? [String: Any])?["skill"] as? [String: Any])?["const"] as? String
    }
    #expect(Set(skills) == Set(registry.skills().map(\.id)), "every enabled skill, once")
    #expect(!skills.contains("calculator"), "a disabled skill is not offered")
    #expect(forms.contains { ($0["required"] as? [String]) == ["final"] })
    #expect(forms.contains { ($0["required"] as? [String]) == ["plan"] })
    let reminder = try #require(
      forms.first {
        ((($0["properties"] as? [String: Any])?["skill"] as? [String: Any])?["const"] as? String)
          == "reminder.create"
      })
    let arguments = try #require((reminder["properties"] as? [String: Any])?["arguments"] as? [String: Any])
    #expect(arguments["additionalProperties"] as? Bool == false, "no invented argument")
    let skill = try #require(registry.skill(id: "reminder.create"))
    let required = skill.inputSchema.parameters.filter { $0.isRequired && !$0.isInternal }.map(\.name)
    #expect(Set(arguments["required"] as? [String] ?? []) == Set(required))
    #expect(!required.isEmpty)
  }

  /// A server that refuses `response_format` (HTTP 400) is asked again without it, and the
  /// client sends none from then on; the reply is parsed as any other.
  @Test func aServerThatRefusesTheFormatIsAskedAgainWithout() async throws {
    let server = try StubHTTPServer(responses: [
      .init(status: 400, body: #"{"error": {"message": "response_format is not supported"}}"#),
      .init(status: 200, body: StubHTTPServer.completion(#"{"skill": "time.now", "arguments": {}}"#)),
      .init(status: 200, body: StubHTTPServer.completion(#"{"final": "ok"}"#)),
    ])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    let planner = Planner(model: client, registry: try registry())
    let first = try await planner.plan(request: "time", context: "")
    #expect(first.action == .skill(PlanStep(skill: "time.now")))
    #expect(first.attempts == 1, "the refusal is not a malformed reply")
    let second = try await planner.plan(request: "hi", context: "")
    #expect(second.action == .final("ok"))
    let formats = try server.requests.map { request in
      try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])["response_format"]
        != nil
    }
    #expect(formats == [true, false, false])
  }
}
