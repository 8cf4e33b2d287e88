import Engram
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// `engram reminders`, `engram calendar` and reminders in `engram chat`: the built binary on
/// temporary memories.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RemindersCommandTests {
  /// Wednesday 2025-06-11 10:00 in Shanghai.
  static let now = "2025-06-11T10:00:00+08:00"
  let nowDate = ISO8601DateFormatter().date(from: now)!

  private func openEngine(_ path: String) throws -> MemoryEngine {
    let embedder = try EngineAccess.spec(forDatabaseAt: path).makeEmbedder(
      environment: ScratchFolder.environment)
    return try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
  }

  /// A memory with: a reminder due an hour ago, one due tomorrow, an event tomorrow afternoon
  /// and one next week.
  private func seeded(_ scratch: ScratchFolder) async throws -> (String, [String: Int64]) {
    let db = try await scratch.initializedDatabase()
    let engine = try openEngine(db)
    defer { engine.close() }
    var ids: [String: Int64] = [:]
    ids["overdue"] = try await engine.agentRecords.addItem(
      kind: .reminder, title: "water the plants", due: nowDate - 3600)
    ids["tomorrow"] = try await engine.agentRecords.addItem(
      kind: .reminder, title: "call the bank", due: nowDate + 86_400)
    ids["review"] = try await engine.agentRecords.addItem(
      kind: .event, title: "project review", due: nowDate + 86_400 + 4 * 3600)
    ids["standup"] = try await engine.agentRecords.addItem(
      kind: .event, title: "standup", due: nowDate + 7 * 86_400)
    return (db, ids)
  }

  @Test func listsDeliversOnceAndPeeks() async throws {
    let scratch = try ScratchFolder()
    let (db, ids) = try await seeded(scratch)
    let listed = try await engram("reminders", "--db", db, "--now", Self.now)
    #expect(listed.status == 0)
    #expect(
      listed.standardOutput == """
        #\(ids["overdue"]!)  2025-06-11 09:00 (Wed)  water the plants (late 1h)
        #\(ids["tomorrow"]!)  2025-06-12 10:00 (Thu)  call the bank

        """)
    let peeked = try await engram("reminders", "--db", db, "--due", "--peek", "--now", Self.now, "--json")
    #expect(peeked.status == 0)
    let peekedLines = try jsonLines(peeked.standardOutput)
    #expect(peekedLines.count == 1)
    #expect(peekedLines.first?["title"] as? String == "water the plants")
    #expect(peekedLines.first?["due"] as? String == "2025-06-11T09:00:00+08:00")
    #expect(peekedLines.first?["delivered_at"] == nil)
    let delivered = try await engram("reminders", "--db", db, "--due", "--now", Self.now)
    #expect(delivered.standardOutput.contains("water the plants"))
    let again = try await engram("reminders", "--db", db, "--due", "--now", Self.now)
    #expect(again.status == 0)
    #expect(again.standardOutput == "")
    #expect(again.standardError == "no reminders are due\n")
    let engine = try openEngine(db)
    defer { engine.close() }
    #expect(try await engine.agentRecords.item(ids["overdue"]!)?.deliveredAt != nil)
    #expect(try await engine.agentRecords.item(ids["tomorrow"]!)?.deliveredAt == nil)
  }

  @Test func calendarListsARangeGivenAsDatesOrWords() async throws {
    let scratch = try ScratchFolder()
    let (db, ids) = try await seeded(scratch)
    let tomorrow = try await engram(
      "calendar", "--db", db, "--now", Self.now, "--from", "tomorrow", "--to", "tomorrow", "--json")
    #expect(tomorrow.status == 0)
    #expect(try jsonLines(tomorrow.standardOutput).compactMap { $0["id"] as? Int } == [Int(ids["review"]!)])
    let all = try await engram("calendar", "--db", db, "--now", Self.now)
    #expect(all.standardOutput.contains("project review") && all.standardOutput.contains("standup"))
    let iso = try await engram("calendar", "--db", db, "--from", "2025-06-18", "--to", "2025-06-18")
    #expect(iso.standardOutput.contains("standup") && !iso.standardOutput.contains("review"))
    let bad = try await engram("calendar", "--db", db, "--from", "someday soon")
    #expect(bad.status == 64)
    #expect(bad.standardError.contains("--from"))
    let backwards = try await engram("calendar", "--db", db, "--from", "2025-06-18", "--to", "2025-06-12")
    #expect(backwards.status == 64)
    #expect(SwiftInternals.find(in: bad.standardError + backwards.standardError).isEmpty)
  }

  @Test func optionsThatDoNotGoTogetherAreRefusedWithASentence() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    for arguments in [
      ["--peek"], ["--exec", "true"], ["--watch", "--due"], ["--watch", "--now", Self.now],
      ["--now", "yesterday"],
    ] {
      let result = try await EngramBinary.run(
        ["reminders", "--db", db] + arguments, environment: ScratchFolder.environment)
      #expect(result.status == 64, "\(arguments)")
      #expect(!result.standardError.isEmpty)
      #expect(SwiftInternals.find(in: result.standardError).isEmpty)
    }
  }

  @Test func chatShowsDueRemindersOnceAtStart() async throws {
    let scratch = try ScratchFolder()
    let (db, _) = try await seeded(scratch)
    let first = try await engram("chat", "--db", db, "--now", Self.now, input: "what time is it\n")
    #expect(first.status == 0)
    let lines = first.standardOutput.split(separator: "\n").map(String.init)
    #expect(lines.first?.hasPrefix("⏰ #") == true)
    #expect(lines.first?.contains("water the plants") == true)
    #expect(lines.count == 2)
    #expect(lines.last?.contains("2025-06-11 10:00") == true)
    let second = try await engram("chat", "--db", db, "--now", Self.now, input: "what time is it\n")
    #expect(!second.standardOutput.contains("water the plants"))
  }

  @Test func watchRunsTheCommandForEachReminderOnceAcrossARestart() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let start = Date()
    do {
      let engine = try openEngine(db)
      defer { engine.close() }
      try await engine.agentRecords.addItem(
        kind: .reminder, title: "first", body: "with a note", due: start + 1)
      try await engine.agentRecords.addItem(kind: .reminder, title: "second", due: start + 4)
      try await engine.agentRecords.addItem(kind: .reminder, title: "much later", due: start + 3600)
    }
    let log = scratch.path("exec.log")
    let command =
      #"printf '%s|%s|%s\n' "$ENGRAM_REMINDER_TITLE" "$ENGRAM_REMINDER_BODY" "$ENGRAM_REMINDER_ID" >> '"#
      + log + "'"
    func startWatcher(_ output: String) throws -> ChildProcess {
      var environment = ProcessInfo.processInfo.environment
      environment.merge(ScratchFolder.environment) { $1 }
      return try ChildProcess(
        try EngramBinary.locate().path, arguments: ["reminders", "--db", db, "--watch", "--exec", command],
        environment: environment, standardOutput: .file(scratch.path(output)),
        standardError: .file(scratch.path(output + ".err")))
    }
    @Sendable func logLines() -> [String] {
      ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
    let watcher = try startWatcher("watch1.out")
    #expect(await eventually(within: .seconds(30), every: .milliseconds(100)) { logLines().count >= 1 })
    _ = await watcher.kill()
    // The second comes due while no watcher runs; the next one shows it, once.
    try await Task.sleep(for: .seconds(4))
    let restarted = try startWatcher("watch2.out")
    #expect(await eventually(within: .seconds(30), every: .milliseconds(100)) { logLines().count >= 2 })
    try await Task.sleep(for: .seconds(2))
    _ = await restarted.kill()
    let lines = logLines()
    let errors = ["watch1.out.err", "watch2.out.err"].map {
      (try? String(contentsOfFile: scratch.path($0), encoding: .utf8)) ?? ""
    }.joined()
    #expect(lines.count == 2, "watcher's standard error: \(errors)")
    #expect(lines.first?.hasPrefix("first|with a note|") == true)
    #expect(lines.last?.hasPrefix("second||") == true)
    let printed =
      try String(contentsOfFile: scratch.path("watch1.out"), encoding: .utf8)
      + String(contentsOfFile: scratch.path("watch2.out"), encoding: .utf8)
    #expect(printed.components(separatedBy: "first").count == 2)
    #expect(printed.components(separatedBy: "second").count == 2)
    #expect(!printed.contains("much later"))
  }

  /// A reminder whose title is larger than the system lets an environment value be (imported
  /// from an .ics VTODO), due just before a normal one: its command gets the title trimmed
  /// and the whole reminder in ENGRAM_REMINDER_FILE; a command that fails is a sentence on
  /// standard error; the watcher keeps watching and the next reminder's command runs.
  @Test func aHugeTitleOrAFailingCommandNeverCostsTheNextReminder() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let start = Date()
    let huge = String(repeating: "x", count: 140_000)
    func utc(_ date: Date) -> String {
      let formatter = ISO8601DateFormatter()
      formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
      return formatter.string(from: date).replacingOccurrences(of: "-", with: "")
        .replacingOccurrences(of: ":", with: "")
    }
    let ics = try scratch.write(
      "huge.ics",
      "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:huge@test\r\nDUE:\(utc(start + 2))\r\nSUMMARY:\(huge)\r\n"
        + "END:VTODO\r\nBEGIN:VTODO\r\nUID:next@test\r\nDUE:\(utc(start + 3))\r\nSUMMARY:next one\r\n"
        + "END:VTODO\r\nEND:VCALENDAR\r\n")
    #expect(try await engram("import", "--db", db, ics).status == 0)
    let log = scratch.path("exec.log")
    // Logs the title's length, whether it was trimmed, and the size of the reminder's file; then
    // fails, so each reminder's command also reports a failure.
    let command =
      #"printf '%s|%s|%s|%s\n' "${#ENGRAM_REMINDER_TITLE}" "$ENGRAM_REMINDER_TRIMMED" ""#
      + #"$(wc -c < "$ENGRAM_REMINDER_FILE")" "$ENGRAM_REMINDER_TITLE" | cut -c1-80 >> '"# + log + "'; exit 3"
    var environment = ProcessInfo.processInfo.environment
    environment.merge(ScratchFolder.environment) { $1 }
    let watcher = try ChildProcess(
      try EngramBinary.locate().path, arguments: ["reminders", "--db", db, "--watch", "--exec", command],
      environment: environment, standardOutput: .file(scratch.path("watch.out")),
      standardError: .file(scratch.path("watch.err")))
    @Sendable func logLines() -> [String] {
      ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
    let both = await eventually(within: .seconds(30), every: .milliseconds(100)) { logLines().count >= 2 }
    let stillWatching = await watcher.exit(within: .milliseconds(1500)) == nil
    _ = await watcher.kill()
    let errors = ChildProcess.readText(scratch.path("watch.err"))
    #expect(both, "watcher's standard error: \(errors.prefix(500))")
    #expect(stillWatching)
    let lines = logLines()
    #expect(lines.count == 2)
    // The title was cut to 16 KiB (with an ellipsis), the file holds all 140,000 characters.
    let first = lines.first?.split(separator: "|").map(String.init) ?? []
    #expect(first.count >= 3 && Int(first[0]).map { $0 > 1000 && $0 <= 16_384 } == true)
    #expect(first.count >= 3 && first[1] == "1")
    #expect(first.count >= 3 && (Int(first[2].trimmingCharacters(in: .whitespaces)) ?? 0) > 140_000)
    #expect(lines.last?.hasPrefix("8||") == true)
    #expect(lines.last?.hasSuffix("|next one") == true)
    #expect(errors.components(separatedBy: "--exec exited with status 3 for reminder #").count == 3)
    let printed = ChildProcess.readText(scratch.path("watch.out"))
    #expect(printed.contains("next one"))
    #expect(printed.contains(String(repeating: "x", count: 1000)))
  }
}
