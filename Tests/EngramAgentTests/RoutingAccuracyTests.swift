import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// Rules-only accuracy on the labelled phrase set; the lead measures rules + MiniLM in the benchmark.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RoutingAccuracyTests {
  struct Phrase: Decodable {
    var text: String
    var skill: String
    var held_out: Bool
    var lang: String
  }

  struct Fixture: Decodable { var phrases: [Phrase] }

  static func load() throws -> [Phrase] {
    let url = try #require(
      Bundle.module.url(forResource: "routing-phrases", withExtension: "json", subdirectory: "Fixtures"))
    return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url)).phrases
  }

  @Test func fixtureIsWellFormed() throws {
    let phrases = try Self.load()
    let ids = Set(BuiltInSkills.all().map(\.id))
    #expect(phrases.count >= 150)
    #expect(phrases.filter(\.held_out).count * 2 >= phrases.count)
    #expect(Set(phrases.map(\.skill)) == ids)
    #expect(Set(phrases.map(\.lang)) == ["en", "zh"])
  }

  /// The full router (high-precision rules, then the intent model) on the older phrase set,
  /// which the intent model was not trained on: a regression floor, not a tuning target.
  @Test func routerAccuracyOnTheOlderPhraseSet() async throws {
    let phrases = try Self.load()
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let router = SkillRouter(registry: registry)
    let clock = AgentClock.fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai)
    var correct = 0
    var misses: [String] = []
    for phrase in phrases {
      let routed = try await router.route(phrase.text, clock: clock)?.skillID
      if routed == phrase.skill {
        correct += 1
      } else {
        misses.append("\(phrase.text) -> \(routed ?? "none") (want \(phrase.skill))")
      }
    }
    let accuracy = Double(correct) / Double(phrases.count)
    let report = "\(correct)/\(phrases.count); misses:\n" + misses.joined(separator: "\n")
    #expect(accuracy >= 0.85, Comment(rawValue: report))
  }
}
