import CEngramKernels
import Engram
import EngramEmbeddings
import EngramVectors
import Foundation

// BLAS: Accelerate on Apple platforms (untested: this project builds and tests on Linux only),
// OpenBLAS elsewhere.
#if canImport(Accelerate)
  import Accelerate
#else
  import CBLAS
#endif

/// `vectors`: single-query latency, batch throughput, recall, memory and snapshot open time
/// of `VectorIndex` on seeded unit vectors; `--dump DIR` writes the same vectors for peers.
/// `--data DIR` uses real sentence embeddings instead: all-MiniLM-L6-v2 vectors of the
/// LoCoMo turns in DIR as rows and of its questions as queries (`--n` and `--dim` then
/// come from the data). `--mode ann` measures the approximate tier (VectorsSuite+ANN.swift).
enum VectorsSuite {
  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    if arguments.string("mode", default: "f32") == "ann" { return try runApproximate(&arguments) }
    var n = try arguments.int("n", default: 100_000)
    var dimension = try arguments.int("dim", default: 384)
    let k = try arguments.int("k", default: 10)
    var queryCount = try arguments.int("queries", default: 500)
    let threads = try arguments.int("threads", default: 1)
    let mode = arguments.string("mode", default: "f32")
    let fraction = try arguments.double("filter", default: nil)
    let seed = UInt64(try arguments.int("seed", default: 42))
    let dump = arguments.optionalString("dump")
    let data = arguments.optionalString("data")
    try arguments.finish()
    guard n > 0, dimension > 0, k > 0, queryCount > 0, threads > 0 else {
      throw BenchError("--n, --dim, --k, --queries and --threads must be positive")
    }
    let precision: VectorPrecision
    switch mode {
    case "f32": precision = .float32
    case "int8": precision = .int8
    default: throw BenchError("--mode must be f32, int8 or ann, got '\(mode)'")
    }
    if let fraction, !(fraction > 0 && fraction <= 1) {
      throw BenchError("--filter expects a fraction in (0, 1]")
    }
    var batchCount = 1000

    let base: [Float]
    let queries: [Float]
    if let data {
      (base, queries, dimension) = try locomoEmbeddings(data, threads: threads)
      n = base.count / dimension
      let questions = queries.count / dimension
      queryCount = min(queryCount, questions)
      batchCount = min(batchCount, questions)
    } else {
      progress("vectors: generating \(n) x \(dimension) unit vectors (seed \(seed))")
      var random = SplitMix64(seed: seed)
      base = unitVectors(n, dimension, &random)
      queries = unitVectors(max(queryCount, batchCount), dimension, &random)
    }
    if let dump {
      try write(dump: dump, base: base, queries: queries, n: n, dimension: dimension, seed: seed)
    }

    // Every `stride`-th row is a summary, so a kind filter keeps `fraction` of the rows.
    let stride = fraction.map { max(1, Int((1 / $0).rounded())) } ?? Int.max
    let ids = (0..<n).map { Int64($0) }
    let metadata = (0..<n).map { row in
      VectorMetadata(
        kind: row % stride == 0 ? ItemKind.summary.code : ItemKind.message.code, session: Int64(row % 100),
        timestamp: Int64(row))
    }
    // The exact scans are what these modes measure: the approximate tier (served above its
    // threshold once its background build finishes) is off here; `--mode ann` measures it.
    let configuration = VectorIndex.Configuration(
      dimension: dimension, precision: precision, threads: threads,
      approximate: ApproximateConfiguration(enabled: false))
    var index: VectorIndex! = nil
    let buildSeconds = try Measure.seconds {
      index = try VectorIndex(configuration: configuration, ids: ids, metadata: metadata, vectors: base)
    }

    progress("vectors: measuring read bandwidth")
    let bandwidth = readBandwidth()

    let queryRows = (0..<queryCount).map { Array(queries[($0 * dimension)..<(($0 + 1) * dimension)]) }
    let filter = fraction.map { _ in VectorFilter(kinds: [ItemKind.summary.code]) }
    let scannedRows = fraction.map { Double(n) * $0 } ?? Double(n)
    let bytesPerRow = precision == .int8 && filter == nil ? Double(dimension + 4) : Double(dimension * 4)
    guard let floorReader = FloorReader(bytes: Int(scannedRows * bytesPerRow)) else {
      throw BenchError("out of memory for the floor read")
    }
    progress("vectors: \(queryCount) single queries (\(mode), threads \(threads)), each beside a floor read")
    let unfiltered = try latencies(index, queryRows, k: k, filter: nil, floor: floorReader)
    let filtered = try filter.map { try latencies(index, queryRows, k: k, filter: $0, floor: floorReader) }
    let main = filtered ?? unfiltered

    // Exact truth: unfiltered batches are always exact float32 (sgemm), whatever the mode.
    let truth = try index.search(batch: queryRows, k: k)
    var recallSum = 0.0
    for (query, expected) in zip(queryRows, truth) {
      let hits = try index.search(query, k: k)
      recallSum += Double(Set(hits.map(\.id)).intersection(expected.map(\.id)).count) / Double(expected.count)
    }

