import Engram
import EngramAgent
import EngramEmbeddings
import Foundation

/// `engram-bench agent [--phrases FILE] [--model minilm|hashing] [--turns 10000] [--queries 200]
/// [--threads N] [--json]` (`--threads`: the embedder's threads, default the processor count)
///
/// Routing accuracy of the built-in skills on the labelled phrase set (rules only, and rules
/// then semantic similarity with the chosen embedder), on all phrases and on the held-back
/// half; then end-to-end agent turn latency without a language model (persist the user turn,
/// retrieve the prompt context, route, execute a read-only skill, persist the reply and traces)
/// on a memory of `--turns` synthetic conversation turns ingested through `engine.ingest`.
enum AgentSuite {
  struct Phrase: Decodable {
    var text: String
    var skill: String
    var held_out: Bool
  }

  struct Fixture: Decodable { var phrases: [Phrase] }

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let phrasesPath = arguments.string(
      "phrases", default: "Tests/EngramAgentTests/Fixtures/routing-phrases.json")
    let model = arguments.string("model", default: "minilm")
    let turnCount = try arguments.int("turns", default: 10_000)
    let queryCount = try arguments.int("queries", default: 200)
    let threads = try arguments.int("threads", default: ProcessInfo.processInfo.activeProcessorCount)
    try arguments.finish()
    guard turnCount > 0, queryCount > 0 else { throw BenchError("--turns and --queries must be positive") }
    guard model == "minilm" || model == "hashing" else {
      throw BenchError("--model must be minilm or hashing")
    }
    let phrases: [Phrase]
    do {
      phrases = try JSONDecoder().decode(
        Fixture.self, from: Data(contentsOf: URL(fileURLWithPath: phrasesPath))
      ).phrases
    } catch {
      throw BenchError(
        "cannot read the phrase set \(phrasesPath) (run from the repository root or pass --phrases)")
    }

    progress("agent: loading the \(model) embedder")
    let embedder: any Embedder =
      model == "hashing"
      ? try HashingEmbedder(dimension: 384)
      : try BertEmbedder(locator: ModelLocator(), options: .init(threads: threads))

