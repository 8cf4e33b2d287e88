import Engram
import EngramAgent
import EngramEmbeddings
import Foundation

/// `engram-bench agent [--phrases FILE] [--skills FILE] [--agenda FILE] [--model minilm|hashing] [--now ISO8601] [--turns 10000]
/// [--queries 200] [--threads N] [--cross-validate] [--json]` (`--threads`: the embedder's
/// threads, default the processor count)
///
/// Routing on a labelled request set (default: the frozen evaluation split
/// `Benchmarks/data/agent-eval.jsonl`, JSON lines `{text, label, lang, when?, result?, title?}`,
/// labels may be `none`): accuracy of the rules alone and of the full router (rules, intent
/// model, similarity with the chosen embedder), per skill and per language; date accuracy
/// (the gold skill's arguments against `when`: an instant, `missing` or `unreadable`) and
/// calculator accuracy (against `result`); then end-to-end agent turn latency without a
/// language model on a memory of `--turns` synthetic turns. `--cross-validate` reports
/// 5-fold accuracy of the intent model on its own training corpus, by confidence threshold
/// (how the router's threshold is chosen: never on the evaluation split). The second frozen
/// split (`--skills`, default `Benchmarks/data/agent-eval-skills.jsonl`; empty to skip) is
/// reported as `skills_split`: its routing, and the arguments of the agenda, weather and
/// time-zone skills (`AgentSuite+Skills.swift`).
enum AgentSuite {
  struct Request: Decodable {
    var text: String
    var label: String
    var lang: String
    var when: String?
    var result: Double?
    var title: String?
    var target: String?
    var last: String?
    var day: String?
    var city: String?
    var zone: String?
  }

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let phrasesPath = arguments.string("phrases", default: "Benchmarks/data/agent-eval.jsonl")
    let skillsPath = arguments.string("skills", default: "Benchmarks/data/agent-eval-skills.jsonl")
    let agendaPath = arguments.string("agenda", default: "Benchmarks/data/agent-eval-agenda.json")
    let compoundPath = arguments.string("compound", default: "Benchmarks/data/compound-eval.jsonl")
    let model = arguments.string("model", default: "minilm")
    let nowText = arguments.string("now", default: "2025-06-11T10:00:00+08:00")
    let turnCount = try arguments.int("turns", default: 10_000)
    let queryCount = try arguments.int("queries", default: 200)
    let threads = try arguments.int("threads", default: ProcessInfo.processInfo.activeProcessorCount)
    let crossValidate = arguments.flag("cross-validate")
    var options = IntentClassifier.TrainingOptions()
    options.epochs = try arguments.int("epochs", default: options.epochs)
    options.learningRate = Float(
      try arguments.double("learning-rate", default: Double(options.learningRate))!)
    options.l2 = Float(try arguments.double("l2", default: Double(options.l2))!)
    try arguments.finish()
    guard turnCount >= 0, queryCount > 0 else { throw BenchError("--turns must be >= 0, --queries positive") }
    guard model == "minilm" || model == "hashing" else {
      throw BenchError("--model must be minilm or hashing")
    }
    var report = BenchReport()
    if crossValidate {
      report.set("cross_validation", try await crossValidation(options: options, semanticModel: model))
      return (report, "intent model, 5-fold cross-validation on its training corpus")
    }
    let requests = try readRequests(phrasesPath, option: "--phrases")
    let skillRequests = skillsPath.isEmpty ? [] : try readRequests(skillsPath, option: "--skills")
    guard let clock = AgentClock.fixed(iso8601: nowText) else {
      throw BenchError("--now must be ISO 8601 with an offset")
    }

