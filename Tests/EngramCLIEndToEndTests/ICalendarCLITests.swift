import Engram
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// `engram export --format ics` and `engram import FILE.ics` through the built binary, and the
/// export checked by an independent parser (Python's `icalendar`, scripts/check-ics.py).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ICalendarCLITests {
  /// 2025-06-15T15:06:40Z.
  let base = Date(timeIntervalSince1970: 1_750_000_000)

  private func openEngine(_ path: String) throws -> MemoryEngine {
    let embedder = try EngineAccess.spec(forDatabaseAt: path).makeEmbedder(
      environment: ScratchFolder.environment)
    return try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
  }

  /// A memory with an event (emoji, CJK, separators, a long body), a done reminder, a reminder
  /// to come and an undated one.
  private func seeded(_ scratch: ScratchFolder) async throws -> String {
    let db = try await scratch.initializedDatabase()
    let engine = try openEngine(db)
    defer { engine.close() }
    let records = engine.agentRecords
    try await records.addItem(
      kind: .event, title: "Dinner, with Ana; 🍣 at 寿司屋",
      body: "table for two\n" + String(repeating: "長い説明 with words, ", count: 20), due: base)
    let done = try await records.addItem(
      kind: .reminder, title: "call the bank", due: base.addingTimeInterval(3600))
    try await records.setItemDone(done)
    try await records.addItem(
      kind: .reminder, title: "water the plants 🌱", due: base.addingTimeInterval(7200))
    try await records.addItem(kind: .reminder, title: "someday")
    return db
  }

  @Test func exportToAFileAndImportIntoANewMemoryTwiceAddsItOnce() async throws {
    let scratch = try ScratchFolder()
    let db = try await seeded(scratch)
    let file = scratch.path("agenda.ics")
    let exported = try await engram("export", "--db", db, "--format", "ics", file)
    #expect(exported.status == 0)
    #expect(exported.standardError == "exported 1 event and 3 reminders to \(file)\n")
    let attributes = try FileManager.default.attributesOfItem(atPath: file)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let text = try String(contentsOfFile: file, encoding: .utf8)
    #expect(text.hasPrefix("BEGIN:VCALENDAR\r\n"))
    let printed = try await engram("export", "--db", db, "--format", "ics")
    #expect(printed.status == 0)
    let withoutStamps = { (text: String) in
      text.components(separatedBy: "\r\n").filter { !$0.hasPrefix("DTSTAMP:") }
    }
    #expect(withoutStamps(printed.standardOutput) == withoutStamps(text))

    let target = scratch.path("target.sqlite")
    let first = try await engram("import", "--db", target, "--model", "hashing", file)
    #expect(first.status == 0)
    #expect(first.standardOutput == "imported \(file) into \(target): 4 added, 0 already there\n")
    let second = try await engram("import", "--db", target, file)
    #expect(second.status == 0)
    #expect(second.standardOutput == "imported \(file) into \(target): 0 added, 4 already there\n")
    let events = try await engram("calendar", "--db", target, "--from", "2025-01-01", "--json")
    let lines = try jsonLines(events.standardOutput)
    #expect(lines.count == 1)
    #expect(lines.first?["title"] as? String == "Dinner, with Ana; 🍣 at 寿司屋")
    let engine = try openEngine(target)
    defer { engine.close() }
    #expect(
      try await engine.agentRecords.items().map(\.title) == [
        "Dinner, with Ana; 🍣 at 寿司屋", "call the bank", "water the plants 🌱", "someday",
      ])
  }

  @Test func floatingAndAllDayTimesAreReadInTheLocalTimeZone() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let file = try scratch.write(
      "local.ics",
      """
      BEGIN:VCALENDAR\r
      BEGIN:VEVENT\r
      UID:floating@example.com\r
      DTSTART:20250612T150000\r
      SUMMARY:floating\r
      END:VEVENT\r
      BEGIN:VEVENT\r
      UID:allday@example.com\r
      DTSTART;VALUE=DATE:20250613\r
      SUMMARY:all day\r
      END:VEVENT\r
      END:VCALENDAR\r

      """)
    var environment = ScratchFolder.environment
    environment["TZ"] = "Asia/Tokyo"
    let result = try await EngramBinary.run(["import", "--db", db, file], environment: environment)
    #expect(result.status == 0)
    let engine = try openEngine(db)
    defer { engine.close() }
    let formatter = ISO8601DateFormatter()
    #expect(
      try await engine.agentRecords.items().map(\.dueAt) == [
        formatter.date(from: "2025-06-12T15:00:00+09:00"), formatter.date(from: "2025-06-13T09:00:00+09:00"),
      ])
  }

  /// One event or to-do of each kind of time: all-day (one day, several days), floating, TZID
  /// (with a rule, a VTIMEZONE of a fixed offset), UTC (with a DURATION), all-day and TZID to-dos.
  static let everyKindOfTime = [
    "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN",
    "BEGIN:VTIMEZONE", "TZID:Fixed Plus Five Thirty", "BEGIN:STANDARD", "DTSTART:19700101T000000",
    "TZOFFSETFROM:+0530", "TZOFFSETTO:+0530", "END:STANDARD", "END:VTIMEZONE",
    "BEGIN:VEVENT", "UID:allday@test", "DTSTAMP:20240601T000000Z", "DTSTART;VALUE=DATE:20240613",
    "SUMMARY:one day", "END:VEVENT",
    "BEGIN:VEVENT", "UID:multiday@test", "DTSTAMP:20240601T000000Z", "DTSTART;VALUE=DATE:20240613",
    "DTEND;VALUE=DATE:20240616", "SUMMARY:three days", "DESCRIPTION:bring boots", "END:VEVENT",
    "BEGIN:VEVENT", "UID:floating@test", "DTSTAMP:20240601T000000Z", "DTSTART:20240613T150000",
    "DTEND:20240613T163000", "SUMMARY:floating", "END:VEVENT",
    "BEGIN:VEVENT", "UID:zoned@test", "DTSTAMP:20240601T000000Z",
    "DTSTART;TZID=America/New_York:20240615T190000", "DTEND;TZID=America/New_York:20240615T200000",
    "RRULE:FREQ=WEEKLY;BYDAY=SA;COUNT=3", "SUMMARY:new york saturdays", "END:VEVENT",
    "BEGIN:VEVENT", "UID:fixed@test", "DTSTAMP:20240601T000000Z",
    "DTSTART;TZID=Fixed Plus Five Thirty:20240613T100000",
    "DTEND;TZID=Fixed Plus Five Thirty:20240613T110000",
    "SUMMARY:fixed offset", "END:VEVENT",
    "BEGIN:VEVENT", "UID:utc@test", "DTSTAMP:20240601T000000Z", "DTSTART:20240613T070000Z",
    "DURATION:PT45M", "SUMMARY:utc", "END:VEVENT",
    "BEGIN:VTODO", "UID:todo-date@test", "DTSTAMP:20240601T000000Z", "DUE;VALUE=DATE:20240614",
    "SUMMARY:all-day to-do", "END:VTODO",
    "BEGIN:VTODO", "UID:todo-zoned@test", "DTSTAMP:20240601T000000Z", "DUE;TZID=Europe/Paris:20240614T090000",
    "SUMMARY:zoned to-do", "END:VTODO",
    "END:VCALENDAR", "",
  ].joined(separator: "\r\n")

  @Test(.enabled { await PythonICalendar.shouldRun() })
  func everyKindOfTimeComesBackAsItWentIn() async throws {
    let python = try #require(
      await PythonICalendar.python(),
      "the Python package icalendar is missing: run `make setup` (it installs icalendar into .venv-mcp)")
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let original = try scratch.write("original.ics", Self.everyKindOfTime)
    var environment = ScratchFolder.environment
    environment["TZ"] = "Asia/Tokyo"
    let imported = try await EngramBinary.run(["import", "--db", db, original], environment: environment)
    #expect(imported.status == 0, "\(imported.standardError)")
    // Exported on a machine in another zone: what came as a date or floating time stays so.
    environment["TZ"] = "America/Los_Angeles"
    let file = scratch.path("exported.ics")
    let exported = try await EngramBinary.run(
      ["export", "--db", db, "--format", "ics", file], environment: environment)
    #expect(exported.status == 0, "\(exported.standardError)")
    let check = try await EngramBinary.runExecutable(
      [python, PythonICalendar.repository + "/scripts/check-ics.py", file, "--same-as", original])
    #expect(check.status == 0, "\(check.standardError)")
    #expect(
      check.standardOutput.hasPrefix("check-ics: ok (6 events, 2 reminders; 8 the same as the original"))
    // Imported again in the zone of the first import, the export changes nothing.
    environment["TZ"] = "Asia/Tokyo"
    let again = try await EngramBinary.run(["import", "--db", db, file], environment: environment)
    #expect(again.standardOutput.hasSuffix(": 0 added, 8 already there\n"), "\(again.standardOutput)")
  }

  /// A weekly Saturday rule with a New York TZID, listed on a machine in Tokyo: New York's
  /// Saturdays (Sundays in Tokyo), the first one included, three in all.
  @Test func aRepeatingEventIsListedInItsOwnZone() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let original = try scratch.write("original.ics", Self.everyKindOfTime)
    var environment = ScratchFolder.environment
    environment["TZ"] = "Asia/Tokyo"
    #expect(
      try await EngramBinary.run(["import", "--db", db, original], environment: environment).status == 0)
    let listed = try await EngramBinary.run(
      ["calendar", "--db", db, "--from", "2024-06-14", "--to", "2024-08-31", "--json"],
      environment: environment)
    let saturdays = try jsonLines(listed.standardOutput).filter {
      $0["title"] as? String == "new york saturdays"
    }
    #expect(
      saturdays.compactMap { $0["due"] as? String } == [
        "2024-06-16T08:00:00+09:00", "2024-06-23T08:00:00+09:00", "2024-06-30T08:00:00+09:00",
      ])
  }

  @Test func calendarSaysWhenItStopsEarlyAndLimitGoesFurther() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    do {
      let engine = try openEngine(db)
      defer { engine.close() }
      for hour in 0..<5 {
        try await engine.agentRecords.addItem(
          kind: .event, title: "event \(hour)", due: base + Double(hour) * 3600)
      }
    }
    let from = "2025-06-15T00:00:00Z"
    let cut = try await engram("calendar", "--db", db, "--from", from, "--limit", "3", "--json")
    #expect(cut.status == 0)
    #expect(try jsonLines(cut.standardOutput).count == 3)
    #expect(
      cut.standardError
        == "calendar: listed the first 3 events; more fall in that range (--limit N lists more)\n")
    let all = try await engram("calendar", "--db", db, "--from", from, "--limit", "5", "--json")
    #expect(try jsonLines(all.standardOutput).count == 5)
    #expect(all.standardError.isEmpty)
    let zero = try await engram("calendar", "--db", db, "--limit", "0")
    #expect(zero.status == 64)
  }

  @Test func aMalformedFileNamesItsLineAndStoresNothing() async throws {
    let scratch = try ScratchFolder()
    let db = try await seeded(scratch)
    let bad = try scratch.write(
      "bad.ics",
      "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20250612T100000Z\r\nEND:VEVENT\r\n"
        + "BEGIN:VEVENT\r\nUID:b\r\nDTSTART:20250631T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    let result = try await engram("import", "--db", db, bad)
    #expect(result.status == 1)
    #expect(
      result.standardError.contains(
        "\(bad):8: DTSTART is not a date or date-time: 20250631T100000Z; nothing was imported"))
    let open = try scratch.write("open.ics", "BEGIN:VCALENDAR\nBEGIN:VTODO\nSUMMARY:x\n")
    let unterminated = try await engram("import", "--db", db, open)
    #expect(unterminated.standardError.contains("\(open):2: BEGIN:VTODO has no END:VTODO"))
    let engine = try openEngine(db)
    defer { engine.close() }
    #expect(try await engine.agentRecords.items().count == 4)
  }

  @Test func standardInputIsReadAsICalendarWithFormatICS() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let result = try await engram(
      "import", "--db", db, "--format", "ics", "-",
      input: "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:x\r\nSUMMARY:piped\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")
    #expect(result.status == 0)
    #expect(result.standardOutput == "imported standard input into \(db): 1 added, 0 already there\n")
  }

  @Test(.enabled { await PythonICalendar.shouldRun() })
  func theExportPassesPythonsICalendarAndRoundTrips() async throws {
    let python = try #require(
      await PythonICalendar.python(),
      "the Python package icalendar is missing: run `make setup` (it installs icalendar into .venv-mcp)")
    let scratch = try ScratchFolder()
    let db = try await seeded(scratch)
    let file = scratch.path("agenda.ics")
    #expect(try await engram("export", "--db", db, "--format", "ics", file).status == 0)
    let expected: [[String: String?]] = [
      [
        "type": "VEVENT", "summary": "Dinner, with Ana; 🍣 at 寿司屋", "start": "2025-06-15T15:06:40Z",
        "description": "table for two\n" + String(repeating: "長い説明 with words, ", count: 20),
      ],
      ["type": "VTODO", "summary": "call the bank", "start": "2025-06-15T16:06:40Z", "status": "COMPLETED"],
      [
        "type": "VTODO", "summary": "water the plants 🌱", "start": "2025-06-15T17:06:40Z",
        "status": "NEEDS-ACTION",
      ],
      ["type": "VTODO", "summary": "someday", "start": nil, "status": "NEEDS-ACTION"],
    ]
    let expectedFile = scratch.path("expected.json")
    try JSONSerialization.data(withJSONObject: expected.map { $0.mapValues { $0 ?? NSNull() as Any } })
      .write(to: URL(fileURLWithPath: expectedFile))
    let result = try await EngramBinary.runExecutable(
      [python, PythonICalendar.repository + "/scripts/check-ics.py", file, expectedFile])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.hasPrefix("check-ics: ok (1 events, 3 reminders"))
  }
}

/// Where the independent iCalendar check runs: the Python with `icalendar` (`$ENGRAM_PYTHON`,
/// else the repository's .venv-mcp, else `python3`). `make test` sets
/// ENGRAM_REQUIRE_ICALENDAR=1, so there a missing package fails the test instead of skipping it.
enum PythonICalendar {
  /// The repository's root folder.
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  /// A Python that imports `icalendar`, or nil (each candidate is asked, awaited, in turn).
  static func python() async -> String? {
    var candidates: [String] = []
    if let explicit = ProcessInfo.processInfo.environment["ENGRAM_PYTHON"] { candidates.append(explicit) }
    candidates.append(repository + "/.venv-mcp/bin/python")
    candidates += ["/usr/bin/python3", "/usr/local/bin/python3"]
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
      if let result = try? await EngramBinary.runExecutable([candidate, "-c", "import icalendar"]),
        result.status == 0
      {
        return candidate
      }
    }
    return nil
  }

  /// Whether the check runs: the package is there, or `make test` requires it.
  static func shouldRun() async -> Bool {
    if ProcessInfo.processInfo.environment["ENGRAM_REQUIRE_ICALENDAR"] == "1" { return true }
    return await python() != nil
  }
}
