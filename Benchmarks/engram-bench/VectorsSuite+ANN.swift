import Engram
import EngramVectors
import Foundation

/// `vectors --mode ann`: the approximate tier on `--base FILE.npy` rows and `--query FILE.npy`
/// queries (float32, 2-D, row-major; ids are row numbers), or on seeded unit vectors.
///
/// Builds the lists once (timed: `build_s`, clustering plus calibration at the first target),
/// then for each target recall in `--sweep=LIST` (default `--target`; the `=` is needed) re-calibrates the probe
/// count and times single queries, one thread: `recall_at_k` against the exact top-k
/// (`--truth FILE.npy` of int64 ids, or the index's own exact scan), `p50_ms`, `p95_ms`,
/// `exact_fraction` (hits proven exact). `--filter FRACTION` adds a kind filter admitting that
/// fraction of the rows: `filtered_*` keys, including `filtered_full_k` (queries with k hits).
extension VectorsSuite {
  static func runApproximate(_ arguments: inout BenchArguments) throws -> (BenchReport, String) {
    let k = try arguments.int("k", default: 10)
    var queryCount = try arguments.int("queries", default: 1000)
    let threads = try arguments.int("threads", default: 1)
    let buildThreads = try arguments.int("build-threads", default: 1)
    let target = try arguments.double("target", default: 0.95) ?? 0.95
    let sweep = arguments.optionalString("sweep")
    let lists = try arguments.int("lists", default: 0)
    let fraction = try arguments.double("filter", default: nil)
    let basePath = arguments.optionalString("base")
    let queryPath = arguments.optionalString("query")
    let truthPath = arguments.optionalString("truth")
    var n = try arguments.int("n", default: 100_000)
    var dimension = try arguments.int("dim", default: 384)
    let seed = UInt64(try arguments.int("seed", default: 42))
    try arguments.finish()
    let targets =
      try
      (sweep?.split(separator: ",").map { part -> Double in
        guard let value = Double(part), value > 0, value <= 1 else {
          throw BenchError("--sweep: bad recall '\(part)'")
        }
        return value
      }) ?? [target]
    guard k > 0, queryCount > 0, threads > 0, buildThreads > 0, !targets.isEmpty else {
      throw BenchError("--k, --queries, --threads and --build-threads must be positive")
    }
    if let fraction, !(fraction > 0 && fraction <= 1) {
      throw BenchError("--filter expects a fraction in (0, 1]")
    }

    var baseArray: NPYMatrix
    var queryArray: NPYMatrix
    if let basePath, let queryPath {
      baseArray = try NPYMatrix(path: basePath)
      queryArray = try NPYMatrix(path: queryPath)
      guard baseArray.columns == queryArray.columns else {
        throw BenchError("--base has \(baseArray.columns) columns, --query \(queryArray.columns)")
      }
      n = baseArray.rows
      dimension = baseArray.columns
    } else if basePath != nil || queryPath != nil {
      throw BenchError("--base and --query go together")
    } else {
      var random = SplitMix64(seed: seed)
      baseArray = NPYMatrix(values: unitVectors(n, dimension, &random), columns: dimension)
      queryArray = NPYMatrix(values: unitVectors(queryCount, dimension, &random), columns: dimension)
    }
    queryCount = min(queryCount, queryArray.rows)
    let stride = fraction.map { max(1, Int((1 / $0).rounded())) } ?? Int.max
    // float32 rows: the exact tier is the float32 scan, the approximate tier holds its own
    // int8 codes. Lists are built once all rows are in (`.manual`), timed alone.
    let configuration = VectorIndex.Configuration(
      dimension: dimension, threads: threads, initialCapacity: n,
      approximate: ApproximateConfiguration(
        threshold: 1, targetRecall: targets[0], lists: lists, build: .manual, buildThreads: buildThreads))
    let index = try VectorIndex(configuration: configuration)
    progress("vectors ann: loading \(n) x \(dimension)")
    let chunk = 65_536
    var start = 0
    while start < n {
      let count = min(chunk, n - start)
      let ids = (start..<(start + count)).map { Int64($0) }
      let metadata = (start..<(start + count)).map { row in
        VectorMetadata(
          kind: row % stride == 0 ? 2 : 0, session: Int64(row % 100), timestamp: Int64(row))
      }
      try index.add(ids: ids, metadata: metadata, vectors: baseArray.slice(rows: start..<(start + count)))
      start += count
    }
    baseArray = NPYMatrix(values: [], columns: dimension)  // frees the loaded copy
    let exactBytes = index.memoryBytes

    progress("vectors ann: building the lists (target recall \(targets[0]), \(buildThreads) thread(s))")
    let loadBeforeBuild = loadAverage()
    let annIndex = index
    let buildSeconds = Measure.seconds { annIndex.rebuildApproximateIndex() }
    guard let built = annIndex.approximateStatus else { throw BenchError("no lists were built") }
    progress(String(format: "vectors ann: %d lists, built in %.2f s", built.lists, buildSeconds))

    let queries = (0..<queryCount).map { queryArray.row($0) }
    let truth: [[Int64]]
    if let truthPath {
      let matrix = try NPYMatrix(path: truthPath, integers: true)
      guard matrix.rows >= queryCount, matrix.columns >= k else { throw BenchError("--truth is too small") }
      truth = (0..<queryCount).map { q in (0..<k).map { Int64(matrix.integers[q * matrix.columns + $0]) } }
    } else {
      progress("vectors ann: exact truth")
      truth = try annIndex.search(batch: queries, k: k).map { $0.map(\.id) }
    }

    var curve: [BenchReport.Value] = []
    var mainPoint = BenchReport()
    for (position, recallTarget) in targets.enumerated() {
      let status = position == 0 ? built : try annIndex.calibrateApproximate(targetRecall: recallTarget)!
      let (times, results) = try timed(annIndex, queries, k: k, filter: nil)
      var point = BenchReport()
      point.set("target_recall", recallTarget)
      point.set("probes", status.probes)
      point.set("calibrated_recall", status.calibratedRecall)
      point.set("recall_at_k", recall(results, truth, k: k))
      point.set("p50_ms", Measure.percentile(times, 0.5) * 1e3)
      point.set("p95_ms", Measure.percentile(times, 0.95) * 1e3)
      point.set("exact_fraction", Double(results.filter(\.isExact).count) / Double(results.count))
      progress(
        "vectors ann: target \(recallTarget) probes \(status.probes) "
          + "recall \(point["recall_at_k"]!.text) p50 \(point["p50_ms"]!.text) ms")
      curve.append(.object(point))
      if position == 0 { mainPoint = point }
    }

    var report = BenchReport()
    report.set("n", n)
    report.set("dim", dimension)
    report.set("k", k)
    report.set("mode", "ann")
    report.set("threads", threads)
    report.set(
      "source",
      basePath.map { URL(fileURLWithPath: $0).deletingLastPathComponent().lastPathComponent } ?? "seeded")
    report.set("lists", built.lists)
    report.set("build_s", buildSeconds)
    report.set("build_threads", buildThreads)
    if let loadBeforeBuild { report.set("load_average_at_build", loadBeforeBuild) }
    for key in [
      "target_recall", "probes", "calibrated_recall", "recall_at_k", "p50_ms", "p95_ms", "exact_fraction",
    ] {
      report[key] = mainPoint[key]
    }
    report.set("index_bytes", annIndex.memoryBytes)
    report.set("ann_bytes", built.bytes)
    report.set("exact_bytes", exactBytes)
    report.set("int8_row_bytes", n * (dimension + 8))
    report.set("ann_to_int8_rows", Double(built.bytes) / Double(n * (dimension + 8)))

    if fraction != nil {
      // Filtered: back at the first target; truth from the exact filtered scan.
      if targets.count > 1 { try annIndex.calibrateApproximate(targetRecall: targets[0]) }
      let filter = VectorFilter(kinds: [2])
      // The exact filtered scan (float32 rows of every admitted row) gives the truth, and is
      // timed (`filtered_exact_p50_ms`): the same queries forced exact, in the same process.
      var filteredTruth: [[Int64]] = []
      let exactTimes = try queries.map { query in
        try Measure.seconds {
          filteredTruth.append(try annIndex.search(query, k: k, filter: filter, exact: true).hits.map(\.id))
        }
      }
      let (times, results) = try timed(annIndex, queries, k: k, filter: filter)
      let expected = min(k, (n + stride - 1) / stride)
      report.set("filter", fraction!)
      report.set("filtered_recall_at_k", recall(results, filteredTruth, k: k))
      report.set("filtered_p50_ms", Measure.percentile(times, 0.5) * 1e3)
      report.set("filtered_p95_ms", Measure.percentile(times, 0.95) * 1e3)
      report.set("filtered_exact_p50_ms", Measure.percentile(exactTimes, 0.5) * 1e3)
      report.set(
        "filtered_full_k", Double(results.filter { $0.hits.count == expected }.count) / Double(results.count))
      report.set("filtered_exact_fraction", Double(results.filter(\.isExact).count) / Double(results.count))
    }
    report["curve"] = .array(curve)
    return (report, "vectors ann: \(n) x \(dimension), k \(k), \(threads) thread(s)")
  }