    progress("agent: loading the \(model) embedder")
    let embedder: any Embedder =
      model == "hashing"
      ? try HashingEmbedder(dimension: 384)
      : try BertEmbedder(locator: ModelLocator(), options: .init(threads: threads))
    report.set("model", embedder.modelID)
    report.set("embed_threads", threads)
    report.set("phrases", requests.count)
    try await measureRouting(requests, embedder: embedder, clock: clock, into: &report)
    measureArguments(requests, clock: clock, into: &report)
    if !skillRequests.isEmpty {
      // The split of the agenda, weather and time-zone skills, reported on its own.
      var skills = BenchReport()
      skills.set("phrases", skillRequests.count)
      try await measureRouting(skillRequests, embedder: embedder, clock: clock, into: &skills)
      try await measureSkillArguments(
        skillRequests + requests, agendaPath: agendaPath, clock: clock, into: &skills)
      report.set("skills_split", skills)
    }
    if !compoundPath.isEmpty {
      let plans = try await measurePlans(try readPlans(compoundPath), embedder: embedder, clock: clock)
      report["plan_accuracy"] = plans["plan_accuracy"]
      report.set("compound_split", plans)
      // A two-step plan's routing time over a single step's, both p50, same run.
      if case .double(let single)? = report["route_p50_ms"], single > 0,
        case .double(let twoStep)? = plans["two_step_route_p50_ms"]
      {
        report.set("two_step_route_ratio", twoStep / single)
      }
    }
    // Forget, cancel or recall sent to a write, over both frozen single-step splits.
    var harmful = 0
    if case .int(let count)? = report["harmful_inverse"] { harmful += count }
    if case .object(let skills)? = report["skills_split"], case .int(let count)? = skills["harmful_inverse"] {
      harmful += count
    }
    report.set("harmful_inverse_total", harmful)
    if turnCount > 0 {
      try await measureTurns(embedder: embedder, turns: turnCount, queries: queryCount, into: &report)
    }
    return (report, "agent routing, arguments and turn latency (\(embedder.modelID))")
  }

  static func readRequests(_ path: String, option: String) throws -> [Request] {
    do {
      let text = try String(contentsOfFile: path, encoding: .utf8)
      return try text.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }.map {
        try JSONDecoder().decode(Request.self, from: Data($0.utf8))
      }
    } catch {
      throw BenchError(
        "cannot read the request set \(path) (JSON lines; run from the repository root or pass \(option))")
    }
  }

  static func measureRouting(
    _ requests: [Request], embedder: any Embedder, clock: AgentClock, into report: inout BenchReport
  ) async throws {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let skills = SkillRouter(registry: registry, embedding: EmbedderPhraseEmbedding(embedder))
    try await skills.prepareIndex()
    let router = TurnRouter(skills: skills)
    var rulesCorrect = 0
    var harmful = 0
    var fullCorrect = 0
    var bySkill: [String: (correct: Int, rules: Int, total: Int)] = [:]
    var byLanguage: [String: (correct: Int, rules: Int, total: Int)] = [:]
    var methods: [String: Int] = [:]
    var routeSeconds: [Double] = []
    progress("agent: routing \(requests.count) requests")
    for request in requests {
      let byRules = skills.routeByRules(request.text, clock: clock)?.skillID ?? "none"
      var route: TurnRoute?
      let seconds = try await Measure.seconds {
        route = try await router.route(request.text, clock: clock)
      }
      routeSeconds.append(seconds)
      // A plan's first step is the request's skill (the contract of `engram route --json`).
      let routed = route?.plan.steps.first?.skill ?? "none"
      methods[route?.source.rawValue ?? "none", default: 0] += 1
      if isHarmfulInverse(gold: request.label, routed: routed) { harmful += 1 }
      let full = routed == request.label ? 1 : 0
      let rules = byRules == request.label ? 1 : 0
      fullCorrect += full
      rulesCorrect += rules
      bySkill[request.label, default: (0, 0, 0)].correct += full
      bySkill[request.label, default: (0, 0, 0)].rules += rules
      bySkill[request.label, default: (0, 0, 0)].total += 1
      byLanguage[request.lang, default: (0, 0, 0)].correct += full
      byLanguage[request.lang, default: (0, 0, 0)].rules += rules
      byLanguage[request.lang, default: (0, 0, 0)].total += 1
    }
    report.set("routing_accuracy", ratio(fullCorrect, requests.count))
    report.set("rules_accuracy", ratio(rulesCorrect, requests.count))
    report.set("harmful_inverse", harmful)
    func breakdown(_ counts: [String: (correct: Int, rules: Int, total: Int)]) -> BenchReport {
      var result = BenchReport()
      for key in counts.keys.sorted() {
        let count = counts[key]!
        var entry = BenchReport()
        entry.set("accuracy", ratio(count.correct, count.total))
        entry.set("rules_accuracy", ratio(count.rules, count.total))
        entry.set("n", count.total)
        result.set(key, entry)
      }
      return result
    }
    report.set("by_skill", breakdown(bySkill))
    report.set("by_language", breakdown(byLanguage))
    var methodReport = BenchReport()
    for key in methods.keys.sorted() { methodReport.set(key, methods[key]!) }
    report.set("methods", methodReport)
    report.set("route_p50_ms", Measure.percentile(routeSeconds, 0.5) * 1000)
  }

  /// Date and calculator accuracy with the gold skill's own argument extraction, so a
  /// routing mistake does not count twice.
  static func measureArguments(_ requests: [Request], clock: AgentClock, into report: inout BenchReport) {
    let reminder = ReminderSkill()
    let calendar = CalendarSkill()
    var dates = (correct: 0, total: 0)
    var titles = (correct: 0, total: 0)
    var sums = (correct: 0, total: 0)
    for request in requests {
      if let expected = request.when, request.label == reminder.id || request.label == calendar.id {
        let skill: any Skill = request.label == reminder.id ? reminder : calendar
        let arguments = skill.extractArguments(from: request.text, clock: clock)
        dates.total += 1
        if dateMatches(
          arguments["when"], expected: expected, skill: skill, arguments: arguments, clock: clock)
        {
          dates.correct += 1
        }
        if let title = request.title {
          titles.total += 1
          if normalized(arguments["title"]?.stringValue ?? "") == normalized(title) { titles.correct += 1 }
        }
      }
      if let expected = request.result, request.label == "calculator" {
        sums.total += 1
        let calculator = CalculatorSkill()
        if let value = try? calculator.evaluate(
          calculator.extractArguments(from: request.text, clock: clock)),
          abs(value - expected) <= 1e-6 * max(1, abs(expected))
        {
          sums.correct += 1
        }
      }
    }
    report.set("date_accuracy", ratio(dates.correct, dates.total))
    report.set("date_items", dates.total)
    report.set("title_accuracy", ratio(titles.correct, titles.total))
    report.set("calculator_accuracy", ratio(sums.correct, sums.total))
    report.set("calculator_items", sums.total)
  }

  static func dateMatches(
    _ value: SkillValue?, expected: String, skill: any Skill, arguments: SkillArguments, clock: AgentClock
  ) -> Bool {
    switch expected {
    case "missing": return value == nil
    case "unreadable":
      guard let value else { return false }
      if case .date = value { return false }
      // A string the validator cannot read as a date is reported to the user as unreadable.
      return
        (try? ArgumentValidator.validate(arguments, against: skill.inputSchema, timeZone: clock.timeZone))
        == nil
    default:
      guard case .date(let date)? = value else { return false }
      let formatter = ISO8601DateFormatter()
      formatter.formatOptions = [.withInternetDateTime]
      guard let gold = formatter.date(from: expected) else { return false }
      return abs(date.timeIntervalSince(gold)) < 1
    }
  }

  static func normalized(_ text: String) -> String {
    text.lowercased().filter { $0.isLetter || $0.isNumber }
  }

  /// 5-fold accuracy of the intent model on its training corpus, overall and for the
  /// predictions at or above each confidence threshold (with the share they cover).
  static func crossValidation(options: IntentClassifier.TrainingOptions, semanticModel: String) async throws
    -> BenchReport
  {
    // The similarity stage as the router runs it when the model is unsure: how often is it
    // right where the held-out prediction is unsure, against the model's own guess?
    let embedder: any Embedder =
      semanticModel == "hashing"
      ? try HashingEmbedder(dimension: 384) : try BertEmbedder(locator: ModelLocator())
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let similarity = SkillRouter(
      registry: registry, embedding: EmbedderPhraseEmbedding(embedder), classifier: nil)
    var unsure: [String: (model: Int, semantic: Int, total: Int)] = [:]
    var examples = IntentCorpus.examples
    var generator = SplitMix64(seed: 11)
    examples.shuffle(using: &generator)
    let folds = 5
    var predictions: [(correct: Bool, confidence: Double)] = []
    var confusions: [String: Int] = [:]
    for fold in 0..<folds {
      let test = examples.enumerated().filter { $0.offset % folds == fold }.map(\.element)
      let train = examples.enumerated().filter { $0.offset % folds != fold }.map(\.element)
      let classifier = IntentClassifier(examples: train, options: options)
      for example in test {
        let prediction = classifier.predict(example.text)
        predictions.append((prediction.label == example.label, prediction.confidence))
        for threshold in [0.45, 0.6, 0.75] where prediction.confidence < threshold {
          let key = String(format: "%.2f", threshold)
          let scores = try await similarity.semanticScores(
            for: example.text, among: registry.allSkills.map(\.id))
          let semantic =
            scores.first.flatMap { $0.1 > similarity.semanticThreshold ? $0.0 : nil } ?? prediction.label
          unsure[key, default: (0, 0, 0)].total += 1
          unsure[key, default: (0, 0, 0)].model += prediction.label == example.label ? 1 : 0
          unsure[key, default: (0, 0, 0)].semantic += semantic == example.label ? 1 : 0
        }
        if prediction.label != example.label {
          confusions["\(example.label) -> \(prediction.label)", default: 0] += 1
        }
      }
    }
    var report = BenchReport()
    report.set("examples", examples.count)
    report.set("accuracy", ratio(predictions.filter(\.correct).count, predictions.count))
    var thresholds = BenchReport()
    for threshold in stride(from: 0.3, through: 0.9, by: 0.05) {
      let kept = predictions.filter { $0.confidence >= threshold }
      var entry = BenchReport()
      entry.set("accuracy", ratio(kept.filter(\.correct).count, kept.count))
      entry.set("coverage", ratio(kept.count, predictions.count))
      thresholds.set(String(format: "%.2f", threshold), entry)
    }
    report.set("by_threshold", thresholds)
    var unsureReport = BenchReport()
    for (key, counts) in unsure.sorted(by: { $0.key < $1.key }) {
      var entry = BenchReport()
      entry.set("n", counts.total)
      entry.set("model_accuracy", ratio(counts.model, counts.total))
      entry.set("with_similarity_accuracy", ratio(counts.semantic, counts.total))
      unsureReport.set(key, entry)
    }
    report.set("below_threshold", unsureReport)
    var mistakes = BenchReport()
    for (pair, count) in confusions.sorted(by: { $0.value > $1.value }).prefix(12) {
      mistakes.set(pair, count)
    }
    report.set("confusions", mistakes)
    return report
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
      _ = try await engine.conversation.ingest(file, path: "synthetic")
    }
    report.set("turns", turns)
    report.set("ingest_s", ingestSeconds)
    progress("agent: \(queries) turns")
    let samples = try await runTurns(engine: engine, queries: queries)
    report.set("queries", queries)
    report.set("turn_p50_ms", Measure.percentile(samples, 0.5) * 1000)
    report.set("turn_p95_ms", Measure.percentile(samples, 0.95) * 1000)
    let (single, twoStep) = try await runWriteTurns(engine: engine, rounds: max(queries / 4, 5))
    report.set("single_step_turn_p50_ms", Measure.percentile(single, 0.5) * 1000)
    report.set("two_step_turn_p50_ms", Measure.percentile(twoStep, 0.5) * 1000)
    // A two-step plan's turn (to its one confirmation) over a single step's (to its own).
    report.set("two_step_turn_ratio", Measure.percentile(twoStep, 0.5) / Measure.percentile(single, 0.5))
  }

  /// Turns that ask to change something, timed to their confirmation (then declined): single
  /// steps, and the same requests two at a time, planned as one plan of two steps.
  @MainActor static func runWriteTurns(engine: MemoryEngine, rounds: Int) async throws -> (
    single: [Double], twoStep: [Double]
  ) {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let agent = try await Agent(
      engine: engine, registry: registry, configuration: AgentConfiguration(sessionName: "bench-writes"))
    let singles = [
      "remind me to repot the fern tomorrow at 6pm", "put the tax advisor on my calendar for Monday at 11am",
      "提醒我后天早上八点交物业费", "add the choir rehearsal to my calendar for Thursday at 7pm",
    ]
    let pairs = [
      "remind me to repot the fern tomorrow at 6pm, and put the tax advisor on my calendar for Monday at 11am",
      "提醒我后天早上八点交物业费，然后把周四晚上七点的合唱排练加到日历",
    ]
    func timed(_ request: String, steps: Int) async throws -> Double {
      let start = ContinuousClock.now
      let state = try await agent.send(request)
      let seconds = (ContinuousClock.now - start).seconds
      guard case .waitingForConfirmation(let action) = state else {
        throw BenchError("turn '\(request)' ended in \(state), not a confirmation")
      }
      if steps == 2, action.skillID != Agent.planSkillID {
        throw BenchError("turn '\(request)' was not planned as two steps")
      }
      _ = await agent.cancel()
      return seconds
    }
    // Warm-up, then alternate so that both see the same machine.
    for request in singles { _ = try await timed(request, steps: 1) }
    var single: [Double] = []
    var twoStep: [Double] = []
    for round in 0..<rounds {
      single.append(try await timed(singles[round % singles.count], steps: 1))
      twoStep.append(try await timed(pairs[round % pairs.count], steps: 2))
    }
    await agent.waitForBackgroundWork()
    return (single, twoStep)
  }

  @MainActor
  static func runTurns(engine: MemoryEngine, queries: Int) async throws -> [Double] {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let agent = try await Agent(
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
    var generator = SplitMix64(seed: 7)
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
