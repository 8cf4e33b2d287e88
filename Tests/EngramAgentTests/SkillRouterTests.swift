import EngramCore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramAgent

/// A test skill with configurable rules.
struct StubSkill: PhraseRuledSkill {
  var id: String
  var phrases: [String] = []
  var accepts: @Sendable (String) -> Bool = { _ in true }
  var extracted: SkillArguments = [:]
  var summary = "stub"
  var readOnly = false
  var retries = 0
  var limit: Duration = .seconds(5)
  var body: @Sendable (Int) async throws -> SkillOutput = { _ in .text("ok") }
  let attempts = Counter()

  var displayName: String { id }
  var description: String { summary }
  var samplePhrases: [String] { phrases }
  var inputSchema: SkillInputSchema { .empty }
  var hasSideEffects: Bool { !readOnly }
  var retryCount: Int { retries }
  var timeout: Duration { limit }
  func canHandle(_ text: String) -> Bool { accepts(text) }
  func extractArguments(from text: String, clock: AgentClock) -> SkillArguments { extracted }
  func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    try await body(attempts.increment())
  }
}

final class Counter: Sendable {
  private let value = Mutex(0)
  func increment() -> Int {
    value.withLock {
      $0 += 1; return $0
    }
  }
  var count: Int { value.withLock { $0 } }
}

/// Embeds text as counts of a few keywords: enough to make similarity predictable.
struct KeywordEmbedding: PhraseEmbedding {
  var keywords = ["coffee", "tea", "weather", "music"]
  func embed(_ texts: [String]) async throws -> [[Float]] {
    texts.map { text in
      keywords.map { Float(text.lowercased().components(separatedBy: $0).count - 1) } + [0.01]
    }
  }
}

struct BrokenEmbedding: PhraseEmbedding {
  var vectors: [[Float]]
  func embed(_ texts: [String]) async throws -> [[Float]] { vectors }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct SkillRouterTests {
  let clock = AgentClock.fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai)

  @Test func tokenizerSplitsEnglishWordsAndChineseBigrams() {
    #expect(Tokenizer.routing.terms("Remind me, OK?") == ["remind", "me", "ok"])
    #expect(Tokenizer.routing.terms("提醒我开会") == ["提醒", "醒我", "我开", "开会"])
    #expect(Tokenizer.routing.terms("加 A1") == ["加", "a1"])
    #expect(Tokenizer.routing.terms("don't") == ["dont"])
    #expect(Tokenizer.routing.phrase("提醒我", matches: Set(Tokenizer.routing.terms("明天提醒我开会"))))
    #expect(!Tokenizer.routing.phrase("提醒我", matches: Set(Tokenizer.routing.terms("我提醒"))))
    #expect(!Tokenizer.routing.phrase("", matches: ["a"]))
  }

  @Test func scoresPhrasesAndArguments() throws {
    let registry = SkillRegistry()
    try registry.register(StubSkill(id: "a", phrases: ["play music"]))
    try registry.register(StubSkill(id: "b", phrases: ["play", "music"], extracted: ["x": .int(1)]))
    try registry.register(StubSkill(id: "c", phrases: ["play"], accepts: { _ in false }))
    let candidates = SkillRouter(registry: registry).ruleCandidates(for: "Play some music", clock: clock)
    #expect(candidates.map(\.skillID) == ["b", "a"])
    #expect(candidates.map(\.score) == [5, 2])
  }

  @Test func tiesBreakByRegistrationOrder() throws {
    let registry = SkillRegistry()
    try registry.register(StubSkill(id: "z", phrases: ["hello"]))
    try registry.register(StubSkill(id: "a", phrases: ["hello"]))
    let decision = try #require(SkillRouter(registry: registry).routeByRules("hello", clock: clock))
    #expect(decision.skillID == "z")
    #expect(decision.method == .tieBreak)
  }

