import EngramEmbeddings
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Kills `engram-crashtest` with SIGKILL at seeded random moments while it writes, then
/// reopens the memory and checks it: SQLite integrity and `doctor` healthy (after running an
/// interrupted ingest again, which completes it), every acknowledged write present, no file
/// half-imported, no session half-compacted.
@Suite(.serialized, .timeLimit(.minutes(soakEnabled ? 120 : 8)), .watchdog) struct CrashSafetyTests {
  /// What one mode's kill loop found.
  struct Outcome: CustomStringConvertible {
    var mode: String
    var attempted = 0
    var survived = 0
    var acknowledged = 0
    var lost = 0
    var childErrors = 0
    var problems: [String] = []

    var description: String {
      "\(mode): kills survived \(survived)/\(attempted), acknowledged writes \(acknowledged), lost \(lost), "
        + "child errors \(childErrors)"
    }
  }

  static let turnsPerFile = 24
  static let dimension = 64

  /// Kill delays after READY per mode, in milliseconds: long enough to land inside the
  /// embedding batches, transactions, compaction (VACUUM, checkpoints) and reindexing.
  static let delays: [String: ClosedRange<Int>] = [
    "remember": 2...120, "ingest": 5...250, "compact": 20...900, "reindex": 5...400,
  ]

  /// What each mode's child does when it is killed (the reliability table's DETAIL column).
  static let killed: [String: String] = [
    "remember": "engram-crashtest: remember loop (embed + one transaction each)",
    "ingest": "engram-crashtest: ingest of \(turnsPerFile)-turn files in batches of 4",
    "compact": "engram-crashtest: ingest old session + compact (summaries, merges, VACUUM)",
    "reindex": "engram-crashtest: reindex between two hashing models",
    "cli-ingest": "engram ingest --json, \(cliFilesPerRun) files x \(cliTurnsPerFile) turns; + engram doctor",
    "cli-compact": "engram compact --yes after ingest + remember; + engram doctor",
    "cli-reindex": "engram reindex --model, spec switching; + engram doctor",
  ]

  @Test(arguments: ["remember", "ingest", "compact", "reindex"])
  func survivesKills(mode: String) async throws {
    let kills = soakEnabled ? 100 : 8
    let folder = try TemporaryFolder()
    let database = folder.path("crash-\(mode).sqlite")
    var baseline = 0
    if mode == "reindex" { baseline = try await Self.prepareReindexDatabase(database) }
    var random = SplitMix64(seed: 0xC0FFEE ^ UInt64(mode.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
    var outcome = Outcome(mode: mode)
    var acknowledged: [String] = []
    for round in 0..<kills {
      let child = try CrashTestProcess(
        database: database, mode: mode,
        arguments: [
          "--tag", "r\(round)", "--dimension", String(Self.dimension), "--turns", String(Self.turnsPerFile),
        ])
      try await child.waitUntilReady()
      // Odd rounds let one write through first, so every mode has acknowledged writes to
      // check however slow the machine (sanitizers, load); even rounds can hit the first.
      if round % 2 == 1 { try await child.waitUntilAcknowledged() }
      let delay = Int.random(in: Self.delays[mode]!, using: &random)
      outcome.attempted += 1
      let killed = await child.kill(afterMilliseconds: delay)
      let lines = child.lines
      outcome.childErrors += lines.filter { $0.hasPrefix("ERR") }.count
      acknowledged.append(contentsOf: lines.filter { $0.hasPrefix("ACK") })
      let problems = try await Self.verify(
        mode: mode, database: database, acknowledged: acknowledged, baseline: baseline)
      outcome.lost += problems.lost
      outcome.problems.append(contentsOf: problems.messages.map { "round \(round): \($0)" })
      if killed && problems.messages.isEmpty { outcome.survived += 1 }
      if !killed { outcome.problems.append("round \(round): the child exited before the kill: \(lines)") }
    }
    outcome.acknowledged = acknowledged.count
    print("crash-safety \(outcome)")
    Self.report(outcome)
  }

  /// Logs one mode's kills for `make reliability` and checks that every kill was survived
  /// with nothing acknowledged lost.
  static func report(_ outcome: Outcome) {
    ReliabilityLog.record(
      "crash",
      [
        "mode": outcome.mode, "attempted": outcome.attempted, "survived": outcome.survived,
        "acknowledged": outcome.acknowledged, "lost": outcome.lost, "detail": killed[outcome.mode] ?? "",
      ])
    #expect(outcome.problems.isEmpty, "\(outcome.problems.prefix(5))")
    #expect(outcome.lost == 0)
    #expect(outcome.childErrors == 0)
    #expect(outcome.survived == outcome.attempted)
    #expect(outcome.acknowledged > 0, "no write was acknowledged before the kills")
  }

  /// A memory with three conversations and a few memories, for the reindex loop; returns the
  /// number of items (turns plus memories) it holds.
  static func prepareReindexDatabase(_ path: String) async throws -> Int {
    let engine = try MemoryEngine(
      path: path, configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: dimension)))
    defer { engine.close() }
    for file in 0..<3 {
      var lines: [String] = []
      for turn in 0..<40 {
        lines.append(
          "{\"role\":\"user\",\"session\":\"base-\(file)\",\"content\":\"base-\(file) turn-\(turn) about topic \(turn % 9)\"}"
        )
      }
      let filePath = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(
        "base-\(file).jsonl"
      ).path
      try writeFile(lines.joined(separator: "\n"), to: filePath)
      _ = try await engine.conversation.ingest(path: filePath)
    }
    for number in 0..<20 {
      try await engine.memories.remember("base memory \(number) about topic \(number % 5)")
    }
    return 3 * 40 + 20
  }

  /// Opens the memory with whichever of the two hashing models it holds.
  static func open(_ path: String) throws -> MemoryEngine {
    do {
      return try MemoryEngine(
        path: path, configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: dimension)))
    } catch EngramError.modelMismatch {
      return try MemoryEngine(
        path: path,
        configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: dimension + 32)))
    }
  }

  /// Checks the memory after a kill; returns acknowledged writes missing and what else is wrong.
  /// Every conversation file in it holds `turnsPerFile` turns (one session per file).
  static func verify(
    mode: String, database path: String, acknowledged: [String], baseline: Int,
    turnsPerFile: Int = CrashSafetyTests.turnsPerFile
  ) async throws -> (lost: Int, messages: [String]) {
    let engine = try open(path)
    defer { engine.close() }
    var messages: [String] = []
    var lost = 0
    var report = try await engine.doctor()
    let ingestFiles = try FileManager.default.contentsOfDirectory(
      atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path
    ).filter { $0.hasSuffix(".jsonl") && !$0.hasPrefix("base-") }.sorted().map {
      URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent($0).path
    }
    if mode != "reindex", report.checks.contains(where: { $0.name == "embeddings" && !$0.ok }) {
      // An ingest stopped after storing a file's text and before embedding all of it: the
      // same ingest run again completes it (and adds no turn twice).
      for file in ingestFiles { _ = try await engine.conversation.ingest(path: file) }
      report = try await engine.doctor()
    }
    for check in report.checks where !check.ok { messages.append("doctor \(check.name): \(check.detail)") }

    // Every file's turns all stored or none; sessions never empty.
    let sessions = try engine.database.read { connection in
      try connection.prepare(
        """
        SELECT s.external_id, count(m.id), count(m.summary_id), (SELECT count(*) FROM summaries u WHERE u.session_id = s.id)
        FROM sessions s LEFT JOIN messages m ON m.session_id = s.id GROUP BY s.id
        """
      ).map {
        ($0.optionalString(at: 0) ?? "", Int($0.int64(at: 1)), Int($0.int64(at: 2)), Int($0.int64(at: 3)))
      }
    }
    var turnsBySession: [String: Int] = [:]
    for (name, turns, covered, summaries) in sessions {
      turnsBySession[name] = turns
      if name.hasPrefix("base-") { continue }
      if mode == "compact" {
        // Untouched (no summary, nothing covered) or fully compacted (one summary covering all).
        let untouched = summaries == 0 && covered == 0 && turns == turnsPerFile
        let compacted = summaries == 1 && covered == turns && turns > 0
        if !untouched && !compacted {
          messages.append(
            "session \(name) half-compacted: \(turns) turns, \(covered) covered, \(summaries) summaries")
        }
      } else if turns != turnsPerFile {
        messages.append("file \(name) partially imported: \(turns) of \(turnsPerFile) turns")
      }
    }

    var lastModel: String?
    for line in acknowledged {
      let fields = line.split(separator: " ").map(String.init)
      switch fields[1] {
      case "memory":
        let id = Int64(fields[2]) ?? -1
        if try await engine.memories.get(id)?.content.hasPrefix("crash memory \(fields[3]):") != true {
          lost += 1
        }
      case "ingest":
        let stored = turnsBySession[fields[2]] ?? 0
        if mode == "compact" ? stored == 0 : stored != Int(fields[3]) { lost += 1 }
      case "reindex":
        lastModel = fields[3]
      default:
        break
      }
    }
    if mode == "reindex" {
      // Nothing lost by re-embedding; the model is the last acknowledged one or the next.
      let counts = try await engine.maintenance.tableCounts()
      let items = (counts["messages"] ?? 0) + (counts["memories"] ?? 0)
      if items != baseline { messages.append("reindex changed the items: \(items) of \(baseline)") }
      if (counts["embeddings"] ?? 0) != baseline {
        messages.append("reindex left \(counts["embeddings"] ?? 0) embeddings for \(baseline) items")
      }
      if let lastModel, lastModel != engine.embedder.modelID {
        // The next reindex may have committed just before the kill; then the model flips.
        let other =
          lastModel == "hashing-v1-\(dimension)" ? "hashing-v1-\(dimension + 32)" : "hashing-v1-\(dimension)"
        if engine.embedder.modelID != other { messages.append("unexpected model \(engine.embedder.modelID)") }
      }
    }
    // The rebuilt index answers searches.
    if try await engine.search("topic", k: 3, mode: .vector).isEmpty && baseline + acknowledged.count > 0 {
      messages.append("vector search found nothing")
    }
    return (lost, messages)
  }
}
