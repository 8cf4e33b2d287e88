import Engram
import EngramEmbeddings
import Foundation
import Synchronization

/// `engram-bench multilingual [--data FILE] [--model minilm|e5-small|hashing] [--k K] [--threads N]
/// [--precision f32|int8] [--dump DIR] [--noise SIGMA [--noise-runs N]] [--json]`: paraphrase
/// retrieval in Chinese and in English.
///
/// FILE (default `Benchmarks/data/multilingual-retrieval.jsonl`, a frozen evaluation set: it is
/// scored, never tuned on) holds `pair` rows (`en_memory`, `zh_memory`, `en_question`,
/// `zh_question`: the question shares no content word with its memory) and `distractor` rows
/// (`en_memory`, `zh_memory`, on the same topics). Per language, one fresh memory stores every
/// memory of that language (pairs and distractors) through `remember`; each pair's question
/// is then searched with `k` hits (default 3) per mode, and counts when its own memory is
/// among them: `{en,zh}.{hybrid,vector,keyword}.recall@K` (and `found`, `p50_ms`).
///
/// `--dump DIR` writes, per language, what a comparison of two runs (two precisions) needs to
/// say why a question's result changed: `DIR/{en,zh}.json` (each question's own memory id and,
/// per mode, the first `Dump.depth` hits as id, score, cosine, BM25; the k hits scored are
/// their first k, the same ones as a k-hit search's) and the vectors of the questions and of
/// the memories in the order they were stored (`DIR/{en,zh}-{queries,memories}.f32`, float32
/// little-endian, one row per text), each embedded alone as the search and `remember` do.
///
/// `--noise SIGMA` runs the whole search N times (`--noise-runs`, default 10), each time with
/// every vector perturbed by Gaussian noise of SIGMA per component (then renormalized; seeds
/// 1...N, the same noise for the same text at one seed), and reports the questions found per
/// seed: how much a change of the vectors as small as another precision's moves the figures
/// by itself (a change of one question is 0.004 at 236 questions).
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
    let dumpPath = arguments.optionalString("dump")
    let noise = try arguments.optionalString("noise").map { text in
      guard let value = Double(text), value > 0 else { throw BenchError("--noise must be a positive number") }
      return value
    }
    let noiseRuns = try arguments.int("noise-runs", default: 10)
    try arguments.finish()
    guard noiseRuns >= 1 else { throw BenchError("--noise-runs must be at least 1") }
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
    let corpus = Corpus(rows: rows, pairs: pairs, k: k, scratch: scratch)

    var report = BenchReport()
    var summary: [String] = []
    guard let noise else {
      for language in ["en", "zh"] {
        let found = try await corpus.evaluate(
          language, embedder: embedder, dump: dumpPath.map { URL(fileURLWithPath: $0) })
        var languageReport = BenchReport()
        for result in found {
          let mode = result.mode
          let recall = Double(result.found) / Double(pairs.count)
          var modeReport = BenchReport()
          modeReport.set("recall@\(k)", recall)
          modeReport.set("found", result.found)
          modeReport.set("p50_ms", Measure.percentile(result.latencies, 0.5))
          languageReport.set(mode.rawValue, modeReport)
          summary.append("\(language) \(mode.rawValue) \(String(format: "%.3f", recall))")
        }
        report.set(language, languageReport)
      }
      report.set("model", embedder.modelID)
      report.set("precision", precision.rawValue)
      report.set("pairs", pairs.count)
      report.set("memories_per_language", rows.count)
      report.set("k", k)
      progress("multilingual: " + summary.joined(separator: ", "))
      return (report, "multilingual: recall@\(k), \(pairs.count) questions per language, \(embedder.modelID)")
    }
    // The same search with the vectors perturbed, once per seed: how far a change of the
    // vectors this small moves the figures by itself.
    let cache = NoisyEmbedder.Cache()
    for language in ["en", "zh"] {
      var counts: [SearchMode: [Int]] = [:]
      for seed in 1...noiseRuns {
        let noisy = NoisyEmbedder(base: embedder, sigma: noise, seed: UInt64(seed), cache: cache)
        for result in try await corpus.evaluate(language, embedder: noisy, dump: nil) {
          counts[result.mode, default: []].append(result.found)
        }
      }
      var languageReport = BenchReport()
      for mode in Corpus.modes {
        let found = counts[mode] ?? []
        var modeReport = BenchReport()
        modeReport["found_per_seed"] = .array(found.map { .int($0) })
        modeReport.set("found_mean", Double(found.reduce(0, +)) / Double(max(1, found.count)))
        modeReport.set("found_min", found.min() ?? 0)
        modeReport.set("found_max", found.max() ?? 0)
        languageReport.set(mode.rawValue, modeReport)
        summary.append("\(language) \(mode.rawValue) found \(found.map(String.init).joined(separator: " "))")
      }
      report.set(language, languageReport)
    }
    report.set("model", embedder.modelID)
    report.set("precision", precision.rawValue)
    report.set("noise_sigma", noise)
    report.set("noise_runs", noiseRuns)
    report.set("pairs", pairs.count)
    report.set("k", k)
    progress("multilingual: " + summary.joined(separator: "; "))
    return (
      report,
      "multilingual: questions found in top \(k) of \(pairs.count), vectors perturbed (sigma \(noise)), "
        + "\(noiseRuns) seeds, \(embedder.modelID)"
    )
  }
}