    var report = BenchReport()
    report.set("model", embedder.modelID)
    report.set("embed_threads", threads)
    report.set("phrases", phrases.count)
    report.set("heldout_phrases", phrases.filter(\.held_out).count)
    try await measureRouting(phrases, embedder: embedder, into: &report)
    try await measureTurns(embedder: embedder, turns: turnCount, queries: queryCount, into: &report)
    return (report, "agent routing and turn latency (\(embedder.modelID))")
  }

  static func measureRouting(_ phrases: [Phrase], embedder: any Embedder, into report: inout BenchReport)
    async throws
  {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let rules = SkillRouter(registry: registry)
    let semantic = SkillRouter(registry: registry, embedding: EmbedderPhraseEmbedding(embedder))
    try await semantic.prepareIndex()
    let zone = TimeZone(identifier: "Asia/Shanghai")!
    let clock = AgentClock.fixed(Date(timeIntervalSince1970: 1_749_607_200), timeZone: zone)
    var correct = (rules: 0, semantic: 0, heldRules: 0, heldSemantic: 0)
    var routeSeconds: [Double] = []
    progress("agent: routing \(phrases.count) phrases")
    for phrase in phrases {
      let byRules = rules.routeByRules(phrase.text, clock: clock)?.skillID
      var bySemantic: String?
      let seconds = try await Measure.seconds {
        bySemantic = try await semantic.route(phrase.text, clock: clock)?.skillID
      }
      routeSeconds.append(seconds)
      if byRules == phrase.skill {
        correct.rules += 1
        if phrase.held_out { correct.heldRules += 1 }
      }
      if bySemantic == phrase.skill {
        correct.semantic += 1
        if phrase.held_out { correct.heldSemantic += 1 }
      }
    }
    let all = Double(phrases.count)
    let held = Double(max(1, phrases.filter(\.held_out).count))
    report.set("rules_accuracy", Double(correct.rules) / all)
    report.set("rules_semantic_accuracy", Double(correct.semantic) / all)
    report.set("heldout_rules_accuracy", Double(correct.heldRules) / held)
    report.set("heldout_rules_semantic_accuracy", Double(correct.heldSemantic) / held)
    report.set("route_p50_ms", Measure.percentile(routeSeconds, 0.5) * 1000)
  }

  static func measureTurns(embedder: any Embedder, turns: Int, queries: Int, into report: inout BenchReport)
    async throws
  {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-bench-agent-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let engine = try MemoryEngine(
      path: folder.appendingPathComponent("memory.sqlite").path,
      configuration: EngramConfiguration(embedder: embedder))
    defer { engine.close() }
    progress("agent: ingesting \(turns) synthetic turns")
    let file = syntheticConversation(turns: turns)
    let ingestSeconds = try await Measure.seconds {
      _ = try await engine.ingest(file, path: "synthetic")
    }
    report.set("turns", turns)
    report.set("ingest_s", ingestSeconds)
    progress("agent: \(queries) turns")
    let samples = try await runTurns(engine: engine, queries: queries)
    report.set("queries", queries)
    report.set("turn_p50_ms", Measure.percentile(samples, 0.5) * 1000)
    report.set("turn_p95_ms", Measure.percentile(samples, 0.95) * 1000)
  }

  @MainActor
  static func runTurns(engine: MemoryEngine, queries: Int) async throws -> [Double] {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let agent = try Agent(
      engine: engine, registry: registry, configuration: AgentConfiguration(sessionName: "bench"))
    let requests = [
      "what time is it?", "do you remember where I went hiking?", "what did I say about the dentist?",
      "现在几点了", "what's my sister's wedding date?", "do you remember the book club?",
    ]
    // Warm-up: the router's phrase index and the first statements.
    for request in requests { _ = try await agent.send(request) }
    var samples: [Double] = []
    samples.reserveCapacity(queries)
    for index in 0..<queries {
      let request = requests[index % requests.count]
      let start = ContinuousClock.now
      let final = try await agent.send(request)
      let seconds = (ContinuousClock.now - start).seconds
      guard case .finished = final else { throw BenchError("turn '\(request)' ended in \(final)") }
      samples.append(seconds)
    }
    // Turns are embedded in the background after each reply; exiting while that is inside
    // OpenBLAS hangs the process in OpenBLAS's exit handler, so let it finish first.
    await agent.waitForBackgroundWork()
    return samples
  }

  /// `turns` turns in sessions of 50, alternating user and assistant, ten minutes apart.
  static func syntheticConversation(turns: Int) -> ConversationFile {
    var generator = SeededGenerator(seed: 7)
    let people = ["Sam", "Mia", "Leo", "Ava", "Noah", "Zoe", "my sister", "my boss"]
    let activities = [
      "went hiking near the lake", "had a dentist appointment", "planned the wedding menu",
      "joined the book club", "fixed the bike", "tried a new ramen place", "watched a jazz concert",
      "painted the kitchen", "booked flights to Lisbon", "started learning Spanish",
    ]
    let days = ["on Monday", "last weekend", "yesterday", "on Friday evening", "this morning", "in March"]
    let replies = [
      "That sounds fun, tell me more.", "Got it, I'll keep that in mind.", "How did it go?",
      "Nice! Anything you want me to remember?",
    ]
    let start = Date(timeIntervalSince1970: 1_672_531_200)
    var sessions: [ConversationSession] = []
    var index = 0
    while index < turns {
      let name = "session-\(sessions.count + 1)"
      var sessionTurns: [ConversationTurn] = []
      for _ in 0..<min(50, turns - index) {
        let time = start.addingTimeInterval(Double(index) * 600)
        let content: String
        if index % 2 == 0 {
          let person = people[Int(generator.next() % UInt64(people.count))]
          let activity = activities[Int(generator.next() % UInt64(activities.count))]
          let day = days[Int(generator.next() % UInt64(days.count))]
          content = "I \(activity) with \(person) \(day)."
        } else {
          content = replies[Int(generator.next() % UInt64(replies.count))]
        }
        sessionTurns.append(
          ConversationTurn(
            role: index % 2 == 0 ? "user" : "assistant", content: content, session: name, timestamp: time))
        index += 1
      }
      sessions.append(
        ConversationSession(name: name, startedAt: sessionTurns.first?.timestamp, turns: sessionTurns))
    }
    return ConversationFile(sessions: sessions, format: .jsonl)
  }
}
