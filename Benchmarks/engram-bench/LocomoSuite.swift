import Engram
import EngramEmbeddings
import EngramStore
import Foundation
import Synchronization

/// Retrieval quality on LoCoMo conversations, as defined in the data README: each
/// conversation goes into a fresh memory (one document per turn), each question of
/// categories 1-4 retrieves the top-k turns, scored by hit@k, recall@k and MRR@10 against
/// the evidence turns; then each memory is compacted and the questions asked again.
///
/// Also reported: the bytes on disk per turn (database and every file beside it, by table);
/// with `--keyword-text plain` the turns' keyword index is rebuilt without their days (to
/// measure what the day adds); with `--sweep` hybrid fusion is scored over a fixed grid of
/// weights on the same memories (for choosing the defaults on the dev split).
enum LocomoSuite {
  struct Question {
    var text: String
    var category: Int
    var evidence: Set<String>
  }

  struct Tally {
    var hits: [Int: Double] = [1: 0, 3: 0, 5: 0, 10: 0]
    var recall: [Int: Double] = [1: 0, 3: 0, 5: 0, 10: 0]
    var reciprocalRank = 0.0
    var count = 0

    mutating func add(ranked: [Set<String>], evidence: Set<String>) {
      count += 1
      for k in [1, 3, 5, 10] {
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
      for k in [1, 3, 5, 10] { report.set("hit@\(k)", hits[k]! / n) }
      for k in [1, 3, 5, 10] { report.set("recall@\(k)", recall[k]! / n) }
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
    let precision = try benchPrecision(&arguments)
    let keepFolder = arguments.optionalString("keep")
    let threads = try arguments.int("threads", default: ProcessInfo.processInfo.activeProcessorCount)
    let keywordText = arguments.string("keyword-text", default: "dated")
    let sweep = arguments.flag("sweep")
    let databaseURL = arguments.optionalString("db-url")
    // With a row count, memories of at least that many rows keep their `.vectors` snapshot
    // and are searched reopened from it (the int8 codes, re-ranked from the database).
    let snapshotMinimum = try arguments.int("snapshot-min", default: -1)
    // --conversations 41,42: only these files (by name without .json), e.g. the dev
    // conversations held aside from training the re-ranker.
    let only = arguments.optionalString("conversations").map {
      Set($0.split(separator: ",").map(String.init))
    }
    // --rerank off: the fused order alone (the re-ranker's baseline in the same run).
    let rerank = arguments.string("rerank", default: "on")
    // --rerank-weights FILE: a JSON array of weights (as `rerank-train --weights-out` writes)
    // instead of the compiled ones, to score a fit before it is compiled in.
    let rerankWeights = arguments.optionalString("rerank-weights")
    try arguments.finish()
    guard ["on", "off"].contains(rerank) else { throw BenchError("--rerank must be on or off") }
    var retrieval = RetrievalWeights()
    if rerank == "off" { retrieval.reranker = nil }
    if let rerankWeights, rerank == "on" {
      let weights = try JSONDecoder().decode(
        [Double].self, from: Data(contentsOf: URL(fileURLWithPath: rerankWeights)))
      guard weights.count == Reranker.featureNames.count else {
        throw BenchError(
          "\(rerankWeights): \(weights.count) weights for \(Reranker.featureNames.count) features")
      }
      retrieval.reranker = Reranker(weights: weights)
    }
    guard ["dated", "plain"].contains(keywordText) else {
      throw BenchError("--keyword-text must be dated (the schema's) or plain, not \(keywordText)")
    }

    let files = try FileManager.default.contentsOfDirectory(atPath: dataPath)
      .filter { $0.hasSuffix(".json") }.sorted()
      .filter { only?.contains(String($0.dropLast(5))) ?? true }
      .map { dataPath + "/" + $0 }
    guard !files.isEmpty else { throw BenchError("no LoCoMo .json files (or none named) in \(dataPath)") }

    let embedder = try benchEmbedder(modelOption ?? "minilm", threads: threads, precision: precision)
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
    var memories: [(path: String, questions: [Question])] = []
    var storage = StorageTally()
    let postgres = try databaseURL.map { try PostgresBenchDatabase(serverURL: $0) }
    defer { postgres?.drop() }
    var postgresTallies: [SearchMode: Tally] = [:]
    var postgresLatencies: [SearchMode: [Double]] = [:]
    // Wall time of the ingests (embedding included), for turns per second.
    var ingestSeconds = 0.0

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
      var memoryConfiguration = EngramConfiguration(embedder: embedder, retrieval: retrieval)
      if snapshotMinimum >= 0 { memoryConfiguration.snapshotMinimumRows = snapshotMinimum }
      var engine = try MemoryEngine(path: path, configuration: memoryConfiguration)
      progress("locomo: ingesting \(file) (\(conversation.turnCount) turns)")
      let ingestStart = ContinuousClock.now
      _ = try await engine.conversation.ingest(conversation, path: file, sessionPrefix: "")
      ingestSeconds += (ContinuousClock.now - ingestStart).seconds
      if snapshotMinimum >= 0 {
        await engine.close()
        engine = try MemoryEngine(path: path, configuration: memoryConfiguration)
        guard engine.indexSource == .snapshot else {
          throw BenchError("\(path): reopened without its snapshot (source \(engine.indexSource))")
        }
      }
      if keywordText == "plain" { try rebuildTurnKeywordIndexWithoutDays(path: path) }
      memories.append((path, questions))

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

      if let postgres {
        try await evaluateOnPostgres(
          url: postgres.url,
          user: "locomo-" + URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent,
          conversation: conversation, path: file, questions: questions, embedder: embedder, modes: modes,
          tallies: &postgresTallies, latencies: &postgresLatencies)
      }

      // Bytes on disk of the memory as ingested (closed: WAL checkpointed, snapshot written).
      await engine.close()
      try storage.add(path: path, turns: conversation.turnCount)

      if !skipCompaction {
        let engine = try MemoryEngine(
          path: path, configuration: EngramConfiguration(embedder: embedder, retrieval: retrieval))
        defer { engine.close() }
        // Turn ids -> dia ids, read before compaction deletes anything.
        var diaByMessage: [Int64: String] = [:]
        for hit in try await engine.conversation.recentTurns(limit: 100_000) {
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
    }

    var report = BenchReport()
    let questionCount = tallies[.hybrid]?.count ?? 0
    report.set("questions", questionCount)
    report.set("skipped_no_evidence", skipped)
    if snapshotMinimum >= 0 { report.set("snapshot_minimum_rows", snapshotMinimum) }
    report.set("model", embedder.modelID)
    report.set("precision", precision.rawValue)
    report.set("embed_threads", threads)
    report.set("rerank", rerank)
    report.set(
      "conversations",
      files.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent }.joined(separator: ","))
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
    if postgres != nil {
      report.set(
        "postgresql", postgresReport(modes: modes, tallies: postgresTallies, latencies: postgresLatencies))
    }
    report.set("storage", storage.report())
    report.set("ingest_turns_per_s", Double(storage.turns) / max(ingestSeconds, 1e-9))
    if sweep { report.set("sweep", try await sweepFusion(memories, embedder: embedder)) }
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

  /// Rebuilds the turns' keyword index from their speaker and text alone (no day): the
  /// `--keyword-text plain` ablation.
  static func rebuildTurnKeywordIndexWithoutDays(path: String) throws {
    let connection = try Connection(path: path)
    try connection.transaction {
      try connection.execute("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')")
      try connection.execute(
        """
        INSERT INTO messages_fts (rowid, body)
        SELECT id, engram_fts_text(coalesce(speaker || ': ', '') || content) FROM messages
        """)
      // The triggers would delete these rows with their days: drop them, this memory is
      // only searched from here on.
      for trigger in ["messages_fts_insert", "messages_fts_delete", "messages_fts_update"] {
        try connection.execute("DROP TRIGGER \(trigger)")
      }
    }
  }

  /// Bytes on disk per turn: every file of each memory, and the database's pages by table.
  struct StorageTally {
    var turns = 0
    var files: [String: Int] = [:]
    var tables: [String: Int] = [:]

    mutating func add(path: String, turns: Int) throws {
      self.turns += turns
      let url = URL(fileURLWithPath: path)
      let folder = url.deletingLastPathComponent()
      let name = url.lastPathComponent
      for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasPrefix(name)
      {
        let size =
          try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(file).path)[
            .size] as? Int ?? 0
        let suffix = file == name ? "database" : String(file.dropFirst(name.count))
        files[suffix, default: 0] += size
      }
      let connection = try Connection(path: path, mode: .readOnly)
      // FTS5's shadow tables (messages_fts_data, ...) are grouped under their index.
      let pages = try connection.prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").map {
        ($0.string(at: 0), $0.int64(at: 1))
      }
      for (name, bytes) in pages {
        var table = name
        for index in ["messages_fts", "memories_fts", "summaries_fts"] where table.hasPrefix(index + "_") {
          table = index
        }
        tables[table, default: 0] += Int(bytes)
      }
    }

    func report() -> BenchReport {
      var report = BenchReport()
      let total = files.values.reduce(0, +)
      report.set("turns", turns)
      report.set("bytes", total)
      report.set("bytes_per_turn", Double(total) / Double(max(turns, 1)))
      var fileReport = BenchReport()
      for (file, bytes) in files.sorted(by: { $0.value > $1.value }) {
        fileReport.set(file, Double(bytes) / Double(max(turns, 1)))
      }
      report.set("files_bytes_per_turn", fileReport)
      var tableReport = BenchReport()
      for (table, bytes) in tables.sorted(by: { $0.value > $1.value }) where bytes > 0 {
        tableReport.set(table, Double(bytes) / Double(max(turns, 1)))
      }
      report.set("tables_bytes_per_turn", tableReport)
      return report
    }
  }

