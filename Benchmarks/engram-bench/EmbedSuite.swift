import EngramEmbeddings
import Foundation

// BLAS: Accelerate on Apple platforms (untested: this project builds and tests on Linux only),
// OpenBLAS elsewhere.
#if canImport(Accelerate)
  import Accelerate
#else
  import CBLAS
#endif

/// `engram-bench embed [--model minilm|e5-small] [--threads N] [--data DIR] [--limit M] [--json]`:
/// the model's throughput at batch 32 and batch 1, single-query latency, model load time and
/// peak memory. e5-small embeds the texts as passages and the queries as queries.
///
/// Single queries and the batch-32 pass are also timed in the calling thread's CPU time
/// (`query_cpu_p50_ms`, `batch32_cpu_per_s`): with
/// one thread the whole pass runs on the calling thread, and on a shared host, where wall time
/// includes waiting for a core, CPU time compares the two sides more steadily.
///
/// Texts are the LoCoMo turns in DIR (default `../shared/data/locomo-dev` when present),
/// else a built-in set of varied sentences. `Benchmarks/peers/embed_peers.py` runs
/// sentence-transformers on the same texts with the same thread count.
enum EmbedSuite {
  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let threads = try arguments.int("threads", default: 1)
    let dataOption = arguments.optionalString("data")
    let limit = try arguments.int("limit", default: 0)
    let quick = arguments.flag("quick")
    let modelName = arguments.string("model", default: "minilm")
    try arguments.finish()
    guard threads >= 1 else { throw BenchError("--threads must be at least 1") }
    guard limit >= 0 else { throw BenchError("--limit must not be negative") }

    let (loaded, source) = try texts(dataOption)
    var texts = loaded
    if limit > 0 { texts = Array(texts.prefix(limit)) }
    if quick { texts = Array(texts.prefix(256)) }
    guard !texts.isEmpty else { throw BenchError("no texts to embed in \(source)") }
    var model: BenchModel?
    let load = try Measure.seconds { model = try BenchModel(modelName, threads: threads) }
    guard let embedder = model else { throw BenchError("model did not load") }
    let tokenCounts = texts.map(embedder.tokenCount)

    // Warm-up: fault the mapped weights in and let OpenBLAS start its threads.
    let first = Measure.seconds { _ = embedder.embedSynchronously(["warm-up sentence for the first pass"]) }
    _ = embedder.embedSynchronously(Array(texts.prefix(32)))

    progress("embed: \(texts.count) texts from \(source), batch 32, \(threads) thread(s)")
    let batch32CPUStart = threadCPUSeconds()
    let batch32 = Measure.seconds {
      var start = 0
      while start < texts.count {
        let end = min(start + 32, texts.count)
        _ = embedder.embedSynchronously(Array(texts[start..<end]))
        start = end
      }
    }
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

    var report = BenchReport()
    report.set("model", embedder.modelID)
    report.set("threads", threads)
    report.set("texts", texts.count)
    report.set("source", source)
    report.set("mean_tokens", Double(tokenCounts.reduce(0, +)) / Double(tokenCounts.count))
    report.set("batch32_per_s", Double(texts.count) / batch32)
    if threads == 1 { report.set("batch32_cpu_per_s", Double(texts.count) / batch32CPU) }
    report.set("batch1_texts", singles.count)
    report.set("batch1_per_s", Double(singles.count) / batch1)
    report.set("query_p50_ms", Measure.percentile(latencies, 0.5))
    report.set("query_p95_ms", Measure.percentile(latencies, 0.95))
    if threads == 1 { report.set("query_cpu_p50_ms", Measure.percentile(cpuLatencies, 0.5)) }
    report.set("load_s", load)
    report.set("first_query_ms", first * 1000)
    if let peak = Measure.peakResidentBytes() { report.set("peak_rss_mb", Double(peak) / 1_048_576) }
    return (report, "embed: \(embedder.modelID) on \(threads) thread(s)")
  }

  /// The model under measurement, embedding on the calling thread.
  struct BenchModel {
    let modelID: String
    let embedSynchronously: ([String]) -> [[Float]]
    let embedQuerySynchronously: (String) -> [Float]
    let tokenCount: (String) -> Int

    init(_ name: String, threads: Int) throws {
      switch name {
      case "minilm":
        let model = try BertEmbedder(locator: ModelLocator(), options: .init(threads: threads))
        modelID = model.modelID
        embedSynchronously = { model.embedSynchronously($0) }
        embedQuerySynchronously = { model.embedSynchronously([$0])[0] }
        tokenCount = { model.tokenizer.encode($0).count }
      case "e5-small":
        let model = try E5Embedder(options: .init(threads: threads))
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
