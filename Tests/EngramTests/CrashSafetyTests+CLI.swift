import Engram
import EngramTestSupport
import Foundation
import Testing

/// The same kill loop against the `engram` executable itself: `engram ingest` of several
/// conversation files, `engram compact --yes` and `engram reindex --model`, each killed with
/// SIGKILL after a random delay, then checked with `verify` and with `engram doctor` (which
/// also proves the CLI can still open the memory with the embedder it recorded).
extension CrashSafetyTests {
  /// Turns per file for `engram ingest`: large enough that a kill often lands mid-file.
  static let cliTurnsPerFile = 160
  static let cliFilesPerRun = 3

  @Test(arguments: ["cli-ingest", "cli-compact", "cli-reindex"])
  func cliSurvivesKills(mode: String) async throws {
    let kills = soakEnabled ? 60 : 3
    let clock = ContinuousClock.now
    let folder = try TemporaryFolder()
    let database = folder.path("cli-\(mode).sqlite")
    let turnsPerFile = mode == "cli-ingest" ? Self.cliTurnsPerFile : Self.turnsPerFile
    var baseline = 0
    if mode == "cli-reindex" {
      baseline = try await Self.prepareReindexDatabase(database)
    } else {
      let created = try await Self.runCLI(
        ["init", "--db", database, "--model", "hashing:\(Self.dimension)"], in: folder)
      try #require(created.status == 0, "engram init failed: \(created.error)")
    }
    var random = SplitMix64(seed: 0xBADC0DE ^ UInt64(mode.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
    var outcome = Outcome(mode: mode)
    var acknowledged: [String] = []
    var completedRuns = 0
    // The first run goes uncut and measures how long one run takes; later kills land anywhere
    // from process start-up to its end (a run that beats its kill completes and counts as such).
    var span = 0
    var round = 0
    while outcome.attempted < kills && round < 6 * kills {
      defer { round += 1 }
      let tag = "c\(round)"
      let arguments: [String]
      var files: [String: String] = [:]
      switch mode {
      case "cli-ingest":
        for file in 0..<Self.cliFilesPerRun {
          let name = "\(tag)-file-\(file)"
          let path = folder.path(name + ".jsonl")
          try writeFile(Self.conversation(name, turns: turnsPerFile, daysAgo: 1), to: path)
          files[path] = name
        }
        arguments = ["ingest", "--db", database, "--json"] + files.keys.sorted()
      case "cli-compact":
        // An old session and a duplicate memory (stored uncut) give every run work to do.
        let name = "\(tag)-old"
        let path = folder.path(name + ".jsonl")
        try writeFile(Self.conversation(name, turns: turnsPerFile, daysAgo: 90), to: path)
        let ingested = try await Self.runCLI(["ingest", "--db", database, "--json", path], in: folder)
        outcome.childErrors += ingested.status == 0 ? 0 : 1
        acknowledged += Self.ingestAcknowledgements(ingested.lines, files: [path: name])
        try? FileManager.default.removeItem(atPath: path)
        let remembered = try await Self.runCLI(
          ["remember", "--db", database, "duplicate fact \(round % 3): Alice climbs on Saturdays"], in: folder
        )
        outcome.childErrors += remembered.status == 0 ? 0 : 1
        arguments = ["compact", "--db", database, "--yes", "--json"]
      default:
        let current = try MemoryEngine.storedEmbedderSettings(path: database).dimension
        let next = current == Self.dimension ? Self.dimension + 32 : Self.dimension
        arguments = ["reindex", "--db", database, "--model", "hashing:\(next)"]
      }

      let started = ContinuousClock.now
      let child = try CrashTestProcess(executable: "engram", arguments: arguments, folder: folder.url)
      var killed = false
      if span == 0 {
        let status = await child.wait()
        // The child's own run time: the time until this task was scheduled again can be far
        // longer under a full parallel run, and every later kill waits up to the span.
        span = max(20, Int((child.lifetime ?? ContinuousClock.now - started) / .milliseconds(1)))
        outcome.childErrors += status == 0 ? 0 : 1
      } else {
        let delay = Int.random(in: 1...span, using: &random)
        killed = await child.kill(afterMilliseconds: delay)
        if killed {
          outcome.attempted += 1
        } else {
          completedRuns += 1
          if await child.wait() != 0 { outcome.childErrors += 1 }
          // The uncut run was timed under another load: aim earlier until kills land.
          span = max(5, span * 3 / 4)
        }
      }
      if !killed && child.terminationStatus != 0 {
        outcome.problems.append("round \(round): \(arguments[0]) failed: \(child.standardError)")
      }
      let lines = child.lines
      switch mode {
      case "cli-ingest": acknowledged += Self.ingestAcknowledgements(lines, files: files)
      case "cli-compact": break
      default:
        // "reindexed N items with MODEL (D-d)" is printed once the model and spec are stored.
        for line in lines where line.hasPrefix("reindexed ") {
          let words = line.split(separator: " ")
          if words.count > 4 { acknowledged.append("ACK reindex \(round) \(words[4])") }
        }
      }
      let problems = try await Self.verify(
        mode: String(mode.dropFirst("cli-".count)), database: database, acknowledged: acknowledged,
        baseline: baseline, turnsPerFile: turnsPerFile)
      var messages = problems.messages
      let doctor = try await Self.runCLI(["doctor", "--db", database, "--json"], in: folder)
      if doctor.status != 0 {
        messages.append(
          "engram doctor exited \(doctor.status): \(doctor.lines.joined(separator: " ")) \(doctor.error)")
      }
      outcome.lost += problems.lost
      outcome.problems.append(contentsOf: messages.map { "round \(round): \($0)" })
      if killed && messages.isEmpty { outcome.survived += 1 }
      for path in files.keys { try? FileManager.default.removeItem(atPath: path) }
    }
    outcome.acknowledged = acknowledged.count
    let seconds = Int((ContinuousClock.now - clock) / .seconds(1))
    print("crash-safety \(outcome), runs completed before the kill \(completedRuns), \(seconds) s")
    Self.report(outcome)
    #expect(
      outcome.attempted == kills, "only \(outcome.attempted) of \(round) runs were still going at the kill")
  }

  /// What a CLI run that was not killed printed and how it ended.
  struct CLIRun {
    var status: Int32
    var lines: [String]
    var error: String
  }

  /// Runs `engram ARGUMENTS` to completion.
  static func runCLI(_ arguments: [String], in folder: TemporaryFolder) async throws -> CLIRun {
    let child = try CrashTestProcess(executable: "engram", arguments: arguments, folder: folder.url)
    let status = await child.wait()
    return CLIRun(status: status, lines: child.lines, error: child.standardError)
  }

  /// `ACK ingest SESSION TURNS` for each file `engram ingest --json` reported stored (one JSON
  /// line per file, written only after its transaction committed).
  static func ingestAcknowledgements(_ lines: [String], files: [String: String]) -> [String] {
    lines.compactMap { line in
      guard
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let file = object["file"] as? String, let turns = object["turns"] as? Int, let name = files[file]
      else { return nil }
      return "ACK ingest \(name) \(turns)"
    }
  }

  /// A JSONL conversation: `turns` turns in one session named `name`, dated `daysAgo` back.
  static func conversation(_ name: String, turns: Int, daysAgo: Double) -> String {
    let start = Date().addingTimeInterval(-daysAgo * 86_400)
    let formatter = ISO8601DateFormatter()
    let topics = ["climbing", "the dentist", "a trip to Lisbon", "thanks", "the garden", "a new job"]
    return (0..<turns).map { turn in
      let date = formatter.string(from: start.addingTimeInterval(Double(turn) * 60))
      let speaker = turn % 2 == 0 ? "Alice" : "Bob"
      let content =
        "\(name) turn-\(turn) of \(turns): \(speaker) talks about \(topics[turn % topics.count]) at length"
      return
        "{\"role\":\"user\",\"session\":\"\(name)\",\"speaker\":\"\(speaker)\",\"timestamp\":\"\(date)\","
        + "\"content\":\"\(content)\"}\n"
    }.joined()
  }
}
