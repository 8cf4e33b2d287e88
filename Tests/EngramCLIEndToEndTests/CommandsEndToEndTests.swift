import EngramTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Every command run as a user would: the built binary on temporary memories, hashing embedder.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct CommandsEndToEndTests {
  @Test func initCreatesAPrivateFileAndRecordsTheEmbedder() async throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("m.sqlite")
    let result = try await engram("init", "--db", path, "--model", "hashing:64")
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("hashing-v1-64"))
    let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    let stats = try jsonObject(try await engram("stats", "--db", path, "--json").standardOutput)
    #expect(stats["embedder_spec"] as? String == "hashing:64")
    #expect(stats["dimension"] as? Int == 64)
    // A second init with another embedder is refused; the same one is a no-op.
    #expect(try await engram("init", "--db", path, "--model", "hashing").status == 1)
    #expect(try await engram("init", "--db", path).status == 0)
  }

  @Test func initFallsBackToHashingWithOneLineWhenMiniLMIsMissing() async throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("m.sqlite")
    let result = try await engram("init", "--db", path)
    #expect(result.status == 0)
    let lines = result.standardError.split(separator: "\n")
    #expect(lines.count == 1)
    #expect(lines.first?.contains("hashing embedder") == true)
    #expect(lines.first?.contains("make demo") == true)
    let stats = try jsonObject(try await engram("stats", "--db", path, "--json").standardOutput)
    #expect(stats["embedder_spec"] as? String == "hashing")
  }

  @Test func askingForMiniLMExplicitlyFailsWhenItIsMissing() async throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("m.sqlite")
    let result = try await engram("init", "--db", path, "--model", "minilm")
    #expect(result.status == 1)
    #expect(result.standardError.contains("make demo"))
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func commandsOnAMissingMemorySuggestInit() async throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("absent.sqlite")
    for arguments in [["query", "x"], ["stats"], ["remember", "x"], ["compact", "--yes"]] {
      let result = try await EngramBinary.run(
        arguments + ["--db", path], environment: ScratchFolder.environment)
      #expect(result.status == 1)
      #expect(
        result.standardError == "engram: no memory at \(path); create one with `engram init --db \(path)`\n")
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func rememberIngestQueryAndForget() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let chat = try scratch.write("chat.jsonl", sampleChat)
    let remembered = try await engram(
      "remember", "--db", db, "Leo", "is", "vegetarian", "--kind", "preference", "--tag", "food")
    #expect(remembered.status == 0)
    #expect(remembered.standardOutput == "remembered preference #1\n")
    let ingested = try await engram("ingest", "--db", db, chat)
    #expect(ingested.status == 0)
    #expect(ingested.standardOutput.contains("ingested 5 turns in 2 sessions"))

    let table = try await engram("query", "--db", db, "Lisbon", "flight", "-k", "3")
    #expect(table.status == 0)
    let rows = table.standardOutput.split(separator: "\n")
    #expect(rows.count == 4)
    #expect(rows[1].contains("turn:Maya") && rows[1].contains("Lisbon"))
    #expect(rows.allSatisfy { $0.count <= 80 })

    let json = try jsonLines(
      try await engram("query", "--db", db, "vegetarian", "--json", "--kind", "memory").standardOutput)
    #expect(json.count == 1)
    let hit = try #require(json.first)
    #expect(hit["kind"] as? String == "memory")
    #expect(hit["text"] as? String == "Leo is vegetarian")
    for key in ["id", "score", "bm25", "cosine", "date", "session", "speaker", "provenance"] {
      #expect(hit[key] != nil, "missing \(key)")
    }

    let filtered = try jsonLines(
      try await engram(
        "query", "--db", db, "vegetarian", "--json", "--since", "2024-04-01", "--until", "2024-04-30"
      )
      .standardOutput)
    #expect(!filtered.isEmpty)
    #expect(filtered.allSatisfy { ($0["date"] as? String)?.hasPrefix("2024-04") == true })

    let dryRun = try await engram("forget", "--db", db, "--query", "vegetarian", "--dry-run")
    #expect(dryRun.status == 0 && dryRun.standardOutput.contains("Leo is vegetarian"))
    let declined = try await engram("forget", "--db", db, "--query", "vegetarian", input: "n\n")
    #expect(declined.status == 1)
    let accepted = try await engram("forget", "--db", db, "--query", "vegetarian", input: "y\n")
    #expect(accepted.status == 0 && accepted.standardOutput.contains("forgot 1 item(s)"))
    let stats = try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)
    #expect(stats["memories"] as? Int == 0)
    #expect(stats["messages"] as? Int == 5)
    #expect(try await engram("forget", "--db", db, "1").status == 1)
  }

  @Test func usageErrorsExit64() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    for arguments in [
      ["query", "--db", db, ""], ["query", "--db", db, "   "], ["query", "--db", db, "x", "--frobnicate"],
      ["query", "--db", db, "x", "-k", "0"], ["query", "--db", db, "x", "--mode", "fuzzy"],
      ["remember", "--db", db, "x", "--importance", "2"], ["forget", "--db", db], ["ingest", "--db", db],
      ["compact", "--db", db, "--older-than", "30"], ["skills", "--db", db, "enable", "no.such.skill"],
    ] {
      let result = try await EngramBinary.run(arguments, environment: ScratchFolder.environment)
      #expect(result.status == 64, "\(arguments)")
      #expect(result.standardError.hasPrefix("engram: "), "\(arguments)")
    }
  }

  @Test func badConversationFilesAreRefusedWhole() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let missing = try await engram("ingest", "--db", db, scratch.path("nope.jsonl"))
    #expect(missing.status == 1)
    #expect(missing.standardError.contains("nope.jsonl: cannot read"))
    let bad = try scratch.write(
      "bad.jsonl", "{\"role\": \"user\", \"content\": \"fine\"}\n{\"role\": \"user\", \"content\": \n")
    let malformed = try await engram("ingest", "--db", db, bad)
    #expect(malformed.status == 1)
    #expect(malformed.standardError.contains("bad.jsonl:2:"))
    #expect(malformed.standardError.split(separator: "\n").count == 1)
    let fromStdin = try await engram("ingest", "--db", db, "-", input: sampleChat)
    #expect(fromStdin.status == 0)
    let stats = try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)
    #expect(stats["messages"] as? Int == 5)
  }

  @Test func aDatabaseFromTheFutureIsRefusedAndLeftUnchanged() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    // PRAGMA user_version lives at byte 60 of the header, big-endian.
    var bytes = try Data(contentsOf: URL(fileURLWithPath: db))
    bytes.replaceSubrange(60..<64, with: [0, 0, 0, 99])
    try bytes.write(to: URL(fileURLWithPath: db))
    for arguments in [["query", "x"], ["stats"], ["remember", "x"], ["init"]] {
      let result = try await EngramBinary.run(
        arguments + ["--db", db], environment: ScratchFolder.environment)
      #expect(result.status == 1, "\(arguments)")
      #expect(result.standardError.split(separator: "\n").count == 1)
      #expect(result.standardError.contains("newer Engram"), "\(result.standardError)")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == bytes)
  }

  @Test func compactAsksAndRefusesWithoutATerminal() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    #expect(try await engram("ingest", "--db", db, try scratch.write("chat.jsonl", sampleChat)).status == 0)
    let dryRun = try await engram("compact", "--db", db, "--dry-run")
    #expect(dryRun.status == 0 && dryRun.standardOutput.contains("summarize trip"))
    let refused = try await engram("compact", "--db", db)
    #expect(refused.status == 1)
    #expect(refused.standardError.contains("--yes"))
    #expect(
      try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)["summaries"] as? Int == 0
    )
    let done = try await engram("compact", "--db", db, "--yes")
    #expect(done.status == 0)
    #expect(done.standardOutput.contains("bytes"))
    let stats = try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)
    #expect(stats["summaries"] as? Int == 2)
    #expect(stats["last_compaction"] is String)
    let doctor = try await engram("doctor", "--db", db)
    #expect(doctor.status == 0)
    #expect(doctor.standardOutput.split(separator: "\n").allSatisfy { $0.hasPrefix("ok") })
  }

  @Test func exportImportRoundTripsAndImportIsIdempotent() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    #expect(try await engram("ingest", "--db", db, try scratch.write("chat.jsonl", sampleChat)).status == 0)
    #expect(try await engram("remember", "--db", db, "Maya flies TAP").status == 0)
    let file = scratch.path("out.jsonl")
    #expect(try await engram("export", "--db", db, file).status == 0)
    let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    let toStdout = try await engram("export", "--db", db)
    #expect(toStdout.standardOutput.hasPrefix("{") && toStdout.standardOutput.contains("engram-export"))

    let copy = scratch.path("copy.sqlite")
    let imported = try await engram("import", "--db", copy, file)
    #expect(imported.status == 0)
    let stats = try jsonObject(try await engram("stats", "--db", copy, "--json").standardOutput)
    #expect(stats["messages"] as? Int == 5 && stats["memories"] as? Int == 1)
    #expect(stats["embedder_spec"] as? String == "hashing")
    // The same export again: nothing to import, nothing changed (issue 32).
    let again = try await engram("import", "--db", copy, file)
    #expect(again.status == 0)
    #expect(again.standardOutput.contains("\(copy) already holds every row of this export"))
    let statsAgain = try jsonObject(try await engram("stats", "--db", copy, "--json").standardOutput)
    #expect(statsAgain["messages"] as? Int == 5 && statsAgain["memories"] as? Int == 1)
    // Another memory's export is refused.
    let otherDatabase = try await scratch.initializedDatabase("other-source.sqlite")
    #expect(try await engram("remember", "--db", otherDatabase, "a different memory").status == 0)
    let otherExport = scratch.path("other.jsonl")
    #expect(try await engram("export", "--db", otherDatabase, otherExport).status == 0)
    let refused = try await engram("import", "--db", copy, otherExport)
    #expect(refused.status == 1)
    #expect(refused.standardError.contains("\(copy) already holds a memory"))

    let broken = try scratch.write("broken.jsonl", "not json\n")
    let failed = try await engram("import", "--db", scratch.path("other.sqlite"), broken)
    #expect(failed.status == 1)
    #expect(!FileManager.default.fileExists(atPath: scratch.path("other.sqlite")))
  }

  @Test func reindexSkillsAndBench() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    #expect(try await engram("ingest", "--db", db, try scratch.write("chat.jsonl", sampleChat)).status == 0)
    let reindexed = try await engram("reindex", "--db", db, "--model", "hashing:32")
    #expect(reindexed.status == 0 && reindexed.standardOutput.contains("reindexed 5 items"))
    let stats = try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)
    #expect(stats["dimension"] as? Int == 32 && stats["embedder_spec"] as? String == "hashing:32")
    #expect(try await engram("query", "--db", db, "Lisbon").status == 0)

    #expect(try await engram("skills", "--db", db, "disable", "calculator").status == 0)
    let skills = try jsonLines(try await engram("skills", "--db", db, "--json").standardOutput)
    #expect(skills.count >= 8)
    #expect(skills.first { $0["id"] as? String == "calculator" }?["enabled"] as? Bool == false)
    #expect(skills.first { $0["id"] as? String == "time.now" }?["enabled"] as? Bool == true)

    let bench = try jsonObject(try await engram("bench", "--db", db, "--json").standardOutput)
    #expect(bench["queries"] as? Int == 5)
    #expect((bench["p50_ms"] as? Double ?? -1) > 0)
    #expect((bench["p95_ms"] as? Double ?? 0) >= (bench["p50_ms"] as? Double ?? 1))
  }

  @Test func demoRunsWithTheHashingEmbedder() async throws {
    let result = try await engram("demo", "--model", "hashing")
    #expect(result.status == 0)
    for heading in ["ingest a two-person chat", "query: ", "prompt context", "compact", "stats"] {
      #expect(result.standardOutput.contains(heading), "\(heading)")
    }
    #expect(result.standardOutput.contains("ingested 20 turns in 2 sessions"))
    let minilm = try await engram("demo")
    #expect(minilm.status == 1)
    #expect(minilm.standardError.contains("make demo"))
  }

  /// Ctrl-C stops an ingest between batches (docs/ingest.md, "Resumable"): it exits 130 and
  /// keeps only whole batches of what it read (nothing when it was still checking the file;
  /// a loaded machine may deliver the signal seconds late). Running the same command again
  /// completes it: `IngestIdempotenceTests`, `CrashSafetyTests`.
  @Test func ctrlCDuringIngestStopsItAndLeavesTheMemorySound() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    // The file must outlast the 1.5 s wait by far (20,000 turns once took less than that).
    var lines = ""
    for index in 0..<100_000 {
      lines +=
        "{\"session\": \"s\(index / 100)\", \"role\": \"user\", \"content\": \"turn \(index) about topic \(index % 97)\"}\n"
    }
    let file = try scratch.write("big.jsonl", lines)
    let child = try ChildProcess(
      try EngramBinary.locate().path, arguments: ["ingest", "--db", db, file],
      environment: ProcessInfo.processInfo.environment.merging(ScratchFolder.environment) { $1 })
    try await Task.sleep(for: .milliseconds(1500))
    child.send(SIGINT)
    #expect(await child.exit() == .exited(130))
    let stats = try jsonObject(try await engram("stats", "--db", db, "--json").standardOutput)
    let messages = try #require(stats["messages"] as? Int)
    #expect(messages < 100_000)
    // Whatever was committed is whole: every stored session holds all its 100 turns (the
    // batches of 2,000 end at session boundaries here).
    #expect(messages == (stats["sessions"] as? Int ?? -1) * 100)
  }
}
