import Engram
import EngramEmbeddings
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What each command costs on a memory of N turns, measured the way a user runs it: the
/// built `engram` binary beside `engram-bench`, one process per command, wall time from
/// spawn to exit, CPU time and peak resident memory of the child (`wait4`), and the bytes
/// the child made the kernel send to storage (`/proc/PID/io` `write_bytes`, read before
/// reaping; also net of `cancelled_write_bytes`, the dirty pages of files deleted before
/// they reached storage, such as SQLite's `-shm`). Linux folds the spawning process's own peak into a child's `ru_maxrss`, so
/// this process stays small until the children are done (`peak_floor_mb` reports its
/// peak: no child figure can be below it) and measures `open_ms` in-process last.
///
/// The memory is built from the LoCoMo turns in `--data DIR`, cycled and varied (each
/// pass after the first gives every session a new id and date, and each turn one extra
/// word from the corpus), with every turn older than the compaction cut-off. With `--dir D
/// --reuse` a memory already in D (from an earlier run with the same N) is measured again
/// without being rebuilt: the ingest figures are then left out.
enum ScaleSuite {
  /// One LoCoMo session: its speakers' turns.
  struct SourceSession {
    var turns: [(speaker: String, text: String)]
  }

  /// One finished child process.
  struct ChildRun {
    var status: Int32
    var seconds: Double
    /// User plus system CPU time: on a shared host, what the command itself cost.
    var cpuSeconds: Double
    var peakBytes: Int
    var writeBytes: Int
    /// `writeBytes` less the child's cancelled writes: what reached (or will reach) storage.
    var netWriteBytes: Int
    var standardError: String
  }

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let n = try arguments.int("n", default: 10_000)
    let model = arguments.string("model", default: "hashing:384")
    let dataPath = arguments.string("data", default: "../shared/data/locomo-dev")
    let queryCount = try arguments.int("queries", default: 20)
    let folderOption = arguments.optionalString("dir")
    let reuse = arguments.flag("reuse")
    let skip = Set(arguments.string("skip", default: "").split(separator: ",").map(String.init))
    try arguments.finish()
    guard n > 0 else { throw BenchError("--n must be positive") }
    guard !reuse || folderOption != nil else { throw BenchError("--reuse needs --dir") }
    guard model == "minilm" || model.hasPrefix("hashing") else {
      throw BenchError("--model must be hashing:DIM or minilm")
    }
    let unknown = skip.subtracting(["import", "doctor", "compact", "export", "recluster"])
    guard unknown.isEmpty else { throw BenchError("--skip takes import, doctor, compact, export, recluster") }

