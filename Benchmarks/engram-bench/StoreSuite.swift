import Engram
import EngramCore
import EngramStore
import Foundation

/// `engram-bench store [--n 100000] [--batch 5000] [--queries 500] [--api batch|single] [--source-keys]
/// [--without NAME,...] [--dump FILE] [--json]`
///
/// Inserts `n` generated ~200-byte messages (English-like words, one in ten with a CJK
/// phrase) in batched transactions with the FTS triggers on, through
/// `Connection.insert(contentsOf:)` (one call per batch; `--api batch`, the default) or
/// `Connection.insert(_:)` (one call per message; `--api single`),
/// then times `searchText` for 1-3 word queries and the re-open of the finished database.
/// `insert_cpu_s` is the inserting thread's CPU time (user + system) for the same work as
/// `insert_s`: steadier than wall time when other processes share the cores.
/// `--source-keys` gives every message a source key (as ingest does: the unique
/// `messages_source_key` index then holds every row); `--without` drops the named indexes or
/// triggers before inserting (what each costs per row: `insert_cpu_us_per_row` with and
/// without it). `fts_text_us_per_row` is the stemmed index text alone (`FTSText.indexText`
/// of every message, with its day), on the same thread.
/// `--dump FILE` writes the inserted messages as JSON lines (`role`, `content`, `created_at`
/// in milliseconds) after the timed part, for `Benchmarks/peers/store_peers.py`, which
/// inserts the same rows with Python's sqlite3 + FTS5.
enum StoreSuite {
  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let n = try arguments.int("n", default: 100_000)
    let batch = try arguments.int("batch", default: 5_000)
    let queryCount = try arguments.int("queries", default: 500)
    let api = arguments.string("api", default: "batch")
    let dump = arguments.optionalString("dump")
    let sourceKeys = arguments.flag("source-keys")
    let without = arguments.optionalString("without")?.split(separator: ",").map(String.init) ?? []
    try arguments.finish()
    guard n > 0, batch > 0, queryCount > 0 else {
      throw BenchError("--n, --batch and --queries must be positive")
    }
    guard api == "batch" || api == "single" else { throw BenchError("--api must be batch or single") }

    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-bench-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("store.sqlite").path

    var generator = SplitMix64(seed: 42)
    let corpus = TextCorpus(generator: &generator)
    progress("store: generating \(n) messages")
    let texts = (0..<n).map { index in corpus.message(index: index, generator: &generator) }
    let averageBytes = Double(texts.reduce(0) { $0 + $1.utf8.count }) / Double(n)

    var database: Database? = try Database(path: path)
    for name in without {
      try database!.write { connection in
        let type = try connection.prepare("SELECT type FROM sqlite_schema WHERE name = '\(name)'").first {
          $0.string(at: 0)
        }
        guard let type, type == "index" || type == "trigger" else {
          throw BenchError("--without: no index or trigger named \(name)")
        }
        try connection.execute("DROP \(type.uppercased()) \(name)")
      }
    }
    var keys = SplitMix64(seed: 7)
    let sourceKeyList = (0..<n).map { _ in sourceKeys ? Int64(bitPattern: keys.next()) : nil }
    progress("store: inserting in batches of \(batch)")
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let role = { (position: Int) -> MessageRole in position % 2 == 0 ? .user : .assistant }
    var cpuStart = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpuStart)
    let insertSeconds = try Measure.seconds {
      try database!.writeWithoutTransaction { connection in
        var index = 0
        while index < n {
          let end = min(n, index + batch)
          let messages = (index..<end).map { position in
            Message(
              role: role(position), content: texts[position],
              createdAt: start.addingTimeInterval(Double(position) / 1000), sourceKey: sourceKeyList[position]
            )
          }
          try connection.transaction {
            if api == "batch" {
              try connection.insert(contentsOf: messages)
            } else {
              for message in messages { try connection.insert(message) }
            }
          }
          index = end
        }
      }
    }

    var cpuEnd = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpuEnd)
    let insertCPU = Double(cpuEnd.tv_sec - cpuStart.tv_sec) + Double(cpuEnd.tv_nsec - cpuStart.tv_nsec) / 1e9
    if let dump {
      try dumpRows(texts, role: role, start: start, to: dump)
    }
    var ftsStart = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ftsStart)
    var ftsBytes = 0
    for (position, text) in texts.enumerated() {
      ftsBytes += FTSText.indexText(text, time: Timestamp.milliseconds(start) + Int64(position)).utf8.count
    }
    var ftsEnd = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ftsEnd)
    let ftsCPU = Double(ftsEnd.tv_sec - ftsStart.tv_sec) + Double(ftsEnd.tv_nsec - ftsStart.tv_nsec) / 1e9
    progress("store: \(queryCount) FTS queries")
    let queries = (0..<queryCount).map { _ in corpus.query(generator: &generator) }
    var latencies: [Double] = []
    latencies.reserveCapacity(queries.count)
    var totalHits = 0
    for query in queries {
      let seconds = try Measure.seconds {
        totalHits += try database!.read { try $0.searchText(query, kinds: [.message], limit: 10).count }
      }
      latencies.append(seconds * 1000)
    }
    database!.close()
    database = nil
    let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0

    var firstHits = 0
    let openSeconds = try Measure.seconds {
      let reopened = try Database(path: path)
      firstHits = try reopened.read { try $0.searchText(queries[0], kinds: [.message], limit: 10).count }
      reopened.close()
    }

    var report = BenchReport()
    report.set("n", n)
    report.set("batch", batch)
    report.set("api", api)
    report.set("message_bytes", averageBytes)
    report.set("insert_s", insertSeconds)
    report.set("insert_per_s", Double(n) / insertSeconds)
    report.set("insert_cpu_s", insertCPU)
    report.set("insert_cpu_us_per_row", insertCPU / Double(n) * 1e6)
    report.set("fts_text_us_per_row", ftsCPU / Double(n) * 1e6)
    report.set("fts_text_bytes", ftsBytes)
    report.set("source_keys", sourceKeys)
    report.set("without", without.joined(separator: ","))
    report.set("queries", queryCount)
    report.set("fts_p50_ms", Measure.percentile(latencies, 0.5))
    report.set("fts_p95_ms", Measure.percentile(latencies, 0.95))
    report.set("fts_mean_hits", Double(totalHits) / Double(queryCount))
    report.set("open_s", openSeconds)
    report.set("open_first_hits", firstHits)
    report.set("db_bytes", bytes)
    return (report, "store: \(n) messages, FTS5 with CJK bigrams, WAL")
  }
}

