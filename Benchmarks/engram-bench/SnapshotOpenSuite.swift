import Engram
import EngramEmbeddings
import Foundation

/// The open of a memory with its vector index mapped from the `.vectors` snapshot against
/// the same memory loaded from its embeddings table (the snapshot file moved aside), at
/// several sizes: what `EngramConfiguration.snapshotMinimumRows` trades against the bytes of
/// a second copy of every vector. Each memory is ingested through the engine (hashing
/// embedder, 384 dimensions like MiniLM, varied synthetic turns), closed with a snapshot,
/// then opened read-only five times each way (median; one warm-up open first).
enum SnapshotOpenSuite {
  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let sizes = try arguments.string("sizes", default: "1000,5000,20000,100000").split(separator: ",").map {
      guard let n = Int($0), n > 0 else {
        throw BenchError("--sizes takes positive integers, comma-separated")
      }
      return n
    }
    let dimension = try arguments.int("dimension", default: 384)
    try arguments.finish()
    let embedder = try HashingEmbedder(dimension: dimension)
    let folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
      .appendingPathComponent(".build/engram-snapshot-open-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }

    var report = BenchReport()
    var lines: [String] = []
    for n in sizes {
      let path = folder.appendingPathComponent("m\(n).sqlite").path
      var configuration = EngramConfiguration(embedder: embedder)
      configuration.snapshotMinimumRows = 0
      configuration.approximate.enabled = false
      progress("snapshot-open: ingesting \(n) turns")
      let engine = try MemoryEngine(path: path, configuration: configuration)
      _ = try await engine.conversation.ingest(conversation(turns: n), path: "synthetic.jsonl")
      await engine.close()
      guard let snapshot = engine.snapshotURL, FileManager.default.fileExists(atPath: snapshot.path) else {
        throw BenchError("no snapshot written for \(n) rows")
      }
      configuration.readOnly = true
      let mapped = try openMilliseconds(path: path, configuration: configuration, expect: .snapshot)
      let aside = URL(fileURLWithPath: snapshot.path + ".aside")
      try FileManager.default.moveItem(at: snapshot, to: aside)
      let table = try openMilliseconds(path: path, configuration: configuration, expect: .database)
      try FileManager.default.moveItem(at: aside, to: snapshot)
      var entry = BenchReport()
      entry.set("snapshot_open_ms", mapped)
      entry.set("table_open_ms", table)
      entry.set("table_extra_ms", table - mapped)
      report.set(String(n), entry)
      lines.append(
        String(
          format: "%8d rows: snapshot %8.2f ms, table %8.2f ms (+%.2f ms)", n, mapped, table, table - mapped))
    }
    return (
      report,
      "snapshot-open: open time, mapped snapshot vs embeddings table\n" + lines.joined(separator: "\n")
    )
  }

  /// Median wall time of five read-only opens (after one warm-up), each checked to load
  /// its index from `expect`.
  static func openMilliseconds(
    path: String, configuration: EngramConfiguration, expect: MemoryEngine.IndexSource
  )
    throws -> Double
  {
    var samples: [Double] = []
    for round in 0..<6 {
      let start = ContinuousClock.now
      let engine = try MemoryEngine(path: path, configuration: configuration)
      let elapsed = (ContinuousClock.now - start).seconds * 1000
      let source = engine.indexSource
      engine.close()
      guard source == expect else { throw BenchError("index loaded from \(source), expected \(expect)") }
      if round > 0 { samples.append(elapsed) }
    }
    return Measure.percentile(samples, 0.5)
  }

  /// `turns` synthetic turns of a few words each, 50 to a session.
  static func conversation(turns: Int) -> ConversationFile {
    let words = [
      "climbing", "garden", "dentist", "concert", "river", "painting", "travel", "coffee", "museum",
      "bicycle", "recipe", "camping", "library", "piano", "soccer", "weekend", "birthday", "harbor",
      "mountain", "project", "kitchen", "market", "school", "journey", "festival", "letter",
    ]
    var generator = SystemRandomNumberGenerator()
    var sessions: [ConversationSession] = []
    var made = 0
    while made < turns {
      let count = min(50, turns - made)
      let name = "s\(sessions.count)"
      let list = (0..<count).map { index in
        let text = (0..<8).map { _ in words[Int(generator.next() % UInt64(words.count))] }.joined(
          separator: " ")
        return ConversationTurn(
          role: index % 2 == 0 ? "user" : "assistant", content: "turn \(made + index) \(text)", session: name)
      }
      sessions.append(ConversationSession(name: name, startedAt: nil, turns: list))
      made += count
    }
    return ConversationFile(sessions: sessions, format: .jsonl)
  }
}