    let binary = try engramBinary()
    let (sessions, questions, vocabulary) = try loadCorpus(dataPath)
    let folder =
      folderOption.map { URL(fileURLWithPath: $0) }
      ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
      .appendingPathComponent(".build/engram-scale-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { if folderOption == nil { try? FileManager.default.removeItem(at: folder) } }
    let db = folder.appendingPathComponent("memory.sqlite").path
    let input = folder.appendingPathComponent("turns.jsonl").path
    let exportFile = folder.appendingPathComponent("export.jsonl").path
    let rebuild = !(reuse && FileManager.default.fileExists(atPath: db))
    var report = BenchReport()
    report.set("n", n)
    report.set("model", model)
    report.set("cpu", cpuName())
    report.set("load_average_at_start", loadAverage())
    report.set("reused_memory", !rebuild)

    if rebuild {
      for file in [db, db + "-wal", db + "-shm", db + ".vectors", exportFile, db + ".imported"] {
        try? FileManager.default.removeItem(atPath: file)
      }
      progress("scale: writing \(n) turns to \(input)")
      try writeTurns(n: n, sessions: sessions, vocabulary: vocabulary, to: input)
      _ = try child(binary, ["init", "--db", db, "--model", model], in: folder)
      progress("scale: ingest")
      let ingest = try child(binary, ["ingest", "--db", db, input], in: folder)
      report.set("ingest_s", ingest.seconds)
      report.set("ingest_per_s", Double(n) / ingest.seconds)
      report.set("ingest_cpu_s", ingest.cpuSeconds)
      report.set("ingest_peak_mb", megabytes(ingest.peakBytes))
    } else {
      progress("scale: measuring the memory already in \(folder.path)")
    }
    report.set("db_bytes", fileSize(db) + fileSize(db + "-wal"))
    report.set("snapshot_bytes", fileSize(db + ".vectors"))
    report.set("lists_bytes", fileSize(db + ".vectors.lists"))
    // Everything the memory keeps on disk: the database, its snapshot and lists.
    let diskBytes =
      fileSize(db) + fileSize(db + "-wal") + fileSize(db + ".vectors") + fileSize(db + ".vectors.lists")
    report.set("disk_bytes_per_turn", Double(diskBytes) / Double(n))

    // One query first, so anything a first open does (a snapshot rebuilt after ingest)
    // is not counted as a query's cost; then the measured ones.
    progress("scale: \(queryCount) queries")
    _ = try child(binary, ["query", "--db", db, questions[0], "-k", "10"], in: folder)
    var latencies: [Double] = []
    var written: [Int] = []
    var writtenNet: [Int] = []
    var queryPeak = 0
    var queryCPU: [Double] = []
    for index in 0..<queryCount {
      let text = questions[(index + 1) % questions.count]
      let run = try child(binary, ["query", "--db", db, text, "-k", "10"], in: folder)
      latencies.append(run.seconds * 1000)
      queryCPU.append(run.cpuSeconds * 1000)
      written.append(run.writeBytes)
      writtenNet.append(run.netWriteBytes)
      queryPeak = max(queryPeak, run.peakBytes)
    }
    report.set("query_p50_ms", Measure.percentile(latencies, 0.5))
    report.set("query_p95_ms", Measure.percentile(latencies, 0.95))
    report.set("query_cpu_p50_ms", Measure.percentile(queryCPU, 0.5))
    report.set("query_bytes_written", written.max() ?? 0)
    report.set("query_bytes_written_net", writtenNet.max() ?? 0)
    report.set("query_peak_mb", megabytes(queryPeak))

    // Five runs (one is at the mercy of a loaded host): the median, and the most written.
    let statsRuns = try (0..<5).map { _ in try child(binary, ["stats", "--db", db], in: folder) }
    report.set("stats_ms", Measure.percentile(statsRuns.map { $0.seconds * 1000 }, 0.5))
    report.set("stats_cpu_ms", Measure.percentile(statsRuns.map { $0.cpuSeconds * 1000 }, 0.5))
    report.set("stats_bytes_written", statsRuns.map(\.writeBytes).max() ?? 0)
    report.set("stats_bytes_written_net", statsRuns.map(\.netWriteBytes).max() ?? 0)
    if !skip.contains("doctor") {
      progress("scale: doctor")
      let doctor = try child(binary, ["doctor", "--db", db], in: folder)
      report.set("doctor_s", doctor.seconds)
      report.set("doctor_cpu_s", doctor.cpuSeconds)
      report.set("doctor_peak_mb", megabytes(doctor.peakBytes))
    }

    if !skip.contains("export") {
      progress("scale: export")
      let export = try child(binary, ["export", "--db", db, exportFile], in: folder)
      let lines = Int(export.standardError.split(separator: " ").dropFirst().first ?? "") ?? 0
      report.set("export_s", export.seconds)
      report.set("export_cpu_s", export.cpuSeconds)
      report.set("export_rows_per_s", Double(lines) / export.seconds)
      report.set("export_peak_mb", megabytes(export.peakBytes))
      report.set("export_bytes", fileSize(exportFile))
      if !skip.contains("import") {
        progress("scale: import")
        let imported = db + ".imported"
        let run = try child(binary, ["import", "--db", imported, exportFile], in: folder)
        report.set("import_s", run.seconds)
        report.set("import_cpu_s", run.cpuSeconds)
        report.set("import_rows_per_s", Double(lines) / run.seconds)
        report.set("import_peak_mb", megabytes(run.peakBytes))
        for suffix in ["", "-wal", "-shm", ".vectors"] {
          try? FileManager.default.removeItem(atPath: imported + suffix)
        }
      }
      try? FileManager.default.removeItem(atPath: exportFile)
    }

    if !skip.contains("compact") {
      progress("scale: compact --dry-run")
      let plan = try child(binary, ["compact", "--db", db, "--dry-run"], in: folder)
      report.set("compact_dry_run_s", plan.seconds)
      report.set("compact_dry_run_cpu_s", plan.cpuSeconds)
      report.set("compact_dry_run_peak_mb", megabytes(plan.peakBytes))
      report.set("compact_dry_run_bytes_written", plan.writeBytes)
      report.set("compact_dry_run_bytes_written_net", plan.netWriteBytes)
      progress("scale: compact")
      let compact = try child(binary, ["compact", "--db", db, "--yes"], in: folder)
      report.set("compact_s", compact.seconds)
      report.set("compact_cpu_s", compact.cpuSeconds)
      report.set("compact_peak_mb", megabytes(compact.peakBytes))
      report.set("db_bytes_after_compact", fileSize(db) + fileSize(db + "-wal"))
    }
    // Last: opening in this process raises its resident size, which a child spawned
    // afterwards would inherit in its peak (Linux counts the spawning image's peak).
    report.set("peak_floor_mb", megabytes(Measure.peakResidentBytes() ?? 0))
    report.set("open_ms", try openMilliseconds(db: db, model: model))
    if !skip.contains("recluster"), let recluster = try reclusterReport(db: db) {
      report.set("recluster", recluster)
    }
    return (report, "scale: \(n) turns, \(model), one process per command (\(binary))")
  }

