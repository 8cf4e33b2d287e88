import Engram
import EngramAgent
import EngramEmbeddings
import Foundation

/// `engram-bench answers --data DIR [--model minilm|hashing] [--limit N] [--now INSTANT] [--one-session]
/// [--json]`
///
/// Each LoCoMo conversation of DIR goes into a fresh memory; every category 1-4 question is
/// asked through the agent (no language model), each against the conversation alone (the
/// agent keeps no turns; `--one-session` keeps them, as one long chat would, and its own
/// turns then weigh in BM25's statistics), on a clock fixed at `--now` (default
/// 2026-12-01T12:00:00Z, so a run does not depend on its day), and a reply counts as answered when it
/// quotes an evidence turn (contains the first 60 characters of its text). Reports the
/// answered rate (overall, per category, per conversation), the share of "nothing yet"
/// replies, the median reply length and the turn latency.
///
/// `--calibrate --conversations 26,30` instead fits the relevance gate of `MemoryAnswer`:
/// each question of the named conversations is searched in its own memory (positive: the
/// gate should pass an evidence turn) and in another conversation's memory (negative: the
/// gate should pass nothing); it prints the thresholds that best separate the two.
enum AnswersSuite {
  struct Question {
    var text: String
    var category: Int
    var evidence: [String]
  }