extension MultilingualSuite {
  /// One language's memories stored in a fresh engine and its questions searched in every mode.
  struct Corpus {
    static let modes: [SearchMode] = [.hybrid, .vector, .keyword]
    var rows: [Row]
    var pairs: [Row]
    var k: Int
    var scratch: URL

    /// Per mode, the questions whose own memory is among the first k hits, and each search's
    /// latency in milliseconds; with `dump`, what `--dump` writes.
    func evaluate(_ language: String, embedder: any Embedder, dump dumpDirectory: URL?) async throws
      -> [(mode: SearchMode, found: Int, latencies: [Double])]
    {
      let memoryText = { (row: Row) in language == "en" ? row.enMemory : row.zhMemory }
      let path = scratch.appendingPathComponent("\(language).sqlite").path
      for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
      let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
      progress("multilingual: \(language): storing \(rows.count) memories with \(embedder.modelID)")
      var memoryIDs: [Int64] = []
      for row in pairs { memoryIDs.append(try await engine.memories.remember(memoryText(row))) }
      for row in rows where row.kind != "pair" { _ = try await engine.memories.remember(memoryText(row)) }
      let questions = pairs.map { (language == "en" ? $0.enQuestion : $0.zhQuestion) ?? "" }
      var dump = dumpDirectory.map { _ in Dump(targets: memoryIDs) }
      var results: [(mode: SearchMode, found: Int, latencies: [Double])] = []
      for mode in Self.modes {
        var found = 0
        var latencies: [Double] = []
        for (question, memoryID) in zip(questions, memoryIDs) {
          let start = ContinuousClock.now
          let hits = try await engine.search(
            question, k: k, mode: mode, filters: SearchFilters(kinds: [.memory]), recordAccess: false)
          latencies.append((ContinuousClock.now - start).seconds * 1000)
          if hits.contains(where: { $0.id == memoryID }) { found += 1 }
          if dump != nil {
            let deeper = try await engine.search(
              question, k: max(k, Dump.depth), mode: mode, filters: SearchFilters(kinds: [.memory]),
              recordAccess: false)
            dump?.hits[mode.rawValue, default: []].append(
              deeper.map { [Double($0.id), $0.score, $0.cosine ?? .nan, $0.bm25 ?? .nan] })
          }
        }
        results.append((mode, found, latencies))
      }
      await engine.close()
      if let dumpDirectory, let dump {
        try await dump.write(
          to: dumpDirectory, language: language, embedder: embedder, questions: questions,
          memories: pairs.map(memoryText) + rows.filter { $0.kind != "pair" }.map(memoryText))
      }
      return results
    }
  }

