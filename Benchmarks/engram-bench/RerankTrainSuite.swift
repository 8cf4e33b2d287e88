import Engram
import Foundation

/// `engram-bench rerank-train [--conversations 26,30,43] [--depth 30] [--out FILE]
/// [--groups-out FILE [--second-model e5-small]] [--misses FILE]`
///
/// Fits the hybrid re-ranker (`Reranker`) on LoCoMo dev conversations: each named
/// conversation goes into a fresh memory searched without a re-ranker; every category 1-4
/// question's best `--depth` fused turns become rows of `Reranker.features`, labelled by
/// whether they are evidence turns. A linear model is fitted with a pairwise logistic loss
/// (each evidence turn should score above each other candidate of its question) and L2
/// regularization, by full-batch gradient descent; `--out` writes the weights as the Swift
/// file the engine compiles (`Sources/Engram/Retrieval/Reranker+Trained.swift`).
///
/// Only the conversations named are read: keep the others aside and score them with
/// `engram-bench locomo --conversations ...` (re-ranked) against `--rerank off`.
enum RerankTrainSuite {
  struct Group {
    var rows: [[Double]]
    var labels: [Bool]
    var question = ""
    var texts: [String] = []
    var extra: [[Double]] = []
  }

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let dataPath = arguments.string("data", default: "../shared/data/locomo-dev")
    let names = Set(
      arguments.string("conversations", default: "26,30,43").split(separator: ",").map(String.init))
    let depth = try arguments.int("depth", default: RetrievalWeights().rerankDepth)
    let epochs = try arguments.int("epochs", default: 3000)
    let l2 = try arguments.double("l2", default: 0.001) ?? 0.001
    let out = arguments.optionalString("out")
    // --drop a,b: features held at weight 0 (to compare feature sets by cross-validation).
    let dropped = Set((arguments.optionalString("drop") ?? "").split(separator: ",").map(String.init))
    let weightsOut = arguments.optionalString("weights-out")
    // --groups-out FILE: every question's feature rows and labels, by conversation (JSON), to
    // try other models outside.
    let groupsOut = arguments.optionalString("groups-out")
    // --misses FILE: the questions whose evidence the fitted order leaves below the top 3, with
    // the top 3 and the evidence (JSON lines; to read why, on the conversations fitted only).
    let missesOut = arguments.optionalString("misses")
    // --second-model e5-small: with --groups-out, each candidate's cosine to the question
    // under a second embedder (its text with the speaker) as an extra column, to measure what
    // a second opinion would add before building it.
    let second = arguments.optionalString("second-model")
    let threads = try arguments.int("threads", default: ProcessInfo.processInfo.activeProcessorCount)
    try arguments.finish()