  @Test func semanticStageResolvesTiesAndMisses() async throws {
    let registry = SkillRegistry()
    try registry.register(StubSkill(id: "drinks.tea", phrases: ["order"], summary: "orders tea"))
    try registry.register(StubSkill(id: "drinks.coffee", phrases: ["order"], summary: "orders coffee"))
    try registry.register(
      StubSkill(
        id: "weather", phrases: ["weather forecast"], accepts: { _ in false }, summary: "tells the weather"))
    let router = SkillRouter(
      registry: registry, embedding: KeywordEmbedding(), semanticThreshold: 0.5, classifier: nil)
    let tie = try #require(try await router.route("order a coffee", clock: clock))
    #expect(tie.skillID == "drinks.coffee")
    #expect(tie.method == .semantic)
    let miss = try #require(try await router.route("is the weather nice?", clock: clock, scenario: .all))
    // Rules tie between the drinks; similarity to either is too low, so registration order decides.
    #expect(miss.skillID == "drinks.tea")
    #expect(miss.method == .tieBreak)
    // No canHandle accepts "music": semantic over every skill finds nothing above the threshold.
    let none = SkillRegistry()
    try none.register(StubSkill(id: "weather", phrases: ["weather"], accepts: { _ in false }))
    let quiet = SkillRouter(
      registry: none, embedding: KeywordEmbedding(), semanticThreshold: 0.5, classifier: nil)
    #expect(try await quiet.route("weather today", clock: clock)?.skillID == "weather")
    #expect(try await quiet.route("play music", clock: clock) == nil)
  }

  @Test func withoutEmbeddingTiesFallBackToRules() async throws {
    let registry = SkillRegistry()
    try registry.register(StubSkill(id: "first", phrases: ["x"]))
    try registry.register(StubSkill(id: "second", phrases: ["x"]))
    let decision = try #require(try await SkillRouter(registry: registry).route("x", clock: clock))
    #expect(decision.skillID == "first")
    #expect(decision.method == .tieBreak)
  }

  @Test func invalidEmbeddingsAreTypedErrors() async throws {
    let registry = SkillRegistry()
    try registry.register(StubSkill(id: "a", phrases: ["p"], accepts: { _ in false }))
    let short = SkillRouter(registry: registry, embedding: BrokenEmbedding(vectors: [[1, 0]]))
    await #expect(throws: RouterError.embeddingCountMismatch(expected: 2, got: 1)) {
      try await short.prepareIndex()
    }
    let nan = SkillRouter(registry: registry, embedding: BrokenEmbedding(vectors: [[1, 0], [.nan, 0]]))
    await #expect(throws: RouterError.invalidEmbedding(index: 1)) { try await nan.prepareIndex() }
    let ragged = SkillRouter(registry: registry, embedding: BrokenEmbedding(vectors: [[1, 0], [1, 0, 0]]))
    await #expect(throws: RouterError.embeddingDimensionMismatch(expected: 2, got: 3)) {
      try await ragged.prepareIndex()
    }
    let zero = SkillRouter(registry: registry, embedding: BrokenEmbedding(vectors: [[0, 0], [1, 0]]))
    await #expect(throws: RouterError.invalidEmbedding(index: 0)) { try await zero.prepareIndex() }
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct SkillExecutorTests {
  @Test func timeoutIsTyped() async throws {
    let memory = try TestMemory()
    let skill = StubSkill(id: "slow", limit: .milliseconds(50)) { _ in
      try await Task.sleep(for: .seconds(30))
      return .text("late")
    }
    await #expect(throws: SkillError.timeout(skill: "slow", after: .milliseconds(50))) {
      try await SkillExecutor.run(skill, arguments: [:], context: context("x", memory: memory))
    }
    #expect(skill.attempts.count == 1)
  }

  struct Flaky: Error {}

  @Test func readOnlySkillsAreRetried() async throws {
    let memory = try TestMemory()
    let skill = StubSkill(id: "flaky", readOnly: true, retries: 2) { attempt in
      if attempt < 3 { throw Flaky() }
      return .text("third time")
    }
    #expect(
      try await SkillExecutor.run(skill, arguments: [:], context: context("x", memory: memory))
        == .text("third time"))
    #expect(skill.attempts.count == 3)
  }

  @Test func skillsWithSideEffectsAreNeverRetried() async throws {
    let memory = try TestMemory()
    let skill = StubSkill(id: "writer", readOnly: false, retries: 3) { _ in throw Flaky() }
    await #expect(throws: SkillError.executionFailed(skill: "writer", reason: "Flaky()")) {
      try await SkillExecutor.run(skill, arguments: [:], context: context("x", memory: memory))
    }
    #expect(skill.attempts.count == 1)
  }

  @Test func invalidArgumentsNeverReachTheSkill() async throws {
    let memory = try TestMemory()
    let skill = StubSkill(id: "s")
    await #expect(throws: SkillError.invalidArgument(name: "bogus", reason: .unknownParameter)) {
      try await SkillExecutor.run(skill, arguments: ["bogus": .int(1)], context: context("x", memory: memory))
    }
    #expect(skill.attempts.count == 0)
  }
}