  struct Conversation {
    var file: String
    var name: String
    var parsed: ConversationFile
    var questions: [Question]
  }

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let dataPath = arguments.string("data", default: "../shared/data/locomo-dev")
    let model = arguments.string("model", default: "minilm")
    let limit = try arguments.int("limit", default: 0)
    let calibrate = arguments.flag("calibrate")
    // --failures FILE: one JSON line per question not answered (question, reply, route, where
    // the evidence stood among the retrieved items), to read on dev conversations.
    let failures = arguments.optionalString("failures")
    let only = arguments.optionalString("conversations").map {
      Set($0.split(separator: ",").map(String.init))
    }
    // --now: the agent's clock (UTC), fixed so that a run does not depend on the day it is
    // made (routing and date words read the clock).
    let nowText = arguments.string("now", default: "2026-12-01T12:00:00Z")
    // --one-session: ask every question in one chat session that keeps its turns (as a
    // long `engram chat` would), instead of each against the conversation alone.
    let oneSession = arguments.flag("one-session")
    try arguments.finish()
    guard let now = ISO8601DateFormatter().date(from: nowText) else {
      throw BenchError("--now must be an ISO 8601 instant such as 2026-12-01T12:00:00Z, not \(nowText)")
    }
    guard model == "minilm" || model == "hashing" else {
      throw BenchError("--model must be minilm or hashing")
    }
    var conversations = try load(dataPath, limit: limit)
    if let only { conversations = conversations.filter { only.contains($0.name) } }
    guard !conversations.isEmpty else {
      throw BenchError("no LoCoMo .json files (or none named) in \(dataPath)")
    }
    let embedder: any Embedder =
      model == "hashing" ? try HashingEmbedder(dimension: 384) : try BertEmbedder(locator: ModelLocator())
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("engram-answers-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    if calibrate {
      guard conversations.count >= 2 else { throw BenchError("--calibrate needs at least two conversations") }
      return (
        try await calibration(conversations, embedder: embedder, scratch: scratch),
        "relevance gate calibration on \(conversations.map(\.name).joined(separator: ", "))"
      )
    }
    return (
      try await answers(
        conversations, embedder: embedder, scratch: scratch, now: now, oneSession: oneSession,
        failures: failures),
      "answers from memory through the agent (\(embedder.modelID))"
    )
  }

  static func load(_ dataPath: String, limit: Int) throws -> [Conversation] {
    let files = try FileManager.default.contentsOfDirectory(atPath: dataPath)
      .filter { $0.hasSuffix(".json") }.sorted().map { dataPath + "/" + $0 }
    return try files.map { file in
      let data = try Data(contentsOf: URL(fileURLWithPath: file))
      guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw BenchError("\(file) is not a JSON object")
      }
      let parsed = try ConversationFile.parse(data, path: file, defaultSession: "locomo")
      var texts: [String: String] = [:]
      for turn in parsed.sessions.flatMap(\.turns) {
        if let dia = turn.metadata["dia_id"]?.stringValue { texts[dia] = turn.content }
      }
      var questions: [Question] = []
      for item in root["qa"] as? [[String: Any]] ?? [] {
        guard let text = item["question"] as? String, let category = item["category"] as? Int,
          (1...4).contains(category)
        else { continue }
        let evidence = (item["evidence"] as? [String] ?? []).compactMap { texts[$0] }
        guard !evidence.isEmpty else { continue }
        questions.append(Question(text: text, category: category, evidence: evidence))
      }
      if limit > 0 { questions = Array(questions.prefix(limit)) }
      let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
      return Conversation(file: file, name: name, parsed: parsed, questions: questions)
    }
  }

  /// Whether `reply` quotes one of the evidence turns: its first 60 characters, or one of
  /// its sentences of at least 20 characters whole (an answer leads with the sentence that
  /// answers, which need not be the turn's first).
  static func quotes(_ reply: String, evidence: [String]) -> Bool {
    evidence.contains { turn in
      reply.contains(String(turn.prefix(60)))
        || MemoryAnswer.sentences(of: turn).contains { $0.count >= 20 && reply.contains($0) }
    }
  }

  /// The measure before answers led with a sentence: the first 60 characters only.
  static func quotesStart(_ reply: String, evidence: [String]) -> Bool {
    evidence.contains { reply.contains(String($0.prefix(60))) }
  }

  static func openMemory(_ conversation: Conversation, embedder: any Embedder, scratch: URL) async throws
    -> MemoryEngine
  {
    let path = scratch.appendingPathComponent("\(conversation.name)-\(UUID().uuidString).sqlite").path
    let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
    progress("answers: ingesting \(conversation.name) (\(conversation.parsed.turnCount) turns)")
    _ = try await engine.conversation.ingest(conversation.parsed, path: conversation.file, sessionPrefix: "")
    return engine
  }

  @MainActor
  static func answers(
    _ conversations: [Conversation], embedder: any Embedder, scratch: URL, now: Date,
    oneSession: Bool = false,
    failures: String? = nil
  ) async throws -> BenchReport {
    var failed: [String] = []
    var answered = 0
    var answeredByStart = 0
    // Where answers are lost: replies not drawn from memory (a skill took the question), and
    // evidence among the turn's retrieved items (all of them, the first three).
    var fromMemory = 0
    var inContext = 0
    var inContextTop3 = 0
    var nothing = 0
    var total = 0
    var lengths: [Double] = []
    var latencies: [Double] = []
    var byCategory: [Int: (answered: Int, total: Int)] = [:]
    var byConversation = BenchReport()
    for conversation in conversations {
      let engine = try await openMemory(conversation, embedder: embedder, scratch: scratch)
      defer { engine.close() }
      let registry = SkillRegistry()
      try BuiltInSkills.register(in: registry)
      let agent = try Agent(
        engine: engine, registry: registry,
        configuration: AgentConfiguration(
          sessionName: "answers", clock: AgentClock(timeZone: TimeZone(identifier: "UTC")!, now: { now }),
          persistTurns: oneSession))
      var local = 0
      progress("answers: asking \(conversation.questions.count) questions")
      for question in conversation.questions {
        let start = ContinuousClock.now
        let final = try await agent.send(question.text)
        latencies.append((ContinuousClock.now - start).seconds * 1000)
        let recalled = agent.lastContext?.hits.map(\.text) ?? []
        if recalled.contains(where: question.evidence.contains) { inContext += 1 }
        if recalled.prefix(3).contains(where: question.evidence.contains) { inContextTop3 += 1 }
        let reply = await replyText(final, agent: agent)
        if case .finished(let result) = final,
          result.route == .memory
            || result.outputs.contains(where: { if case .memories = $0 { true } else { false } })
        {
          fromMemory += 1
        }
        total += 1
        lengths.append(Double(reply.count))
        if reply == MemoryAnswer.nothingYet(.english) { nothing += 1 }
        let hit = quotes(reply, evidence: question.evidence)
        if quotesStart(reply, evidence: question.evidence) { answeredByStart += 1 }
        if hit {
          answered += 1
          local += 1
        }
        if !hit, failures != nil {
          var line: [String: Any] = [
            "conversation": conversation.name, "question": question.text, "category": question.category,
            "reply": reply, "evidence": question.evidence,
          ]
          if case .finished(let result) = final { line["route"] = String(describing: result.route) }
          line["evidence_position"] = recalled.firstIndex(where: question.evidence.contains) ?? -1
          if let data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) {
            failed.append(String(decoding: data, as: UTF8.self))
          }
        }
        byCategory[question.category, default: (0, 0)].total += 1
        byCategory[question.category, default: (0, 0)].answered += hit ? 1 : 0
      }
      await agent.waitForBackgroundWork()
      byConversation.set(conversation.name, ratio(local, conversation.questions.count))
    }
    if let failures {
      try (failed.joined(separator: "\n") + "\n").write(toFile: failures, atomically: true, encoding: .utf8)
    }
    var report = BenchReport()
    report.set("model", embedder.modelID)
    report.set("agent_clock", ISO8601DateFormatter().string(from: now))
    report.set(
      "questions_in", oneSession ? "one persisted chat session" : "each against its conversation alone")
    report.set("questions", total)
    report.set("answered_rate", ratio(answered, total))
    report.set("answered_rate_first_60_chars", ratio(answeredByStart, total))
    report.set("memory_reply_rate", ratio(fromMemory, total))
    report.set("evidence_in_context_rate", ratio(inContext, total))
    report.set("evidence_in_context_top3_rate", ratio(inContextTop3, total))
    report.set("nothing_rate", ratio(nothing, total))
    report.set("median_reply_chars", Measure.percentile(lengths, 0.5))
    report.set("turn_p50_ms", Measure.percentile(latencies, 0.5))
    report.set("turn_p95_ms", Measure.percentile(latencies, 0.95))
    var categories = BenchReport()
    for category in byCategory.keys.sorted() {
      categories.set(String(category), ratio(byCategory[category]!.answered, byCategory[category]!.total))
    }
    report.set("by_category", categories)
    report.set("by_conversation", byConversation)
    return report
  }

  /// The text a turn ended with: the reply, the confirmation it asks (the action is then
  /// cancelled) or the failure's message.
  @MainActor
  static func replyText(_ final: AgentState, agent: Agent) async -> String {
    switch final {
    case .finished(let result): return result.text
    case .waitingForConfirmation(let action):
      await agent.cancel()
      return action.confirmationText
    case .failed(let failure): return failure.message
    default: return ""
    }
  }

  /// Retrieved items (as the agent sees them) for each question, in its own memory and in
  /// the next conversation's memory; then a grid search of the gate's two thresholds for
  /// the largest difference between answered-own and answered-foreign rates.
  static func calibration(_ conversations: [Conversation], embedder: any Embedder, scratch: URL) async throws
    -> BenchReport
  {
    var engines: [MemoryEngine] = []
    for conversation in conversations {
      engines.append(try await openMemory(conversation, embedder: embedder, scratch: scratch))
    }
    defer { for engine in engines { engine.close() } }
    var own: [(question: Question, items: [SearchHit])] = []
    var foreign: [(question: Question, items: [SearchHit])] = []
    for (index, conversation) in conversations.enumerated() {
      let other = engines[(index + 1) % engines.count]
      for question in conversation.questions {
        let mine = try await engines[index].search(question.text, k: 8, recordAccess: false)
        let theirs = try await other.search(question.text, k: 8, recordAccess: false)
        own.append((question, mine))
        foreign.append((question, theirs))
      }
    }
    var best: (score: Double, coverage: Double, cosine: Double?, own: Double, foreign: Double) = (
      -1, 0, nil, 0, 0
    )
    let cosines: [Double?] = [nil] + stride(from: 0.3, through: 0.8, by: 0.05).map { Optional($0) }
    for coverage in stride(from: 0.3, through: 1.0001, by: 0.05) {
      for cosine in cosines {
        var gate = MemoryAnswer(modelID: embedder.modelID, minimumCoverage: coverage)
        gate.minimumCosine = cosine
        let ownRate = ratio(
          own.filter { entry in
            let chosen = gate.relevant(entry.items, to: entry.question.text)
            return chosen.contains { item in
              entry.question.evidence.contains { $0.hasPrefix(item.text.prefix(60)) }
            }
          }.count, own.count)
        let foreignRate = ratio(
          foreign.filter { !gate.relevant($0.items, to: $0.question.text).isEmpty }.count, foreign.count)
        if ownRate - foreignRate > best.score {
          best = (ownRate - foreignRate, coverage, cosine, ownRate, foreignRate)
        }
      }
    }
    var report = BenchReport()
    report.set("model", embedder.modelID)
    report.set("questions", own.count)
    report.set("minimum_coverage", best.coverage)
    report.set("minimum_cosine", best.cosine ?? -1)
    report.set("answered_own", best.own)
    report.set("answered_foreign", best.foreign)
    let defaults = MemoryAnswer(modelID: embedder.modelID)
    report.set("default_minimum_coverage", defaults.minimumCoverage)
    report.set("default_minimum_cosine", defaults.minimumCosine ?? -1)
    return report
  }
}