    let files = try FileManager.default.contentsOfDirectory(atPath: dataPath)
      .filter { $0.hasSuffix(".json") && names.contains(String($0.dropLast(5))) }.sorted()
      .map { dataPath + "/" + $0 }
    guard files.count == names.count else {
      throw BenchError("not every conversation of \(names.sorted()) is in \(dataPath)")
    }
    let embedder = try benchEmbedder("minilm", threads: threads)
    let secondEmbedder = try second.map { try benchEmbedder($0, threads: threads) }
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("engram-rerank-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }

    var groups: [(String, [Group])] = []
    var retrieval = RetrievalWeights()
    retrieval.reranker = nil
    for file in files {
      let data = try Data(contentsOf: URL(fileURLWithPath: file))
      guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw BenchError("\(file) is not a JSON object")
      }
      let conversation = try ConversationFile.parse(data, path: file, defaultSession: "locomo")
      let path = scratch.appendingPathComponent(URL(fileURLWithPath: file).lastPathComponent + ".sqlite").path
      let engine = try MemoryEngine(
        path: path, configuration: EngramConfiguration(embedder: embedder, retrieval: retrieval))
      defer { engine.close() }
      progress("rerank-train: ingesting \(file)")
      var conversationGroups: [Group] = []
      defer { groups.append((file, conversationGroups)) }
      _ = try await engine.conversation.ingest(conversation, path: file, sessionPrefix: "")
      for item in root["qa"] as? [[String: Any]] ?? [] {
        guard let question = item["question"] as? String, let category = item["category"] as? Int,
          (1...4).contains(category)
        else { continue }
        let evidence = Set(item["evidence"] as? [String] ?? [])
        let hits = try await engine.search(
          question, k: depth, mode: .hybrid, filters: SearchFilters(kinds: [.message]), recordAccess: false)
        let labels = hits.map { evidence.contains($0.metadata["dia_id"]?.stringValue ?? "") }
        guard labels.contains(true) else { continue }
        var extra: [[Double]] = []
        if let secondEmbedder {
          let query = try await secondEmbedder.embedQueries([question])[0]
          let vectors = try await secondEmbedder.embed(hits.map { "\($0.speaker ?? ""): \($0.text)" })
          extra = vectors.map { v in [Double(zip(v, query).reduce(Float(0)) { $0 + $1.0 * $1.1 })] }
        }
        conversationGroups.append(
          Group(
            rows: Reranker.features(of: hits, query: question), labels: labels, question: question,
            texts: hits.map { "[\($0.speaker ?? "")] \($0.text)" }, extra: extra))
      }
    }
    if let groupsOut {
      let json = groups.map { file, groups in
        [
          "conversation": file,
          "groups": groups.map {
            [
              "rows": $0.rows, "labels": $0.labels, "question": $0.question, "texts": $0.texts,
              "extra": $0.extra,
            ] as [String: Any]
          },
        ] as [String: Any]
      }
      try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: groupsOut))
    }
    let start = [1.0] + [Double](repeating: 0, count: Reranker.featureNames.count - 1)
    let mask = Reranker.featureNames.map { dropped.contains($0) ? 0.0 : 1.0 }
    let before = score(groups.flatMap(\.1), weights: start)
    let weights = fit(groups.flatMap(\.1), start: start, mask: mask, epochs: epochs, l2: l2)
    let after = score(groups.flatMap(\.1), weights: weights)
    // Leave one conversation out: fit on the others, score the one left out.
    var crossValidated: [(hit1: Double, hit3: Double, count: Int)] = []
    if groups.count > 1 {
      for (index, left) in groups.enumerated() {
        let rest = groups.enumerated().filter { $0.offset != index }.flatMap(\.element.1)
        let fold = fit(rest, start: start, mask: mask, epochs: epochs, l2: l2)
        let result = score(left.1, weights: fold)
        crossValidated.append((result.hit1, result.hit3, left.1.count))
      }
    }

    var report = BenchReport()
    report.set("conversations", names.sorted().joined(separator: ","))
    report.set("questions_with_evidence_in_depth", groups.map(\.1.count).reduce(0, +))
    if !crossValidated.isEmpty {
      let total = Double(crossValidated.map(\.count).reduce(0, +))
      report.set("cv_hit@1", crossValidated.map { $0.hit1 * Double($0.count) }.reduce(0, +) / total)
      report.set("cv_hit@3", crossValidated.map { $0.hit3 * Double($0.count) }.reduce(0, +) / total)
    }
    report.set("depth", depth)
    report.set("train_hit@1_fused", before.hit1)
    report.set("train_hit@3_fused", before.hit3)
    report.set("train_hit@1_reranked", after.hit1)
    report.set("train_hit@3_reranked", after.hit3)
    var named = BenchReport()
    for (name, weight) in zip(Reranker.featureNames, weights) { named.set(name, weight) }
    report.set("weights", named)
    if let missesOut {
      var lines: [String] = []
      for group in groups.flatMap(\.1) {
        let scores = group.rows.map { zip(weights, $0).reduce(0) { $0 + $1.0 * $1.1 } }
        let order = scores.indices.sorted { scores[$0] != scores[$1] ? scores[$0] > scores[$1] : $0 < $1 }
        guard !order.prefix(3).contains(where: { group.labels[$0] }) else { continue }
        let evidence = order.enumerated().filter { group.labels[$0.element] }.map {
          ["position": $0.offset, "text": group.texts[$0.element]] as [String: Any]
        }
        let entry: [String: Any] = [
          "question": group.question, "top3": order.prefix(3).map { group.texts[$0] }, "evidence": evidence,
        ]
        let data = try JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys])
        lines.append(String(decoding: data, as: UTF8.self))
      }
      try (lines.joined(separator: "\n") + "\n").write(toFile: missesOut, atomically: true, encoding: .utf8)
    }
    if let weightsOut {
      try JSONEncoder().encode(weights).write(to: URL(fileURLWithPath: weightsOut))
    }
    if let out {
      try swiftFile(weights, conversations: names.sorted(), depth: depth)
        .write(toFile: out, atomically: true, encoding: .utf8)
    }
    return (report, "re-ranker fitted on LoCoMo dev conversations \(names.sorted().joined(separator: ", "))")
  }

  /// Pairwise logistic regression by full-batch gradient descent: the mean over evidence /
  /// other pairs of log(1 + exp(-(w·(x⁺ - x⁻)))) plus l2·|w|².
  static func fit(_ groups: [Group], start: [Double], mask: [Double], epochs: Int, l2: Double) -> [Double] {
    var pairs: [[Double]] = []
    for group in groups {
      for (i, positive) in group.labels.enumerated() where positive {
        for (j, negative) in group.labels.enumerated() where !negative {
          pairs.append(zip(group.rows[i], group.rows[j]).map { $0 - $1 })
        }
      }
    }
    var weights = zip(start, mask).map { $0 * $1 }
    let rate = 0.5
    for _ in 0..<epochs {
      var gradient = weights.map { 2 * l2 * $0 }
      for difference in pairs {
        let margin = zip(weights, difference).reduce(0) { $0 + $1.0 * $1.1 }
        let slope = -1 / (1 + exp(margin)) / Double(pairs.count)
        for index in gradient.indices { gradient[index] += slope * difference[index] }
      }
      for index in weights.indices { weights[index] -= rate * gradient[index] * mask[index] }
    }
    return weights
  }

  /// hit@1 and hit@3 of `groups` ordered by `weights` (ties keep the fused order).
  static func score(_ groups: [Group], weights: [Double]) -> (hit1: Double, hit3: Double) {
    var hit1 = 0.0
    var hit3 = 0.0
    for group in groups {
      let scores = group.rows.map { zip(weights, $0).reduce(0) { $0 + $1.0 * $1.1 } }
      let order = scores.indices.sorted { scores[$0] != scores[$1] ? scores[$0] > scores[$1] : $0 < $1 }
      if group.labels[order[0]] { hit1 += 1 }
      if order.prefix(3).contains(where: { group.labels[$0] }) { hit3 += 1 }
    }
    let n = Double(max(groups.count, 1))
    return (hit1 / n, hit3 / n)
  }

  static func swiftFile(_ weights: [Double], conversations: [String], depth: Int) -> String {
    let rows = zip(Reranker.featureNames, weights).map { name, weight in
      "      \(String(format: "%.6f", weight)),  // \(name)"
    }
    return """
      // Generated by `engram-bench rerank-train --conversations \(conversations.joined(separator: ",")) \
      --depth \(depth) --out Sources/Engram/Retrieval/Reranker+Trained.swift`
      // (LoCoMo dev conversations \(conversations.joined(separator: ", ")), MiniLM); do not edit by hand.
      extension Reranker {
        /// The weights fitted on LoCoMo dev conversations (see `Reranker`), one per feature.
        public static let trained = Reranker(
          weights: [
      \(rows.joined(separator: "\n"))
          ])
      }

      """
  }
}
