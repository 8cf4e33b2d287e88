import Engram
import EngramEmbeddings
import Foundation

/// `engram-bench multilingual [--data FILE] [--model minilm|e5-small|hashing] [--k K] [--threads N]
/// [--json]`: paraphrase retrieval in Chinese and in English.
///
/// FILE (default `Benchmarks/data/multilingual-retrieval.jsonl`, a frozen evaluation set: it is
/// scored, never tuned on) holds `pair` rows (`en_memory`, `zh_memory`, `en_question`,
/// `zh_question`: the question shares no content word with its memory) and `distractor` rows
/// (`en_memory`, `zh_memory`, on the same topics). Per language, one fresh memory stores every
/// memory of that language (pairs and distractors) through `remember`; each pair's question
/// is then searched with `k` hits (default 3) per mode, and counts when its own memory is
/// among them: `{en,zh}.{hybrid,vector,keyword}.recall@K` (and `found`, `p50_ms`).
enum MultilingualSuite {
  struct Row: Decodable {
    var id: String?
    var kind: String
    var enMemory: String
    var zhMemory: String
    var enQuestion: String?
    var zhQuestion: String?
  }

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let dataPath = arguments.string("data", default: "Benchmarks/data/multilingual-retrieval.jsonl")
    let modelName = arguments.string("model", default: "minilm")
    let precision = try benchPrecision(&arguments)
    let k = try arguments.int("k", default: 3)
    let threads = try arguments.int("threads", default: ProcessInfo.processInfo.activeProcessorCount)
    try arguments.finish()
    guard k >= 1 else { throw BenchError("--k must be at least 1") }
    guard let data = FileManager.default.contents(atPath: dataPath) else {
      throw BenchError("cannot read \(dataPath)")
    }
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    var rows: [Row] = []
    for (number, line) in String(decoding: data, as: UTF8.self).split(separator: "\n").enumerated()
    where !line.trimmingCharacters(in: .whitespaces).isEmpty {
      do {
        rows.append(try decoder.decode(Row.self, from: Data(line.utf8)))
      } catch {
        throw BenchError("\(dataPath):\(number + 1) is not a pair or distractor row")
      }
    }
    let pairs = rows.filter { $0.kind == "pair" }
    guard !pairs.isEmpty else { throw BenchError("no pair rows in \(dataPath)") }

    let embedder = try benchEmbedder(modelName, threads: threads, precision: precision)
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-multilingual-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }

    let modes: [SearchMode] = [.hybrid, .vector, .keyword]
    var report = BenchReport()
    var summary: [String] = []
    for language in ["en", "zh"] {
      let memoryText = { (row: Row) in language == "en" ? row.enMemory : row.zhMemory }
      let path = scratch.appendingPathComponent("\(language).sqlite").path
      let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
      progress("multilingual: \(language): storing \(rows.count) memories with \(embedder.modelID)")
      var memoryIDs: [Int64] = []
      for row in pairs { memoryIDs.append(try await engine.memories.remember(memoryText(row))) }
      for row in rows where row.kind != "pair" { _ = try await engine.memories.remember(memoryText(row)) }
      var languageReport = BenchReport()
      for mode in modes {
        var found = 0
        var latencies: [Double] = []
        for (row, memoryID) in zip(pairs, memoryIDs) {
          let question = (language == "en" ? row.enQuestion : row.zhQuestion) ?? ""
          let start = ContinuousClock.now
          let hits = try await engine.search(
            question, k: k, mode: mode, filters: SearchFilters(kinds: [.memory]), recordAccess: false)
          latencies.append((ContinuousClock.now - start).seconds * 1000)
          if hits.contains(where: { $0.id == memoryID }) { found += 1 }
        }
        let recall = Double(found) / Double(pairs.count)
        var modeReport = BenchReport()
        modeReport.set("recall@\(k)", recall)
        modeReport.set("found", found)
        modeReport.set("p50_ms", Measure.percentile(latencies, 0.5))
        languageReport.set(mode.rawValue, modeReport)
        summary.append("\(language) \(mode.rawValue) \(String(format: "%.3f", recall))")
      }
      report.set(language, languageReport)
      await engine.close()
    }
    report.set("model", embedder.modelID)
    report.set("precision", precision.rawValue)
    report.set("pairs", pairs.count)
    report.set("memories_per_language", rows.count)
    report.set("k", k)
    progress("multilingual: " + summary.joined(separator: ", "))
    return (report, "multilingual: recall@\(k), \(pairs.count) questions per language, \(embedder.modelID)")
  }
}
