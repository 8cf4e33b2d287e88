import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Repeating events' occurrences against an independent implementation: python-dateutil's
/// rrule (scripts/check-rrule.py) over generated rules, zones (daylight saving, half-hour and
/// 45-minute offsets, southern hemisphere) and listing windows near and far from the start.
/// Gated like the iCalendar check: `make test` (ENGRAM_REQUIRE_ICALENDAR=1) requires it.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RecurrenceOracleTests {
  static let zones = [
    "UTC", "America/New_York", "America/Los_Angeles", "America/Sao_Paulo", "Europe/London", "Europe/Paris",
    "Asia/Tokyo", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham", "Africa/Casablanca",
  ]

  struct Case: Codable {
    var rule: String
    var start: String
    var zone: String
    var lower: Int64
    var upper: Int64
  }

  static func rule(using generator: inout SplitMix64, start: Date) -> String {
    let frequency = ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"].randomElement(using: &generator)!
    var parts = ["FREQ=" + frequency]
    if Bool.random(using: &generator) { parts.append("INTERVAL=\(Int.random(in: 1...5, using: &generator))") }
    if frequency == "WEEKLY", Bool.random(using: &generator) {
      let days = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"].filter { _ in Bool.random(using: &generator) }
      if !days.isEmpty { parts.append("BYDAY=" + days.joined(separator: ",")) }
      if Bool.random(using: &generator) {
        parts.append("WKST=" + ["MO", "SU", "TH"].randomElement(using: &generator)!)
      }
    }
    switch Int.random(in: 0..<4, using: &generator) {
    case 0: parts.append("COUNT=\(Int.random(in: 1...80, using: &generator))")
    case 1: parts.append("COUNT=\(Int.random(in: 100...20_000, using: &generator))")
    case 2:
      let until = start.addingTimeInterval(
        Double(Int.random(in: 0...3_000, using: &generator)) * 86_400 + 3_600)
      let text = ICalendarWriter.utc(until)
      parts.append("UNTIL=" + (Bool.random(using: &generator) ? text : String(text.prefix(8))))
    default: break
    }
    return parts.joined(separator: ";")
  }

  @Test(.enabled { await PythonICalendar.shouldRun() })
  func occurrencesMatchDateutilOverManyZonesAndRanges() async throws {
    let python = try #require(
      await PythonICalendar.python(),
      "the Python packages icalendar and python-dateutil are missing: run `make setup` (.venv-mcp)")
    var generator = SplitMix64(seed: 0x0DD1_7E57)
    var cases: [Case] = []
    var swift: [[Int64]] = []
    for index in 0..<400 {
      let zoneName = Self.zones[index % Self.zones.count]
      let zone = TimeZone(identifier: zoneName)!
      // A local start from 1970 to 2045 at any minute (the wall clock Python is given is the one
      // that instant shows, so a start never falls in a gap).
      let wall = Int64.random(in: 0...(76 * 365 * 86_400), using: &generator) / 60 * 60
      let start = Recurrence.instant(wall: wall, in: zone)
      let rule = Self.rule(using: &generator, start: start)
      let lower: Date
      switch index % 3 {
      case 0: lower = start.addingTimeInterval(-Double(Int.random(in: 0...40, using: &generator)) * 86_400)
      case 1: lower = start.addingTimeInterval(Double(Int.random(in: 0...3_650, using: &generator)) * 86_400)
      default:
        lower = start.addingTimeInterval(Double(Int.random(in: 3_650...25_000, using: &generator)) * 86_400)
      }
      let upper = lower.addingTimeInterval(Double(Int.random(in: 1...500, using: &generator)) * 86_400 + 7)
      let parsed = try #require(Recurrence(rule), "\(rule)")
      swift.append(
        parsed.occurrences(from: start, in: lower..<upper, timeZone: zone, limit: 100_000).map {
          Int64($0.timeIntervalSince1970)
        })
      cases.append(
        Case(
          rule: rule, start: ICalendarWriter.wall(start, in: zone).text, zone: zoneName,
          lower: Int64(ceil(lower.timeIntervalSince1970)), upper: Int64(ceil(upper.timeIntervalSince1970))))
    }
    let scratch = try ScratchFolder()
    let encoder = JSONEncoder()
    let lines = try cases.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
    let file = try scratch.write("cases.jsonl", lines.joined(separator: "\n") + "\n")
    let result = try await EngramBinary.runExecutable(
      [python, PythonICalendar.repository + "/scripts/check-rrule.py", file])
    try #require(result.status == 0, "\(result.standardError)")
    let expected = try result.standardOutput.split(separator: "\n").map {
      try JSONDecoder().decode([Int64].self, from: Data($0.utf8))
    }
    try #require(expected.count == cases.count)
    var mismatches = 0
    for (index, item) in cases.enumerated() where swift[index] != expected[index] {
      mismatches += 1
      if mismatches <= 5 {
        Issue.record(
          "\(item.rule) from \(item.start) \(item.zone) in [\(item.lower), \(item.upper)): Engram \(swift[index].prefix(6)) (\(swift[index].count)), dateutil \(expected[index].prefix(6)) (\(expected[index].count))"
        )
      }
    }
    #expect(mismatches == 0)
    // The cases are not all empty: most list something.
    #expect(expected.filter { !$0.isEmpty }.count > cases.count / 2)
  }
}