  // MARK: - The corpus

  /// LoCoMo sessions, questions and a vocabulary for varying repeated turns.
  static func loadCorpus(_ path: String) throws -> ([SourceSession], [String], [String]) {
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
      .filter { $0.hasSuffix(".json") }.sorted()
    guard !files.isEmpty else { throw BenchError("no LoCoMo .json files in \(path) (pass --data DIR)") }
    var sessions: [SourceSession] = []
    var questions: [String] = []
    var vocabulary = Set<String>()
    for file in files {
      let data = try Data(contentsOf: URL(fileURLWithPath: path + "/" + file))
      let root = try JSONValue.parse(data)
      guard let conversation = root.objectValue else { continue }
      let sessionKeys = conversation.keys.compactMap { key -> Int? in
        guard key.hasPrefix("session_"), !key.hasSuffix("date_time") else { return nil }
        return Int(key.dropFirst("session_".count))
      }.sorted()
      for key in sessionKeys {
        guard let turns = conversation["session_\(key)"]?.arrayValue else { continue }
        let pairs = turns.compactMap { turn -> (String, String)? in
          guard let speaker = turn["speaker"]?.stringValue, let text = turn["text"]?.stringValue else {
            return nil
          }
          return (speaker, text)
        }
        if pairs.isEmpty { continue }
        sessions.append(SourceSession(turns: pairs))
        for (_, text) in pairs {
          for word in text.split(separator: " ") where word.count > 4 && word.allSatisfy(\.isLetter) {
            vocabulary.insert(word.lowercased())
          }
        }
      }
      for qa in conversation["qa"]?.arrayValue ?? [] {
        if let question = qa["question"]?.stringValue { questions.append(question) }
      }
    }
    guard !sessions.isEmpty, !questions.isEmpty else {
      throw BenchError("no sessions or questions in \(path)")
    }
    return (sessions, questions, vocabulary.sorted())
  }