  /// Hybrid hit@10 and MRR@10 over a fixed grid of fusion weights, on the memories already
  /// built (query vectors are computed once and reused across the grid).
  static func sweepFusion(
    _ memories: [(path: String, questions: [Question])], embedder: any Embedder
  ) async throws -> BenchReport {
    let memoizing = MemoizingEmbedder(embedder)
    var rows: [(label: String, hit10: Double, mrr: Double)] = []
    for vectorWeight in [0.3, 0.4, 0.5, 0.6, 0.7] {
      for neighbourWeight in [0.0, 0.1, 0.2, 0.3, 0.4] {
        for speakerWeight in [0.0, 0.1, 0.2, 0.3] {
          let weights = RetrievalWeights(
            vectorWeight: vectorWeight, neighbourWeight: neighbourWeight, speakerWeight: speakerWeight)
          var tally = Tally()
          for memory in memories {
            let engine = try MemoryEngine(
              path: memory.path,
              configuration: EngramConfiguration(embedder: memoizing, retrieval: weights, readOnly: true))
            defer { engine.close() }
            for question in memory.questions where question.category != 5 {
              let hits = try await engine.search(
                question.text, k: 10, mode: .hybrid, filters: SearchFilters(kinds: [.message]),
                recordAccess: false)
              tally.add(
                ranked: hits.map { Set([$0.metadata["dia_id"]?.stringValue].compactMap { $0 }) },
                evidence: question.evidence)
            }
          }
          let n = Double(max(tally.count, 1))
          rows.append(
            (
              "v\(vectorWeight) n\(neighbourWeight) s\(speakerWeight)", tally.hits[10]! / n,
              tally.reciprocalRank / n
            ))
          progress("locomo sweep: \(rows.last!.label) hit@10 \(rows.last!.hit10) mrr@10 \(rows.last!.mrr)")
        }
      }
    }
    var report = BenchReport()
    let ordered = rows.sorted { ($0.hit10, $0.mrr) > ($1.hit10, $1.mrr) }
    report.set("best", ordered[0].label)
    for row in ordered {
      var entry = BenchReport()
      entry.set("hit@10", row.hit10)
      entry.set("mrr@10", row.mrr)
      report.set(row.label, entry)
    }
    return report
  }
}

/// An embedder that remembers every vector it returned (the fusion sweep asks the same
/// questions once per grid point).
final class MemoizingEmbedder: Embedder {
  let base: any Embedder
  private let memory = Mutex<[String: [Float]]>([:])

  init(_ base: any Embedder) { self.base = base }

  var modelID: String { base.modelID }
  var dimension: Int { base.dimension }
  var maxSequenceLength: Int { base.maxSequenceLength }

  func embed(_ texts: [String]) async throws -> [[Float]] {
    try await remembered(texts, queries: false)
  }

  func embedQueries(_ texts: [String]) async throws -> [[Float]] {
    try await remembered(texts, queries: true)
  }

  /// Queries and stored texts are remembered apart (a model may embed them differently).
  private func remembered(_ texts: [String], queries: Bool) async throws -> [[Float]] {
    let key = { (text: String) in (queries ? "q:" : "p:") + text }
    let known = memory.withLock { memory in texts.map { memory[key($0)] } }
    let missing = texts.indices.filter { known[$0] == nil }
    guard !missing.isEmpty else { return known.map { $0! } }
    let computed =
      try await queries ? base.embedQueries(missing.map { texts[$0] }) : base.embed(missing.map { texts[$0] })
    memory.withLock { memory in
      for (position, index) in missing.enumerated() { memory[key(texts[index])] = computed[position] }
    }
    var result = known
    for (position, index) in missing.enumerated() { result[index] = computed[position] }
    return result.map { $0! }
  }
}
