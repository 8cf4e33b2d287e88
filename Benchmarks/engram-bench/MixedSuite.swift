import Engram
import EngramEmbeddings
import Foundation

/// `engram-bench mixed [--data Benchmarks/data/mixed-eval.jsonl] [--model minilm|e5-small|hashing]
/// [--failures FILE] [--json]`
///
/// Ranking across kinds: questions over a memory that holds both a chat and the facts a user
/// asked to remember, on a set written by someone who had not seen the code
/// (`mixed-eval.jsonl` is frozen and only scored; `mixed-dev.jsonl`, by the same writer with
/// other people and topics, may be read to choose). Each scenario's turns go into a fresh
/// memory (`conversation.appendTurn`, in their sessions and at their times) and its memories
/// after them (`memories.remember`); each question is a default hybrid search (top 10), and
/// a question counts as found at k when an item its writer marked as answering it (a memory
/// or a turn) is among the first k. Reports hit@1, hit@3, hit@10 and MRR@10 overall, by the
/// kind of item that answers (memory only, turns only, both) and by language.
enum MixedSuite {
  struct Scenario: Decodable {
    struct Turn: Decodable {
      var session: String
      var speaker: String
      var role: String
      var timestamp: String
      var content: String
    }
    struct Memory: Decodable {
      var text: String
      var kind: String
      var importance: Double
    }
    struct Question: Decodable {
      struct Answers: Decodable {
        var memories: [Int]
        var turns: [Int]
      }
      var question: String
      var answers: Answers
    }
    var id: String
    var lang: String
    var turns: [Turn]
    var memories: [Memory]
    var questions: [Question]
  }

  /// Ranks of the first answering item (nil: not in the top 10), by group.
  struct Tally {
    var ranks: [Int?] = []

    func report(into report: inout BenchReport) {
      let count = Double(max(1, ranks.count))
      report.set("questions", ranks.count)
      for k in [1, 3, 10] {
        report.set("hit@\(k)", Double(ranks.filter { ($0 ?? .max) < k }.count) / count)
      }
      report.set("mrr@10", ranks.map { $0.map { 1 / Double($0 + 1) } ?? 0 }.reduce(0, +) / count)
    }

    /// The figures as an object of their own.
    var report: BenchReport {
      var report = BenchReport()
      self.report(into: &report)
      return report
    }
  }

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let dataPath = arguments.string("data", default: "Benchmarks/data/mixed-eval.jsonl")
    let model = arguments.string("model", default: "minilm")
    let failures = arguments.optionalString("failures")
    try arguments.finish()
    let scenarios = try decodeJSONLines(Scenario.self, path: dataPath)
    let embedder = try benchEmbedder(model, threads: ProcessInfo.processInfo.activeProcessorCount)
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("engram-mixed-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }

    var all = Tally()
    var byAnswer: [String: Tally] = [:]
    var byLanguage: [String: Tally] = [:]
    var missed: [String] = []
    let dates = ISO8601DateFormatter()
    for scenario in scenarios {
      let path = scratch.appendingPathComponent("\(scenario.id).sqlite").path
      let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
      defer { engine.close() }
      var sessions: [String: Int64] = [:]
      var turnIDs: [Int64] = []
      for turn in scenario.turns {
        guard let date = dates.date(from: turn.timestamp) else {
          throw BenchError("\(scenario.id): '\(turn.timestamp)' is not an ISO 8601 time")
        }
        if sessions[turn.session] == nil {
          sessions[turn.session] = try await engine.conversation.startSession(name: turn.session, at: date)
        }
        turnIDs.append(
          try await engine.conversation.appendTurn(
            role: turn.role, content: turn.content, speaker: turn.speaker, session: sessions[turn.session],
            at: date))
      }
      var memoryIDs: [Int64] = []
      for memory in scenario.memories {
        guard let kind = MemoryKind(rawValue: memory.kind) else {
          throw BenchError("\(scenario.id): '\(memory.kind)' is not a memory kind")
        }
        memoryIDs.append(
          try await engine.memories.remember(memory.text, kind: kind, importance: memory.importance))
      }
      for question in scenario.questions {
        guard question.answers.memories.allSatisfy(memoryIDs.indices.contains),
          question.answers.turns.allSatisfy(turnIDs.indices.contains),
          !question.answers.memories.isEmpty || !question.answers.turns.isEmpty
        else {
          throw BenchError("\(scenario.id): '\(question.question)' names no answer, or one out of range")
        }
        var answering = Set<String>()
        for index in question.answers.memories { answering.insert("memory:\(memoryIDs[index])") }
        for index in question.answers.turns { answering.insert("message:\(turnIDs[index])") }
        let hits = try await engine.search(question.question, k: 10, mode: .hybrid, recordAccess: false)
        let rank = hits.firstIndex { answering.contains("\($0.kind.rawValue):\($0.id)") }
        let answer =
          question.answers.turns.isEmpty
          ? "memory_only" : question.answers.memories.isEmpty ? "turns_only" : "both"
        all.ranks.append(rank)
        byAnswer[answer, default: Tally()].ranks.append(rank)
        byLanguage[scenario.lang, default: Tally()].ranks.append(rank)
        if (rank ?? .max) >= 3 {
          let top = hits.prefix(3).map { "\($0.kind.rawValue):\($0.text.prefix(70))" }
          let line: [String: Any] = [
            "scenario": scenario.id, "question": question.question, "answer": answer,
            "rank": rank.map { $0 + 1 } ?? NSNull(), "top3": top,
          ]
          missed.append(String(decoding: try JSONSerialization.data(withJSONObject: line), as: UTF8.self))
        }
      }
    }
    if let failures {
      try (missed.joined(separator: "\n") + "\n").write(toFile: failures, atomically: true, encoding: .utf8)
    }
    var report = BenchReport()
    report.set("data", dataPath)
    report.set("model", embedder.modelID)
    report.set("scenarios", scenarios.count)
    all.report(into: &report)
    var answers = BenchReport()
    for (name, tally) in byAnswer.sorted(by: { $0.key < $1.key }) { answers.set(name, tally.report) }
    report.set("by_answer", answers)
    var languages = BenchReport()
    for (name, tally) in byLanguage.sorted(by: { $0.key < $1.key }) { languages.set(name, tally.report) }
    report.set("by_language", languages)
    return (report, "ranking across memories and turns")
  }
}
