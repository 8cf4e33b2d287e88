import Engram
import EngramEmbeddings
import Foundation

/// Retrieval quality on LoCoMo conversations, as defined in the data README: each
/// conversation goes into a fresh memory (one document per turn), each question of
/// categories 1-4 retrieves the top-k turns, scored by hit@k, recall@k and MRR@10 against
/// the evidence turns; then each memory is compacted and the questions asked again.
enum LocomoSuite {
  struct Question {
    var text: String
    var category: Int
    var evidence: Set<String>
  }

  struct Tally {
    var hits: [Int: Double] = [1: 0, 5: 0, 10: 0]
    var recall: [Int: Double] = [1: 0, 5: 0, 10: 0]
    var reciprocalRank = 0.0
    var count = 0

    mutating func add(ranked: [Set<String>], evidence: Set<String>) {
      count += 1
      for k in [1, 5, 10] {
        let found = ranked.prefix(k).reduce(into: Set<String>()) { $0.formUnion($1) }.intersection(evidence)
        hits[k]! += found.isEmpty ? 0 : 1
        recall[k]! += Double(found.count) / Double(evidence.count)
      }
      if let rank = ranked.prefix(10).firstIndex(where: { !$0.isDisjoint(with: evidence) }) {
        reciprocalRank += 1 / Double(rank + 1)
      }
    }

    func report() -> BenchReport {
      var report = BenchReport()
      let n = Double(max(count, 1))
      report.set("questions", count)
      for k in [1, 5, 10] { report.set("hit@\(k)", hits[k]! / n) }
      for k in [1, 5, 10] { report.set("recall@\(k)", recall[k]! / n) }
      report.set("mrr@10", reciprocalRank / n)
      return report
    }
  }

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let defaultData = "../shared/data/locomo-dev"
    let dataPath = arguments.string("data", default: defaultData)
    let limit = try arguments.int("limit", default: 0)
    let skipCompaction = arguments.flag("quick")
    let modelOption = arguments.optionalString("model")
    let keepFolder = arguments.optionalString("keep")
    let threads = try arguments.int("threads", default: ProcessInfo.processInfo.activeProcessorCount)
    try arguments.finish()

    let files = try FileManager.default.contentsOfDirectory(atPath: dataPath)
      .filter { $0.hasSuffix(".json") }.sorted()
      .map { dataPath + "/" + $0 }
    guard !files.isEmpty else { throw BenchError("no LoCoMo .json files in \(dataPath)") }