    progress("vectors: batch of \(batchCount) queries")
    let batchRows = (0..<batchCount).map { Array(queries[($0 * dimension)..<(($0 + 1) * dimension)]) }
    _ = try index.search(batch: Array(batchRows.prefix(32)), k: k)
    // Best of three: the host is shared, and a single second-long run can lose a tenth to a
    // neighbour. The peers script times faiss the same way.
    var batchSeconds = Double.infinity
    // With one thread the batch runs on the calling thread (BLAS held to one): its CPU time
    // is what a loaded host's waiting for a core does not move.
    var batchCPUSeconds = Double.infinity
    for _ in 0..<3 {
      let cpuStart = EmbedSuite.threadCPUSeconds()
      batchSeconds = min(batchSeconds, try Measure.seconds { _ = try index.search(batch: batchRows, k: k) })
      batchCPUSeconds = min(batchCPUSeconds, EmbedSuite.threadCPUSeconds() - cpuStart)
    }
    progress(String(format: "vectors: batch best of 3 %.3f s", batchSeconds))

    let sgemv =
      precision == .float32 && filter == nil ? sgemvLatency(base, queryRows, n: n, dimension: dimension) : nil

    progress("vectors: snapshot write and open")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("engram-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("vectors.snapshot")
    let writeSeconds = try Measure.seconds { try index.write(snapshotTo: file, token: 1) }
    var reopened: VectorIndex? = nil
    let openSeconds = try Measure.seconds {
      reopened = try VectorIndex.open(snapshot: file, expectedToken: 1, configuration: configuration)
    }
    guard reopened?.count == n else {
      throw BenchError("snapshot reopened with \(reopened?.count ?? 0) rows")
    }

    var report = BenchReport()
    report.set("n", n)
    report.set("dim", dimension)
    report.set("k", k)
    report.set("mode", mode)
    report.set("threads", threads)
    report.set("source", data == nil ? "seeded" : "locomo")
    if let fraction { report.set("filter", fraction) }
    report.set("p50_ms", Measure.percentile(main.queries, 0.5) * 1e3)
    report.set("p95_ms", Measure.percentile(main.queries, 0.95) * 1e3)
    report.set("p99_ms", Measure.percentile(main.queries, 0.99) * 1e3)
    report.set("min_ms", (main.queries.min() ?? .nan) * 1e3)
    // The floor read beside every query: the same bytes a scan reads, at the same moments.
    report.set("floor_p50_ms", Measure.percentile(main.floors, 0.5) * 1e3)
    report.set("floor_min_ms", (main.floors.min() ?? .nan) * 1e3)
    report.set("p50_over_floor", Measure.percentile(main.queries, 0.5) / Measure.percentile(main.floors, 0.5))
    report.set("paired_ratio_p50", Measure.percentile(zip(main.queries, main.floors).map { $0 / $1 }, 0.5))
    if filtered != nil {
      report.set("unfiltered_p50_ms", Measure.percentile(unfiltered.queries, 0.5) * 1e3)
      report.set(
        "filter_speedup", Measure.percentile(unfiltered.queries, 0.5) / Measure.percentile(main.queries, 0.5))
    }
    if let sgemv { report.set("sgemv_p50_ms", sgemv * 1e3) }
    report.set("batch_qps", Double(batchCount) / batchSeconds)
    if threads == 1 { report.set("batch_cpu_qps", Double(batchCount) / batchCPUSeconds) }
    report.set("recall_at_k", recallSum / Double(queryCount))
    report.set("build_s", buildSeconds)
    report.set("write_s", writeSeconds)
    report.set("open_s", openSeconds)
    report.set("index_bytes", index.memoryBytes)
    report.set("read_gb_s", bandwidth / 1e9)
    report.set("bandwidth_floor_ms", scannedRows * bytesPerRow / bandwidth * 1e3)
    return (report, "vectors: \(n) x \(dimension), k \(k), \(mode), \(threads) thread(s)")
  }

  /// MiniLM embeddings of every LoCoMo turn ("speaker: text") and question in `folder`:
  /// rows and queries, flat row-major, and their dimension.
  static func locomoEmbeddings(_ folder: String, threads: Int) throws -> (
    rows: [Float], queries: [Float], dimension: Int
  ) {
    let files = try FileManager.default.contentsOfDirectory(atPath: folder)
      .filter { $0.hasSuffix(".json") }.sorted().map { folder + "/" + $0 }
    guard !files.isEmpty else { throw BenchError("no LoCoMo .json files in \(folder)") }
    var turns: [String] = []
    var questions: [String] = []
    for file in files {
      let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
      let conversation = try ConversationFile.parse(bytes, path: file, defaultSession: "locomo")
      for turn in conversation.sessions.flatMap(\.turns) {
        turns.append(turn.speaker.map { "\($0): \(turn.content)" } ?? turn.content)
      }
      let root = try JSONSerialization.jsonObject(with: bytes) as? [String: Any]
      for item in root?["qa"] as? [[String: Any]] ?? [] {
        if let question = item["question"] as? String { questions.append(question) }
      }
    }
    let embedder = try BertEmbedder(locator: ModelLocator(), options: .init(threads: threads))
    progress("vectors: embedding \(turns.count) LoCoMo turns and \(questions.count) questions")
    func embed(_ texts: [String]) -> [Float] {
      stride(from: 0, to: texts.count, by: 32).flatMap { start in
        embedder.embedSynchronously(Array(texts[start..<min(texts.count, start + 32)])).joined()
      }
    }
    return (embed(turns), embed(questions), embedder.dimension)
  }

