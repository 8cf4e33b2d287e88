import EngramEmbeddings
import Foundation

// BLAS: Accelerate on Apple platforms (untested: this project builds and tests on Linux only),
// OpenBLAS elsewhere.
#if canImport(Accelerate)
  import Accelerate
#else
  import CBLAS
#endif

/// `engram-bench embed [--model minilm|e5-small] [--precision f32|int8] [--threads N] [--data DIR]
/// [--limit M] [--vectors PREFIX] [--json]`: the model's throughput at batch 32 and batch 1, single-query latency,
/// model load time and peak memory. e5-small embeds the texts as passages and the queries as
/// queries.
///
/// Without `--precision` both precisions run in the same process, float32 first: the plain
/// keys are the int8 path's (the default), the `f32_` keys the float path's, and
/// `int8_batch32_speedup` / `int8_query_p50_ratio` compare them. With `--precision` only that
/// one is timed. For int8, `min_cosine_to_f32` and `mean_cosine_to_f32` compare every text's
/// vector with the float path's (computed untimed when float was not timed).
///
/// Single queries and the batch-32 pass are also timed in the calling thread's CPU time
/// (`query_cpu_p50_ms`, `batch32_cpu_per_s`): with
/// one thread the whole pass runs on the calling thread, and on a shared host, where wall time
/// includes waiting for a core, CPU time compares the two sides more steadily.
///
/// Texts are the LoCoMo turns in DIR (default `../shared/data/locomo-dev` when present),
/// else a built-in set of varied sentences. `Benchmarks/peers/embed_peers.py` runs
/// sentence-transformers and ONNX Runtime on the same texts with the same thread count.
enum EmbedSuite {
  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let threads = try arguments.int("threads", default: 1)
    let dataOption = arguments.optionalString("data")
    let limit = try arguments.int("limit", default: 0)
    let quick = arguments.flag("quick")
    let modelName = arguments.string("model", default: "minilm")
    let only = arguments.optionalString("precision") == nil ? nil : try benchPrecision(&arguments)
    let vectorsPrefix = arguments.optionalString("vectors")
    try arguments.finish()
    guard threads >= 1 else { throw BenchError("--threads must be at least 1") }
    guard limit >= 0 else { throw BenchError("--limit must not be negative") }

    let (loaded, source) = try texts(dataOption)
    var texts = loaded
    if limit > 0 { texts = Array(texts.prefix(limit)) }
    if quick { texts = Array(texts.prefix(256)) }
    guard !texts.isEmpty else { throw BenchError("no texts to embed in \(source)") }

