import Engram
import EngramAgent
import EngramEmbeddings
import Foundation

/// `engram-bench answers --data DIR [--model minilm|hashing] [--limit N] [--now INSTANT] [--one-session]
/// [--llm URL --llm-model M] [--json]`
///
/// Each LoCoMo conversation of DIR goes into a fresh memory; every category 1-4 question is
/// asked through the agent (no language model), each against the conversation alone (the
/// agent keeps no turns; `--one-session` keeps them, as one long chat would, and its own
/// turns then weigh in BM25's statistics), on a clock fixed at `--now` (default
/// 2026-12-01T12:00:00Z, so a run does not depend on its day), and a reply counts as answered when it
/// quotes an evidence turn (contains the first 60 characters of its text). Reports the
/// answered rate (overall, per category, per conversation), the share of "nothing yet"
/// replies, the median reply length and the turn latency; and, against each question's gold
/// answer, `answer_f1` (token F1, SQuAD's normalization) and `contains_rate` (every content
/// word of the gold answer is in the reply).
///
/// `--llm URL --llm-model M`: each question is also asked of an agent whose language model
/// composes the answer (`engram chat --llm`); `llm` reports the same measures for those
/// replies, per category too, with its turn times, reply tokens per second (the model's own
/// count from /tokenize over the turn's time) and how many fell back to memory's answer (the model
/// failed; `fallback_notices` counts each notice that said why); `extractive` reports the agent's
/// own answers the same way.
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
    /// The gold answer (LoCoMo's `answer`).
    var answer: String
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
    let llmURL = arguments.optionalString("llm")
    let llmModel = arguments.optionalString("llm-model")
    try arguments.finish()
    var llm: LanguageModelConfiguration?
    if let llmURL {
      guard let url = URL(string: llmURL), let llmModel else {
        throw BenchError("--llm needs an http(s) URL and --llm-model NAME")
      }
      llm = LanguageModelConfiguration(baseURL: url, model: llmModel)
    } else if llmModel != nil {
      throw BenchError("--llm-model needs --llm URL")
    }
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
        failures: failures, llm: llm),
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
        let answer = (item["answer"] as? String) ?? (item["answer"] as? NSNumber)?.stringValue ?? ""
        questions.append(Question(text: text, category: category, evidence: evidence, answer: answer))
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

  /// SQuAD's normalization: lowercase, punctuation and the articles a, an, the out, words.
  static func normalizedWords(_ text: String) -> [String] {
    let cleaned = String(
      text.lowercased().unicodeScalars.map {
        CharacterSet.punctuationCharacters.contains($0) || CharacterSet.symbols.contains($0)
          ? " " : Character($0)
      })
    return cleaned.split(whereSeparator: \.isWhitespace).map(String.init).filter {
      !["a", "an", "the"].contains($0)
    }
  }

  /// Token F1 of `reply` against `gold` (SQuAD's: the multiset overlap of normalized words).
  static func tokenF1(_ reply: String, gold: String) -> Double {
    let predicted = normalizedWords(reply)
    let expected = normalizedWords(gold)
    guard !predicted.isEmpty, !expected.isEmpty else { return predicted == expected ? 1 : 0 }
    var counts: [String: Int] = [:]
    for word in expected { counts[word, default: 0] += 1 }
    var common = 0
    for word in predicted where counts[word, default: 0] > 0 {
      counts[word]! -= 1
      common += 1
    }
    guard common > 0 else { return 0 }
    let precision = Double(common) / Double(predicted.count)
    let recall = Double(common) / Double(expected.count)
    return 2 * precision * recall / (precision + recall)
  }

  /// Whether every content word of `gold` (no stopwords, cut as the relevance gate cuts them)
  /// is in `reply`; a gold answer of stopwords only needs its normalized words.
  static func containsGold(_ reply: String, gold: String) -> Bool {
    let said = MemoryAnswer.contentTerms(reply, keepStopwords: true)
    let needed = MemoryAnswer.contentTerms(gold)
    if needed.isEmpty {
      let words = Set(normalizedWords(gold))
      return !words.isEmpty && words.isSubset(of: Set(normalizedWords(reply)))
    }
    return needed.isSubset(of: said)
  }

  /// The measures of one way of answering (extractive or model-composed) over the questions.
  struct Tally {
    var total = 0
    var answered = 0
    var f1 = 0.0
    var contains = 0
    var fellBack = 0
    /// The fallback notices (why the model's reply is missing), with how often each came.
    var notices: [String: Int] = [:]
    var latencies: [Double] = []
    /// Tokens of the replies (the model's own count) and the seconds of the turns they came in.
    var replyTokens = 0
    var tokenSeconds = 0.0
    /// The same measures per LoCoMo category.
    var byCategory: [Int: Tally] = [:]

    mutating func add(_ reply: String, question: Question, milliseconds: Double, tokens: Int? = nil) {
      record(reply, question: question, milliseconds: milliseconds, tokens: tokens)
      byCategory[question.category, default: Tally()].record(
        reply, question: question, milliseconds: milliseconds, tokens: tokens)
    }

    private mutating func record(_ reply: String, question: Question, milliseconds: Double, tokens: Int?) {
      total += 1
      if AnswersSuite.quotes(reply, evidence: question.evidence) { answered += 1 }
      f1 += AnswersSuite.tokenF1(reply, gold: question.answer)
      if AnswersSuite.containsGold(reply, gold: question.answer) { contains += 1 }
      latencies.append(milliseconds)
      if let tokens {
        replyTokens += tokens
        tokenSeconds += milliseconds / 1000
      }
    }

    var report: BenchReport {
      var report = measures
      report.set("fell_back_to_memory", fellBack)
      if !notices.isEmpty {
        var reasons = BenchReport()
        for (notice, count) in notices.sorted(by: { $0.key < $1.key }) { reasons.set(notice, count) }
        report.set("fallback_notices", reasons)
      }
      var categories = BenchReport()
      for category in byCategory.keys.sorted() {
        categories.set(String(category), byCategory[category]!.measures)
      }
      report.set("by_category", categories)
      return report
    }

    /// The measures without the per-category breakdown.
    private var measures: BenchReport {
      var report = BenchReport()
      report.set("questions", total)
      report.set("answered_rate", ratio(answered, total))
      report.set("answer_f1", total == 0 ? 0 : f1 / Double(total))
      report.set("contains_rate", ratio(contains, total))
      report.set("turn_p50_ms", Measure.percentile(latencies, 0.5))
      report.set("turn_p95_ms", Measure.percentile(latencies, 0.95))
      if tokenSeconds > 0 {
        // Reply tokens over the whole turn (retrieval, prompt reading and generation): what a
        // user waits per token, not the server's generation speed alone.
        report.set("reply_tokens_per_s", Double(replyTokens) / tokenSeconds)
      }
      return report
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
    failures: String? = nil, llm: LanguageModelConfiguration? = nil
  ) async throws -> BenchReport {
    var extractive = Tally()
    var composed = Tally()
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
      let agent = try await Agent(
        engine: engine, registry: registry,
        configuration: AgentConfiguration(
          sessionName: "answers", clock: AgentClock(timeZone: TimeZone(identifier: "UTC")!, now: { now }),
          persistTurns: oneSession))
      // The same memory, answered by the language model (`engram chat --llm`).
      var modelAgent: Agent?
      if let configuration = llm {
        modelAgent = try await Agent(
          engine: engine, registry: registry,
          planner: Planner(model: try OpenAIChatClient(configuration: configuration), registry: registry),
          configuration: AgentConfiguration(
            sessionName: "answers-llm",
            clock: AgentClock(timeZone: TimeZone(identifier: "UTC")!, now: { now }), persistTurns: oneSession)
        )
      }
      // The model's own count of each reply's tokens (llama.cpp's /tokenize), for tokens/s.
      let tokenCounter = try llm.map { try OpenAIChatClient(configuration: $0) }
      var local = 0
      progress("answers: asking \(conversation.questions.count) questions")
      for question in conversation.questions {
        let start = ContinuousClock.now
        let final = try await agent.send(question.text)
        let elapsed = (ContinuousClock.now - start).seconds * 1000
        latencies.append(elapsed)
        let recalled = agent.lastContext?.hits.map(\.text) ?? []
        if recalled.contains(where: question.evidence.contains) { inContext += 1 }
        if recalled.prefix(3).contains(where: question.evidence.contains) { inContextTop3 += 1 }
        let reply = await replyText(final, agent: agent)
        extractive.add(reply, question: question, milliseconds: elapsed)
        if let modelAgent {
          let modelStart = ContinuousClock.now
          let modelFinal = try await modelAgent.send(question.text)
          let modelElapsed = (ContinuousClock.now - modelStart).seconds * 1000
          let modelReply = await replyText(modelFinal, agent: modelAgent)
          composed.add(
            modelReply, question: question, milliseconds: modelElapsed,
            tokens: try await tokenCounter?.countTokens(modelReply))
          if case .finished(let result) = modelFinal, let notice = result.notice {
            composed.fellBack += 1
            composed.notices[notice, default: 0] += 1
          }
        }
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
      await modelAgent?.waitForBackgroundWork()
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
    report.set("answer_f1", extractive.total == 0 ? 0 : extractive.f1 / Double(extractive.total))
    report.set("contains_rate", ratio(extractive.contains, extractive.total))
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
    // The extractive answers' measures per category, beside the model's (same keys).
    report.set("extractive", extractive.report)
    if let llm {
      var model = composed.report
      model.set("llm_model", llm.model)
      report.set("llm", model)
    }
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