  /// Writes `n` turns as conversation JSONL: sessions cycled, later passes varied.
  static func writeTurns(n: Int, sessions: [SourceSession], vocabulary: [String], to path: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil) else {
      throw BenchError("cannot create \(path)")
    }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var generator = SplitMix64(seed: 15)
    var buffer = ""
    var written = 0
    var sessionNumber = 0
    // Every session starts six hours before the previous one, ending well before now.
    let newest = 1_672_531_200  // 2023-01-01
    while written < n {
      let source = sessions[sessionNumber % sessions.count]
      let pass = sessionNumber / sessions.count
      let start = newest - sessionNumber * 6 * 3600
      let speakers = Array(Set(source.turns.map(\.speaker))).sorted()
      for (position, turn) in source.turns.enumerated() where written < n {
        var text = turn.text
        if pass > 0 { text += " " + vocabulary[Int(generator.next() % UInt64(vocabulary.count))] }
        let role = turn.speaker == speakers.first ? "user" : "assistant"
        let line: JSONValue = [
          "role": .string(role), "content": .string(text), "speaker": .string(turn.speaker),
          "session": .string("s\(sessionNumber)"), "timestamp": .int(start + position * 30),
        ]
        buffer += line.jsonText + "\n"
        written += 1
      }
      sessionNumber += 1
      if buffer.utf8.count > 1 << 20 {
        handle.write(Data(buffer.utf8))
        buffer = ""
      }
    }
    handle.write(Data(buffer.utf8))
  }

  // MARK: - Measuring

  /// The in-process open of the memory (read-only, so nothing is written), median of three.
  static func openMilliseconds(db: String, model: String) throws -> Double {
    let embedder: any Embedder =
      model == "minilm"
      ? try BertEmbedder(locator: ModelLocator())
      : try HashingEmbedder(dimension: Int(model.split(separator: ":").last ?? "384") ?? 384)
    var samples: [Double] = []
    for _ in 0..<3 {
      let start = ContinuousClock.now
      let engine = try MemoryEngine(
        path: db, configuration: EngramConfiguration(embedder: embedder, readOnly: true))
      samples.append((ContinuousClock.now - start).seconds * 1000)
      engine.close()
    }
    return Measure.percentile(samples, 0.5)
  }

  /// The `engram` binary built beside this one.
  static func engramBinary() throws -> String {
    let own =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    let binary = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("engram").path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
      throw BenchError(
        "no engram binary beside engram-bench at \(binary); run `swift build -c release` first")
    }
    return binary
  }

  /// Runs `binary arguments` with stdin and stdout on /dev/null and stderr captured.
  static func child(_ binary: String, _ arguments: [String], in folder: URL) throws -> ChildRun {
    let errorPath = folder.appendingPathComponent("stderr.txt").path
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let start = ContinuousClock.now
    let code = posix_spawn(&pid, binary, &actions, nil, argv, environ)
    guard code == 0 else { throw BenchError("cannot start \(binary): \(String(cString: strerror(code)))") }
    // Wait without reaping, so /proc/PID/io still describes the finished child.
    var info = siginfo_t()
    while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
    let seconds = (ContinuousClock.now - start).seconds
    let io = (try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)) ?? ""
    func counter(_ name: String) -> Int {
      io.split(separator: "\n").first { $0.hasPrefix(name + ":") }
        .flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }
    let writeBytes = counter("write_bytes")
    let cancelledBytes = counter("cancelled_write_bytes")
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let standardError = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
    let exitCode = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    guard exitCode == 0 else {
      throw BenchError("engram \(arguments.joined(separator: " ")) exited \(exitCode): \(standardError)")
    }
    let cpu =
      Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
      + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    return ChildRun(
      status: exitCode, seconds: seconds, cpuSeconds: cpu, peakBytes: Int(usage.ru_maxrss) * 1024,
      writeBytes: writeBytes, netWriteBytes: writeBytes < 0 ? -1 : writeBytes - max(0, cancelledBytes),
      standardError: standardError)
  }

  static func megabytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }

  static func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
  }

  /// The host's one-minute load average: above the core count, wall times include waiting.
  static func loadAverage() -> Double {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return Double(text.split(separator: " ").first ?? "") ?? -1
  }

  static func cpuName() -> String {
    let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let line = info.split(separator: "\n").first { $0.hasPrefix("model name") }
    return line.map {
      String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces)
    }
      ?? "unknown"
  }
}
