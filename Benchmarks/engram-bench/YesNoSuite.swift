import Engram
import EngramAgent
import EngramEmbeddings
import Foundation

/// `engram-bench yesno [--data Benchmarks/data/yesno-eval.jsonl] [--model minilm|hashing] [--json]`
///
/// Scores the verdicts of yes/no questions answered from memory on a set written by someone
/// who had not seen the code (`yesno-eval.jsonl` is frozen and only scored;
/// `yesno-dev.jsonl`, by another writer to the same brief, may be read to choose rules):
/// each line holds a few memories, a yes/no question and the expected verdict (yes, no, or
/// unsure: memory does not settle it, or the question is hypothetical). Every item goes into a fresh memory
/// (`engine.memories.remember`), the question is asked through the agent (no language
/// model), and the reply's verdict is read from its first words ("Yes." / "是的。", "No." /
/// "不是。"; anything else counts as unsure). Reports accuracy overall, by language and by
/// expected verdict, and the share of confident mistakes (a yes for a no or the reverse, or
/// a yes or no where memory does not settle it). The answers without a language model give
/// no verdict (a rule-based one was measured and not kept: docs/benchmarks.md, "Yes/no
/// questions").
enum YesNoSuite {
  struct Item: Decodable {
    var id: String
    var language: String
    var memories: [String]
    var question: String
    var expected: String
  }

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let dataPath = arguments.string("data", default: "Benchmarks/data/yesno-eval.jsonl")
    let model = arguments.string("model", default: "minilm")
    let failures = arguments.optionalString("failures")
    try arguments.finish()
    guard model == "minilm" || model == "hashing" else {
      throw BenchError("--model must be minilm or hashing")
    }
    let items = try decodeJSONLines(Item.self, path: dataPath)
    let embedder: any Embedder =
      model == "hashing" ? try HashingEmbedder(dimension: 384) : try BertEmbedder(locator: ModelLocator())
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("engram-yesno-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    return (
      try await score(items, embedder: embedder, scratch: scratch, failures: failures), "yes/no verdicts"
    )
  }

  @MainActor
  static func score(_ items: [Item], embedder: any Embedder, scratch: URL, failures: String?) async throws
    -> BenchReport
  {
    var correct = 0
    var confidentMistakes = 0
    var byLanguage: [String: (Int, Int)] = [:]
    var byExpected: [String: (Int, Int)] = [:]
    var missed: [String] = []
    for item in items {
      let path = scratch.appendingPathComponent("\(item.id).sqlite").path
      let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
      defer { engine.close() }
      for memory in item.memories { _ = try await engine.memories.remember(memory) }
      let registry = SkillRegistry()
      try BuiltInSkills.register(in: registry)
      let agent = try await Agent(
        engine: engine, registry: registry, configuration: AgentConfiguration(sessionName: "yesno"))
      let reply = await AnswersSuite.replyText(try await agent.send(item.question), agent: agent)
      await agent.waitForBackgroundWork()
      let verdict = verdict(of: reply)
      let right = verdict == item.expected
      if right { correct += 1 }
      if verdict != "unsure" && !right { confidentMistakes += 1 }
      byLanguage[item.language, default: (0, 0)].0 += right ? 1 : 0
      byLanguage[item.language, default: (0, 0)].1 += 1
      byExpected[item.expected, default: (0, 0)].0 += right ? 1 : 0
      byExpected[item.expected, default: (0, 0)].1 += 1
      if !right {
        let line: [String: Any] = [
          "id": item.id, "question": item.question, "expected": item.expected, "got": verdict, "reply": reply,
        ]
        if let data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) {
          missed.append(String(decoding: data, as: UTF8.self))
        }
      }
    }
    if let failures {
      try (missed.joined(separator: "\n") + "\n").write(toFile: failures, atomically: true, encoding: .utf8)
    }
    var report = BenchReport()
    report.set("items", items.count)
    report.set("model", embedder.modelID)
    report.set("accuracy", ratio(correct, items.count))
    report.set("confident_mistake_rate", ratio(confidentMistakes, items.count))
    var languages = BenchReport()
    for (language, counts) in byLanguage.sorted(by: { $0.key < $1.key }) {
      languages.set(language, ratio(counts.0, counts.1))
    }
    report.set("accuracy_by_language", languages)
    var expected = BenchReport()
    for (label, counts) in byExpected.sorted(by: { $0.key < $1.key }) {
      expected.set(label, ratio(counts.0, counts.1))
    }
    report.set("accuracy_by_expected", expected)
    return report
  }

  /// The verdict a reply opens with.
  static func verdict(of reply: String) -> String {
    if reply.hasPrefix("Yes.") || reply.hasPrefix("是的。") { return "yes" }
    if reply.hasPrefix("No.") || reply.hasPrefix("不是。") { return "no" }
    return "unsure"
  }
}