extension StoreSuite {
  /// The messages `run` inserted, one JSON object a line, in insert order.
  fileprivate static func dumpRows(
    _ texts: [String], role: (Int) -> MessageRole, start: Date, to path: String
  ) throws {
    struct Row: Encodable {
      let role: String
      let content: String
      let createdAt: Int64
      enum CodingKeys: String, CodingKey {
        case role, content
        case createdAt = "created_at"
      }
    }
    let encoder = JSONEncoder()
    var data = Data()
    for (position, text) in texts.enumerated() {
      let time = start.addingTimeInterval(Double(position) / 1000)
      data += try encoder.encode(
        Row(role: role(position).rawValue, content: text, createdAt: Timestamp.milliseconds(time)))
      data.append(0x0A)
    }
    try data.write(to: URL(fileURLWithPath: path))
  }
}

/// Deterministic English-like text: a Zipf-distributed vocabulary of generated words,
/// with a few CJK phrases.
private struct TextCorpus {
  let words: [String]
  let cumulative: [Double]
  let cjk = ["明天下午三点开会", "我周末去攀岩了", "今天天气很好", "東京で寿司を食べた", "한국어 공부", "新しいプロジェクト"]

  init(generator: inout SplitMix64) {
    let onsets = [
      "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st", "tr", "ch",
    ]
    let vowels = ["a", "e", "i", "o", "u", "ai", "ea", "ou"]
    let codas = ["", "n", "r", "s", "t", "l", "ng", "ck"]
    var set: Set<String> = []
    var list: [String] = []
    while list.count < 5_000 {
      let syllables = Int.random(in: 1...3, using: &generator)
      var word = ""
      for _ in 0..<syllables {
        word +=
          onsets.randomElement(using: &generator)! + vowels.randomElement(using: &generator)!
          + codas.randomElement(using: &generator)!
      }
      if set.insert(word).inserted { list.append(word) }
    }
    words = list
    var total = 0.0
    cumulative = (1...list.count).map { rank in
      total += 1 / Double(rank)
      return total
    }
  }

  func word(generator: inout SplitMix64) -> String {
    let target = Double.random(in: 0..<cumulative.last!, using: &generator)
    var low = 0
    var high = cumulative.count - 1
    while low < high {
      let middle = (low + high) / 2
      if cumulative[middle] < target { low = middle + 1 } else { high = middle }
    }
    return words[low]
  }

  func message(index: Int, generator: inout SplitMix64) -> String {
    var text = ""
    if index % 10 == 0 { text = cjk.randomElement(using: &generator)! + " " }
    while text.utf8.count < 200 { text += word(generator: &generator) + " " }
    return String(text.dropLast())
  }

  func query(generator: inout SplitMix64) -> String {
    if Int.random(in: 0..<20, using: &generator) == 0 {
      let phrase = Array(cjk.randomElement(using: &generator)!)
      let start = Int.random(in: 0..<(phrase.count - 1), using: &generator)
      return String(phrase[start...min(phrase.count - 1, start + 1)])
    }
    // People search with content words: skip the 100 most frequent words, which occur in
    // most messages of this corpus and behave like stopwords.
    let count = Int.random(in: 1...3, using: &generator)
    return (0..<count).map { _ in words[Int.random(in: 100..<words.count, using: &generator)] }
      .joined(separator: " ")
  }
}