  static func timed(_ index: VectorIndex, _ queries: [[Float]], k: Int, filter: VectorFilter?) throws -> (
    [Double], [VectorSearchResult]
  ) {
    for query in queries.prefix(10) { _ = try index.search(query, k: k, filter: filter, exact: false) }
    var results: [VectorSearchResult] = []
    results.reserveCapacity(queries.count)
    let times = try queries.map { query in
      try Measure.seconds { results.append(try index.search(query, k: k, filter: filter, exact: false)) }
    }
    return (times, results)
  }

  /// The 1-minute load average (Linux), to state beside a timing taken on a shared host.
  static func loadAverage() -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
      let first = text.split(separator: " ").first
    else { return nil }
    return Double(first)
  }

  static func recall(_ results: [VectorSearchResult], _ truth: [[Int64]], k: Int) -> Double {
    var sum = 0.0
    for (result, expected) in zip(results, truth) where !expected.isEmpty {
      sum +=
        Double(Set(result.hits.prefix(k).map(\.id)).intersection(expected.prefix(k)).count)
        / Double(min(k, expected.count))
    }
    return sum / Double(max(1, results.count))
  }
}

/// A 2-D little-endian `.npy` array (float32, or int64 with `integers`), read whole.
struct NPYMatrix {
  var values: [Float]
  var integers: [Int64] = []
  var rows: Int
  var columns: Int