  /// `count` seeded Gaussian vectors scaled to unit length, flat row-major.
  static func unitVectors(_ count: Int, _ dimension: Int, _ random: inout SplitMix64) -> [Float] {
    var out = [Float](repeating: 0, count: count * dimension)
    for row in 0..<count {
      var norm: Float = 0
      for j in 0..<dimension {
        let x = random.nextGaussian()
        out[row * dimension + j] = x
        norm += x * x
      }
      let inverse = 1 / norm.squareRoot()
      for j in 0..<dimension { out[row * dimension + j] *= inverse }
    }
    return out
  }

  /// Seconds per query, each followed by a timed plain read of the bytes a scan reads, so the
  /// queries and their floor share the moments of a shared host's load.
  static func latencies(
    _ index: VectorIndex, _ queries: [[Float]], k: Int, filter: VectorFilter?, floor: FloorReader
  ) throws -> (queries: [Double], floors: [Double]) {
    for query in queries.prefix(10) {
      _ = try index.search(query, k: k, filter: filter)
      _ = floor.read()
    }
    var times: [Double] = []
    var floors: [Double] = []
    for query in queries {
      times.append(try Measure.seconds { _ = try index.search(query, k: k, filter: filter) })
      floors.append(floor.read())
    }
    return (times, floors)
  }

  /// p50 of a plain `cblas_sgemv` over the same rows (scores only, no selection), for comparison.
  static func sgemvLatency(_ base: [Float], _ queries: [[Float]], n: Int, dimension: Int) -> Double {
    #if !canImport(Accelerate)
      openblas_set_num_threads(1)
    #endif
    var scores = [Float](repeating: 0, count: n)
    var samples: [Double] = []
    base.withUnsafeBufferPointer { matrix in
      scores.withUnsafeMutableBufferPointer { out in
        for query in queries.prefix(200) {
          samples.append(
            Measure.seconds {
              cblas_sgemv(
                CblasRowMajor, CblasNoTrans, Int32(n), Int32(dimension), 1, matrix.baseAddress,
                Int32(dimension),
                query, 1, 0, out.baseAddress, 1)
            })
        }
      }
    }
    return Measure.percentile(Array(samples.dropFirst(5)), 0.5)
  }

  /// Single-thread sequential read bandwidth in bytes/s: best of several plain reads of 512 MiB
  /// with the widest loads of the kernels' level, from memory allocated as the index's rows are
  /// (huge pages), so the floor is what a scan of the rows would cost with no arithmetic.
  static func readBandwidth() -> Double {
    let bytes = 512 << 20
    guard let buffer = engram_alloc_rows(bytes) else { return .nan }
    defer { engram_free_rows(buffer) }
    memset(buffer, 1, bytes)
    var best = Double.infinity
    var sink: UInt64 = 0
    for _ in 0..<5 {
      best = min(best, Measure.seconds { sink &+= engram_read_bytes(buffer, bytes) })
    }
    if sink == 42 { progress("") }  // keeps the sum observable
    return Double(bytes) / best
  }

  /// Writes base.f32 and queries.f32 (little-endian float32, row-major) and meta.json.
  static func write(dump: String, base: [Float], queries: [Float], n: Int, dimension: Int, seed: UInt64)
    throws
  {
    let directory = URL(fileURLWithPath: dump)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try base.withUnsafeBytes { try Data($0).write(to: directory.appendingPathComponent("base.f32")) }
    try queries.withUnsafeBytes { try Data($0).write(to: directory.appendingPathComponent("queries.f32")) }
    let meta = "{\"n\":\(n),\"dim\":\(dimension),\"queries\":\(queries.count / dimension),\"seed\":\(seed)}\n"
    try Data(meta.utf8).write(to: directory.appendingPathComponent("meta.json"))
    progress("vectors: dumped to \(directory.path)")
  }
}

/// A plain read of `bytes` of row-like memory (huge pages, as the index allocates its rows)
/// with the kernels' widest loads: the floor of a scan of that many bytes.
final class FloorReader {
  let buffer: UnsafeMutableRawPointer
  let bytes: Int
  var sink: UInt64 = 0

  init?(bytes: Int) {
    guard bytes > 0, let buffer = engram_alloc_rows(bytes) else { return nil }
    memset(buffer, 1, bytes)
    self.buffer = buffer
    self.bytes = bytes
  }

  deinit { engram_free_rows(buffer) }

  /// Seconds for one read of the whole buffer.
  func read() -> Double {
    Measure.seconds { sink &+= engram_read_bytes(buffer, bytes) }
  }
}