    var report = BenchReport()
    var float: Figures?
    var measured: Figures?
    var modelID = modelName
    if only != .int8 {
      let figures = try measure(
        modelName, .float32, threads: threads, texts: texts, quick: quick, source: source)
      modelID = figures.modelID
      float = figures
    }
    if only == .float32, let float {
      float.write(into: &report, prefix: "")
    } else {
      let quantized = try measure(
        modelName, .int8, threads: threads, texts: texts, quick: quick, source: source)
      measured = quantized
      modelID = quantized.modelID
      quantized.write(into: &report, prefix: "")
      let reference: [[Float]]
      if let float {
        float.write(into: &report, prefix: "f32_")
        report.set("int8_batch32_speedup", float.batch32Seconds / quantized.batch32Seconds)
        report.set("int8_query_p50_ratio", quantized.queryP50 / float.queryP50)
        reference = float.vectors
      } else {
        progress("embed: the float path's vectors, untimed, for min_cosine_to_f32")
        let model = try BenchModel(modelName, threads: threads, precision: .float32)
        reference = batched(texts, model.embedSynchronously)
      }
      let cosines = zip(reference, quantized.vectors).map { pair in
        zip(pair.0, pair.1).reduce(Float(0)) { $0 + $1.0 * $1.1 }
      }
      report.set("min_cosine_to_f32", Double(cosines.min() ?? 0))
      report.set("mean_cosine_to_f32", Double(cosines.reduce(0, +)) / Double(cosines.count))
    }
    if let vectorsPrefix {
      for figures in [float, measured].compactMap({ $0 }) {
        try write(figures.vectors, to: "\(vectorsPrefix)-\(figures.precision.rawValue).f32")
      }
    }
    report.set("model", modelID)
    report.set("threads", threads)
    report.set("texts", texts.count)
    report.set("source", source)
    if let peak = Measure.peakResidentBytes() { report.set("peak_rss_mb", Double(peak) / 1_048_576) }
    let label = only.map { " at \($0.rawValue)" } ?? " at f32 and int8"
    return (report, "embed: \(modelID) on \(threads) thread(s)\(label)")
  }

  /// What one precision measured, and the vectors of the batch-32 pass.
  struct Figures {
    let modelID: String
    let precision: EmbeddingPrecision
    let threads: Int
    let meanTokens: Double
    let batch32Seconds: Double
    let batch32CPUSeconds: Double
    let texts: Int
    let batch1Texts: Int
    let batch1Seconds: Double
    let queryP50: Double
    let queryP95: Double
    let queryCPUP50: Double
    let loadSeconds: Double
    let firstQueryMilliseconds: Double
    let vectors: [[Float]]

    func write(into report: inout BenchReport, prefix: String) {
      if prefix.isEmpty {
        report.set("precision", precision.rawValue)
        report.set("mean_tokens", meanTokens)
      }
      report.set(prefix + "batch32_per_s", Double(texts) / batch32Seconds)
      if threads == 1 { report.set(prefix + "batch32_cpu_per_s", Double(texts) / batch32CPUSeconds) }
      report.set(prefix + "batch1_texts", batch1Texts)
      report.set(prefix + "batch1_per_s", Double(batch1Texts) / batch1Seconds)
      report.set(prefix + "query_p50_ms", queryP50)
      report.set(prefix + "query_p95_ms", queryP95)
      if threads == 1 { report.set(prefix + "query_cpu_p50_ms", queryCPUP50) }
      report.set(prefix + "load_s", loadSeconds)
      report.set(prefix + "first_query_ms", firstQueryMilliseconds)
    }
  }

  /// Writes `vectors` as little-endian float32, one row after another (`--vectors PREFIX`:
  /// `PREFIX-f32.f32`, `PREFIX-int8.f32`, read by `Benchmarks/peers/embed_peers.py`).
  static func write(_ vectors: [[Float]], to path: String) throws {
    var data = Data(capacity: vectors.count * (vectors.first?.count ?? 0) * 4)
    for vector in vectors {
      for value in vector {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) }
      }
    }
    do {
      try data.write(to: URL(fileURLWithPath: path))
    } catch {
      throw BenchError("cannot write the vectors to \(path): \(error.localizedDescription)")
    }
  }

  /// Embeds `texts` in batches of 32, in order.
  static func batched(_ texts: [String], _ embed: ([String]) -> [[Float]]) -> [[Float]] {
    var vectors: [[Float]] = []
    vectors.reserveCapacity(texts.count)
    var start = 0
    while start < texts.count {
      let end = min(start + 32, texts.count)
      vectors += embed(Array(texts[start..<end]))
      start = end
    }
    return vectors
  }

  /// Loads the model at `precision` and times it on `texts`.
  static func measure(
    _ modelName: String, _ precision: EmbeddingPrecision, threads: Int, texts: [String], quick: Bool,
    source: String
  ) throws -> Figures {
    var model: BenchModel?
    let load = try Measure.seconds {
      model = try BenchModel(modelName, threads: threads, precision: precision)
    }
    guard let embedder = model else { throw BenchError("model did not load") }
    let tokenCounts = texts.map(embedder.tokenCount)

    // Warm-up: fault the mapped weights in and let OpenBLAS start its threads.
    let first = Measure.seconds { _ = embedder.embedSynchronously(["warm-up sentence for the first pass"]) }
    _ = embedder.embedSynchronously(Array(texts.prefix(32)))

    progress(
      "embed: \(texts.count) texts from \(source), batch 32, \(threads) thread(s), \(precision.rawValue)")
    var vectors: [[Float]] = []
    let batch32CPUStart = threadCPUSeconds()
    let batch32 = Measure.seconds { vectors = batched(texts, embedder.embedSynchronously) }
    let batch32CPU = threadCPUSeconds() - batch32CPUStart

    let singles = Array(texts.prefix(quick ? 64 : 256))
    progress("embed: \(singles.count) texts one at a time")
    let batch1 = Measure.seconds {
      for text in singles { _ = embedder.embedSynchronously([text]) }
    }

    let queries = [
      "When did Caroline go to the LGBTQ support group?",
      "What does Melanie like to paint?",
      "Where did they go camping?",
      "remind me to call mom",
    ]
    var latencies: [Double] = []
    var cpuLatencies: [Double] = []
    for round in 0..<(quick ? 50 : 200) {
      let query = queries[round % queries.count]
      let cpuStart = threadCPUSeconds()
      latencies.append(Measure.seconds { _ = embedder.embedQuerySynchronously(query) } * 1000)
      cpuLatencies.append((threadCPUSeconds() - cpuStart) * 1000)
    }
    return Figures(
      modelID: embedder.modelID, precision: precision, threads: threads,
      meanTokens: Double(tokenCounts.reduce(0, +)) / Double(tokenCounts.count), batch32Seconds: batch32,
      batch32CPUSeconds: batch32CPU, texts: texts.count, batch1Texts: singles.count, batch1Seconds: batch1,
      queryP50: Measure.percentile(latencies, 0.5), queryP95: Measure.percentile(latencies, 0.95),
      queryCPUP50: Measure.percentile(cpuLatencies, 0.5), loadSeconds: load,
      firstQueryMilliseconds: first * 1000,
      vectors: vectors)
  }

  /// The model under measurement, embedding on the calling thread.
  struct BenchModel {
    let modelID: String
    let embedSynchronously: ([String]) -> [[Float]]
    let embedQuerySynchronously: (String) -> [Float]
    let tokenCount: (String) -> Int

    init(_ name: String, threads: Int, precision: EmbeddingPrecision) throws {
      switch name {
      case "minilm":
        let model = try BertEmbedder(
          locator: ModelLocator(), options: .init(threads: threads, precision: precision))
        modelID = model.modelID
        embedSynchronously = { model.embedSynchronously($0) }
        embedQuerySynchronously = { model.embedSynchronously([$0])[0] }
        tokenCount = { model.tokenizer.encode($0).count }
      case "e5-small":
        let model = try E5Embedder(options: .init(threads: threads, precision: precision))
        modelID = model.modelID
        embedSynchronously = { model.embedSynchronously($0, as: .passage) }
        embedQuerySynchronously = { model.embedSynchronously([$0], as: .query)[0] }
        tokenCount = { model.pieceIDs($0, as: .passage).count + 2 }
      default:
        throw BenchError("--model must be minilm or e5-small, not \(name)")
      }
    }
  }

  /// CPU time of the calling thread, in seconds.
  static func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
  }

  /// The texts to embed and where they came from.
  static func texts(_ option: String?) throws -> ([String], String) {
    let directory = option ?? "../shared/data/locomo-dev"
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
    else {
      if let option { throw BenchError("--data \(option) is not a folder") }
      return (builtInSentences, "built-in sentences")
    }
    let files = try FileManager.default.contentsOfDirectory(atPath: directory)
      .filter { $0.hasSuffix(".json") }.sorted()
    var texts: [String] = []
    for file in files {
      let url = URL(fileURLWithPath: directory).appendingPathComponent(file)
      guard let root = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] else {
        throw BenchError("\(url.path) is not a JSON object")
      }
      let sessions = root.keys.compactMap { key -> Int? in
        guard key.hasPrefix("session_"), root[key] is [Any] else { return nil }
        return Int(key.dropFirst("session_".count))
      }.sorted()
      for session in sessions {
        for case let turn as [String: Any] in root["session_\(session)"] as? [Any] ?? [] {
          if let text = turn["text"] as? String, !text.isEmpty { texts.append(text) }
        }
      }
    }
    guard !texts.isEmpty else { throw BenchError("no session turns in \(directory)") }
    return (texts, directory)
  }

  /// About 200 sentences of varied length and topic, for runs without the LoCoMo data.
  static let builtInSentences: [String] = {
    let openings = [
      "I finally finished the painting I started last spring",
      "Can you remind me to call the dentist tomorrow morning?",
      "We went camping near the lake with the kids last weekend",
      "The meeting about the quarterly budget moved to Thursday",
      "My sister just adopted a rescue dog named Biscuit",
      "I've been reading a book about the history of jazz",
      "The new job is stressful but I'm learning a lot",
      "Did you ever try that Thai place downtown?",
      "Running a half marathon was harder than I expected",
      "I'm thinking about volunteering at the animal shelter",
      "Our flight to Lisbon was delayed by three hours",
      "She told me the support group really helped her",
      "Please add oat milk and bananas to the shopping list",
      "The garden is full of tomatoes this year",
      "I started taking guitar lessons on Tuesdays",
      "What time does the pharmacy close on Sundays?",
      "We're planning a surprise party for Dad's sixtieth birthday",
      "The kids made pottery bowls at summer camp",
      "I can't decide between studying counseling or social work",
      "Remember that I'm allergic to peanuts",
    ]
    let endings = [
      "",
      " and it felt great.",
      ", although honestly I was nervous the whole time.",
      " — let me know what you think when you get a chance.",
      ". It reminded me of the trip we took together years ago, when everything seemed simpler"
        + " and we had all the time in the world to wander around without a plan.",
      "!",
      " because a friend recommended it to me after our last conversation about it.",
      ". Anyway, how was your week? Anything new with the family or at work?",
      " (I wrote it down in my notebook so I wouldn't forget).",
      ", which is funny because last year I said I would never do that again.",
    ]
    return openings.indices.flatMap { opening in
      endings.indices.map { ending in openings[opening] + endings[(ending + opening) % endings.count] }
    }
  }()
}