  init(values: [Float], columns: Int) {
    self.values = values
    self.columns = columns
    rows = columns > 0 ? values.count / columns : 0
  }

  init(path: String, integers wantIntegers: Bool = false) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    guard data.count >= 10, data.prefix(6) == Data([0x93] + Array("NUMPY".utf8)) else {
      throw BenchError("\(path): not a .npy file")
    }
    let major = data[6]
    let headerLength: Int
    let headerStart: Int
    if major == 1 {
      headerLength = Int(data[8]) | Int(data[9]) << 8
      headerStart = 10
    } else {
      headerLength = Int(data[8]) | Int(data[9]) << 8 | Int(data[10]) << 16 | Int(data[11]) << 24
      headerStart = 12
    }
    guard let header = String(data: data[headerStart..<(headerStart + headerLength)], encoding: .ascii) else {
      throw BenchError("\(path): unreadable .npy header")
    }
    let descr = wantIntegers ? "'<i8'" : "'<f4'"
    guard header.contains("'descr': \(descr)"), header.contains("'fortran_order': False"),
      let open = header.firstIndex(of: "("), let close = header.firstIndex(of: ")")
    else { throw BenchError("\(path): expected a C-order \(descr) array, header \(header)") }
    let shape = header[header.index(after: open)..<close].split(separator: ",").compactMap {
      Int($0.trimmingCharacters(in: .whitespaces))
    }
    guard shape.count == 2 else { throw BenchError("\(path): expected 2-D, shape \(shape)") }
    rows = shape[0]
    columns = shape[1]
    let offset = headerStart + headerLength
    let count = rows * columns
    let width = wantIntegers ? 8 : 4
    guard data.count == offset + count * width else {
      throw BenchError("\(path): length disagrees with shape")
    }
    if wantIntegers {
      integers = [Int64](repeating: 0, count: count)
      values = []
      integers.withUnsafeMutableBytes { target in
        data.withUnsafeBytes { source in
          target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset...]))
        }
      }
    } else {
      values = [Float](repeating: 0, count: count)
      values.withUnsafeMutableBytes { target in
        data.withUnsafeBytes { source in
          target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset...]))
        }
      }
    }
  }

  func row(_ index: Int) -> [Float] { Array(values[(index * columns)..<((index + 1) * columns)]) }

  func slice(rows range: Range<Int>) -> [Float] {
    Array(values[(range.lowerBound * columns)..<(range.upperBound * columns)])
  }
}
