import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// Every error a person can be shown by the agent reads as a sentence: no Swift type or case
/// text (`unexpectedCharacter(`, `position:`, `Optional(`), in English or Chinese.
@Suite("Error sentences", .timeLimit(.minutes(5)), .watchdog) struct ErrorSentenceTests {
  static let languages: [MessageLanguage] = [.english, .chinese]

  static func expectSentence(_ text: String, _ comment: String) {
    #expect(SwiftInternals.find(in: text).isEmpty, "\(comment): \(text)")
    #expect(!text.isEmpty, "\(comment)")
  }

  /// Every case of every error the agent renders, through `FriendlyMessage`.
  @Test func everyAgentErrorCaseIsASentence() {
    let reasons: [InvalidArgumentReason] = [
      .expectedType(.number, value: "abc"), .empty, .notFinite, .unknownParameter,
      .other("it is not a number"),
    ]
    var errors: [any Error] = [
      SkillError.missingArgument(name: "expression"), SkillError.permissionDenied(skill: "note.create"),
      SkillError.timeout(skill: "calculator", after: .seconds(5)),
      SkillError.executionFailed(skill: "calculator", reason: "boom"),
      SkillError.confirmationCancelled(skill: "reminder.create"), SkillError.divisionByZero,
      SkillError.unreadableDate(name: "when", text: "the 32nd"),
      SkillError.unreadableDate(name: "day", text: "the 32nd"),
      SkillRegistryError.duplicateID("x"), SkillRegistryError.unknownSkill("x"),
      SkillRegistryError.skillDisabled("x"), SkillRegistryError.invalidID("x"),
      LanguageModelError.insecureEndpoint(host: "example.com"), LanguageModelError.invalidBaseURL("::"),
      LanguageModelError.emptyModelName, LanguageModelError.timedOut(seconds: 3),
      LanguageModelError.transport(reason: "refused"), LanguageModelError.httpStatus(code: 500, body: "x"),
      LanguageModelError.malformedResponse(reason: "x"), LanguageModelError.serverError(message: "x"),
      LanguageModelError.incompleteStream(received: "x"),
      RouterError.embeddingCountMismatch(expected: 1, got: 2), RouterError.invalidEmbedding(index: 0),
      CocoaError(.fileReadNoSuchFile),
      WeatherError.invalidBaseURL("::"), WeatherError.insecureEndpoint(host: "example.com"),
      WeatherError.timedOut(seconds: 5), WeatherError.unreachable(reason: "refused"),
      WeatherError.httpStatus(code: 500), WeatherError.malformedResponse(reason: "x"),
    ]
    for name in ["expression", "when", "title", "zone", "id", "city", "day", "place"] {
      errors += reasons.map { SkillError.invalidArgument(name: name, reason: $0) }
    }
    for error in errors {
      for language in Self.languages {
        Self.expectSentence(FriendlyMessage.text(for: error, language: language), "\(error)")
      }
    }
  }

  /// The calculator's failures reach the person as sentences that say what was wrong.
  @Test(arguments: [
    "square foo of 81", "5 +", "(1 + 2", "1 + 2)", "* 3", "2 ^ ^ 3", "百分之", "1e5 + 2", "3 $$ 4",
    String(repeating: "(", count: 80) + "1", String(repeating: "1+", count: 600) + "1",
  ])
  func calculatorFailuresAreSentences(_ expression: String) throws {
    let skill = CalculatorSkill()
    do {
      let value = try skill.evaluate(["expression": .string(expression)])
      Issue.record("\(expression) evaluated to \(value)")
    } catch {
      for language in Self.languages {
        let text = FriendlyMessage.text(for: error, language: language)
        Self.expectSentence(text, expression)
        #expect(text.hasSuffix(".") || text.hasSuffix("。"), "\(text)")
      }
    }
  }

  /// Each built-in skill, run with no arguments and with nonsense in each of its arguments,
  /// either answers or fails with an error whose message is a sentence.
  @Test func everySkillsErrorPathsAreSentences() async throws {
    let memory = try TestMemory()
    let registry = SkillRegistry()
    // The weather service is a closed loopback port: its failures are checked, the network is not touched.
    let port = try LoopbackHTTPServer.closedPort()
    let weather = OpenMeteoWeatherService(
      configuration: .init(
        forecastBaseURL: "http://127.0.0.1:\(port)", geocodingBaseURL: "http://127.0.0.1:\(port)"))
    try BuiltInSkills.register(in: registry, weather: weather)
    let nonsense: [SkillValue] = [
      .string(""), .string("zzz qqq"), .string("square foo of 81"), .string("💥"), .int(-1),
      .number(.nan), .bool(true), .string(String(repeating: "9", count: 400)),
    ]
    var failures = 0
    for skill in registry.allSkills {
      var attempts: [SkillArguments] = [SkillArguments()]
      for parameter in skill.inputSchema.parameters {
        for value in nonsense {
          var arguments = SkillArguments()
          arguments[parameter.name] = value
          attempts.append(arguments)
        }
      }
      for arguments in attempts {
        do {
          let validated = try ArgumentValidator.validate(
            arguments, against: skill.inputSchema, timeZone: testClock.timeZone)
          // What a skill says before confirmation (nothing matches, which one?) is a sentence too.
          switch try await skill.prepare(
            arguments: validated, context: context("test", memory: memory, clock: testClock))
          {
          case .reply(let output): Self.expectSentence(output.text, "\(skill.id) prepared \(arguments)")
          case .ask(_, let question, _): Self.expectSentence(question, "\(skill.id) asked with \(arguments)")
          case .ready: break
          }
          _ = try await skill.execute(
            arguments: validated, context: context("test", memory: memory, clock: testClock))
        } catch {
          failures += 1
          for language in Self.languages {
            Self.expectSentence(
              FriendlyMessage.text(for: error, language: language), "\(skill.id) with \(arguments)")
          }
        }
      }
    }
    #expect(failures > 10)
  }
}