  /// An embedder's vectors plus Gaussian noise of `sigma` per component, renormalized: the
  /// same noise for the same text, role and seed (`--noise`). The base vectors are computed
  /// once per text and role and shared by every seed through `cache`.
  final class NoisyEmbedder: Embedder, Sendable {
    final class Cache: Sendable {
      let vectors = Mutex<[String: [Float]]>([:])
    }
    let base: any Embedder
    let sigma: Double
    let seed: UInt64
    let cache: Cache

    init(base: any Embedder, sigma: Double, seed: UInt64, cache: Cache) {
      self.base = base
      self.sigma = sigma
      self.seed = seed
      self.cache = cache
    }

    var modelID: String { base.modelID }
    var dimension: Int { base.dimension }
    var maxSequenceLength: Int { base.maxSequenceLength }

    func embed(_ texts: [String]) async throws -> [[Float]] { try await vectors(texts, query: false) }
    func embedQueries(_ texts: [String]) async throws -> [[Float]] { try await vectors(texts, query: true) }

    private func vectors(_ texts: [String], query: Bool) async throws -> [[Float]] {
      var out: [[Float]] = []
      for text in texts {
        let key = (query ? "q\u{0}" : "p\u{0}") + text
        var vector: [Float]
        if let cached = cache.vectors.withLock({ $0[key] }) {
          vector = cached
        } else {
          vector = query ? try await base.embedQueries([text])[0] : try await base.embed([text])[0]
          cache.vectors.withLock { [vector] in $0[key] = vector }
        }
        // SplitMix64 seeded by the text's FNV-1a hash and the seed; Box-Muller for the normals.
        var state = key.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        state ^= seed &* 0x9e37_79b9_7f4a_7c15
        func next() -> Double {
          state &+= 0x9e37_79b9_7f4a_7c15
          var z = state
          z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
          z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
          return (Double((z ^ (z >> 31)) >> 11) + 0.5) / 9_007_199_254_740_992
        }
        var squares = 0.0
        for index in vector.indices {
          let normal = (-2 * log(next())).squareRoot() * cos(2 * Double.pi * next())
          vector[index] += Float(sigma * normal)
          squares += Double(vector[index] * vector[index])
        }
        let inverse = Float(1 / squares.squareRoot())
        out.append(vector.map { $0 * inverse })
      }
      return out
    }
  }

  /// What `--dump` writes of one language.
  struct Dump: Encodable {
    /// The hits written per question and mode (the re-ranker's depth: a search of this many
    /// hits orders its first k as a k-hit search does).
    static let depth = 30
    /// Each question's own memory id.
    var targets: [Int64]
    /// Per mode, per question: the hits as [id, score, cosine, bm25] (NaN where absent).
    var hits: [String: [[[Double]]]] = [:]

    init(targets: [Int64]) { self.targets = targets }

    func write(
      to directory: URL, language: String, embedder: any Embedder, questions: [String], memories: [String]
    )
      async throws
    {
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      let encoder = JSONEncoder()
      encoder.nonConformingFloatEncodingStrategy = .convertToString(
        positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
      try encoder.encode(self).write(to: directory.appendingPathComponent("\(language).json"))
      var queryBytes = Data()
      for question in questions {
        let vector = try await embedder.embedQueries([question])[0]
        vector.withUnsafeBytes { queryBytes.append(contentsOf: $0) }
      }
      try queryBytes.write(to: directory.appendingPathComponent("\(language)-queries.f32"))
      var memoryBytes = Data()
      for memory in memories {
        let vector = try await embedder.embed([memory])[0]
        vector.withUnsafeBytes { memoryBytes.append(contentsOf: $0) }
      }
      try memoryBytes.write(to: directory.appendingPathComponent("\(language)-memories.f32"))
    }
  }
}