    let embedder: any Embedder
    if modelOption == "hashing" {
      embedder = try HashingEmbedder()
    } else {
      embedder = try BertEmbedder(locator: ModelLocator(), options: .init(threads: threads))
    }
    // --keep DIR leaves the compacted memories there for inspection.
    let scratch =
      keepFolder.map { URL(fileURLWithPath: $0) }
      ?? FileManager.default.temporaryDirectory.appendingPathComponent("engram-locomo-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { if keepFolder == nil { try? FileManager.default.removeItem(at: scratch) } }

    var tallies: [SearchMode: Tally] = [:]
    var byCategory: [SearchMode: [Int: Tally]] = [:]
    var adversarial: [SearchMode: Tally] = [:]
    var latencies: [SearchMode: [Double]] = [:]
    var afterTally = Tally()
    var skipped = 0
    var bytesBefore = 0
    var bytesAfter = 0
    let modes: [SearchMode] = [.hybrid, .vector, .keyword]

    for file in files {
      let data = try Data(contentsOf: URL(fileURLWithPath: file))
      guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw BenchError("\(file) is not a JSON object")
      }
      let conversation = try ConversationFile.parse(data, path: file, defaultSession: "locomo")
      let known = Set(
        conversation.sessions.flatMap(\.turns).compactMap { $0.metadata["dia_id"]?.stringValue })
      var questions: [Question] = []
      for item in root["qa"] as? [[String: Any]] ?? [] {
        guard let text = item["question"] as? String, let category = item["category"] as? Int else {
          continue
        }
        let evidence = Set((item["evidence"] as? [String] ?? []).filter(known.contains))
        if evidence.isEmpty {
          skipped += 1
          continue
        }
        questions.append(Question(text: text, category: category, evidence: evidence))
      }
      if limit > 0 { questions = Array(questions.prefix(limit)) }

      let path = scratch.appendingPathComponent(URL(fileURLWithPath: file).lastPathComponent + ".sqlite").path
      let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
      progress("locomo: ingesting \(file) (\(conversation.turnCount) turns)")
      _ = try await engine.ingest(conversation, path: file, sessionPrefix: "")

      // Mode by mode, so each search pays its own query embedding: asked one after the
      // other, the engine's query cache would hand the later modes the vector for free.
      for mode in modes {
        for question in questions {
          let start = ContinuousClock.now
          let hits = try await engine.search(
            question.text, k: 10, mode: mode, filters: SearchFilters(kinds: [.message]), recordAccess: false)
          latencies[mode, default: []].append((ContinuousClock.now - start).seconds * 1000)
          let ranked = hits.map { Set([$0.metadata["dia_id"]?.stringValue].compactMap { $0 }) }
          if question.category == 5 {
            adversarial[mode, default: Tally()].add(ranked: ranked, evidence: question.evidence)
          } else {
            tallies[mode, default: Tally()].add(ranked: ranked, evidence: question.evidence)
            byCategory[mode, default: [:]][question.category, default: Tally()].add(
              ranked: ranked, evidence: question.evidence)
          }
        }
      }

      if !skipCompaction {
        // Turn ids -> dia ids, read before compaction deletes anything.
        var diaByMessage: [Int64: String] = [:]
        for hit in try engine.recentTurns(limit: 100_000) {
          if let dia = hit.metadata["dia_id"]?.stringValue { diaByMessage[hit.id] = dia }
        }
        let report = try await engine.compact(olderThan: 0, now: Date.distantFuture)
        bytesBefore += report.bytesBefore
        bytesAfter += report.bytesAfter
        for question in questions where question.category != 5 {
          let hits = try await engine.search(
            question.text, k: 10, mode: .hybrid, filters: SearchFilters(kinds: [.message, .summary]),
            recordAccess: false)
          // A summary counts for the turns it quotes, not for its whole span.
          let ranked = try hits.map { hit -> Set<String> in
            switch hit.kind {
            case .message: return Set([hit.metadata["dia_id"]?.stringValue].compactMap { $0 })
            case .summary:
              return Set(try engine.quotedMessageIDs(ofSummary: hit.id).compactMap { diaByMessage[$0] })
            case .memory: return []
            }
          }
          afterTally.add(ranked: ranked, evidence: question.evidence)
        }
      }
      engine.close()
    }

    var report = BenchReport()
    let questionCount = tallies[.hybrid]?.count ?? 0
    report.set("questions", questionCount)
    report.set("skipped_no_evidence", skipped)
    report.set("model", embedder.modelID)
    report.set("embed_threads", threads)
    var modesReport = BenchReport()
    for mode in modes {
      var modeReport = tallies[mode, default: Tally()].report()
      modeReport["questions"] = nil
      modeReport.set("p50_ms", Measure.percentile(latencies[mode] ?? [], 0.5))
      modeReport.set("p95_ms", Measure.percentile(latencies[mode] ?? [], 0.95))
      var categories = BenchReport()
      for (category, tally) in (byCategory[mode] ?? [:]).sorted(by: { $0.key < $1.key }) {
        categories.set(String(category), tally.report())
      }
      modeReport.set("by_category", categories)
      modeReport.set("adversarial_cat5", adversarial[mode, default: Tally()].report())
      modesReport.set(mode.rawValue, modeReport)
    }
    report.set("modes", modesReport)
    if !skipCompaction {
      var compaction = BenchReport()
      compaction.set("bytes_before", bytesBefore)
      compaction.set("bytes_after", bytesAfter)
      compaction.set("size_reduction", 1 - Double(bytesAfter) / Double(max(bytesBefore, 1)))
      let after = afterTally.report()
      compaction.set(
        "hit@10_after", after["hit@10"].flatMap { if case .double(let v) = $0 { v } else { nil } } ?? 0)
      compaction.set(
        "mrr@10_after", after["mrr@10"].flatMap { if case .double(let v) = $0 { v } else { nil } } ?? 0)
      report.set("compaction", compaction)
    }
    return (
      report, "engram-bench locomo: \(files.count) conversations, \(questionCount) questions (categories 1-4)"
    )
  }
}
