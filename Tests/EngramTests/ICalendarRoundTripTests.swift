import EngramCore
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Export writes only what import reads, and import reads back what export wrote: random items
/// of every time form (UTC, all-day, floating, TZID with an IANA zone or a fixed offset), years
/// 1 to 9999, with ends, rules and awkward text; and what a file cannot hold is refused on import
/// with its line (or left out of an export).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ICalendarRoundTripTests {
  static let zones = [
    "America/New_York", "Europe/London", "Asia/Tokyo", "Australia/Lord_Howe", "Asia/Kolkata", "UTC",
    "Pacific/Chatham", "GMT+0530", "GMT-0345",
  ]
  let stamp = Date(timeIntervalSince1970: 1_750_000_000)

  func read(_ text: String, timeZone: TimeZone) throws -> [CalendarEntry] {
    try ICalendarReader(timeZone: timeZone).entries(of: ICalendarSyntax.parse(Data(text.utf8))).entries
  }

  func randomItem(_ id: Int64, using generator: inout SplitMix64) -> AgentItem {
    let form = AgentItemTimeForm.allCases.randomElement(using: &generator)!
    let zoneName = form == .utc ? nil : Self.zones.randomElement(using: &generator)!
    let zone = zoneName.flatMap(CalendarZone.named) ?? TimeZone(identifier: "UTC")!
    // A wall-clock time from year 1 to 9999 (an instant for UTC): the first of a twice-happening
    // local time, as a file can only name that one.
    let day = Int64.random(in: WallClock.firstDay + 1...WallClock.lastDay - 40, using: &generator)
    let seconds =
      form == .date
      ? Int64(ICalendarReader.allDayHour) * 3600 : Int64.random(in: 0..<86_400, using: &generator)
    let wall = day * 86_400 + seconds
    let start =
      form == .utc ? Date(timeIntervalSince1970: Double(wall)) : Recurrence.instant(wall: wall, in: zone)
    let kind: AgentItemKind = Bool.random(using: &generator) ? .event : .reminder
    var end: Date?
    if kind == .event, Bool.random(using: &generator) {
      if form == .date {
        end = Recurrence.instant(wall: wall + Int64.random(in: 1...30, using: &generator) * 86_400, in: zone)
      } else {
        end = start.addingTimeInterval(Double(Int.random(in: 0...(30 * 86_400), using: &generator)))
      }
    }
    let pieces = ["dinner", "寿司屋", "🍣", "a, b; c", "back\\slash", "two\nlines", "tab\there", "é", "x"]
    func text() -> String {
      (0..<Int.random(in: 1...40, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
        .joined(separator: " ")
    }
    return AgentItem(
      id: id, kind: kind, title: text(), body: Bool.random(using: &generator) ? text() : nil, dueAt: start,
      createdAt: stamp, done: kind == .reminder && Bool.random(using: &generator), endsAt: end,
      calendarUID: "item-\(id)@test",
      recurrence: kind == .event && Bool.random(using: &generator)
        ? RuleSamples.rule(using: &generator, untilAfter: start) : nil,
      timeForm: form, timeZone: zoneName)
  }

  @Test func randomItemsComeBackThroughExportAndImport() throws {
    var generator = SplitMix64(seed: 0x1CA1_E4DA)
    for round in 0..<400 {
      let item = randomItem(Int64(round + 1), using: &generator)
      let text = ICalendarWriter.calendar(items: [item], calendarID: "test", stamp: stamp)
      // Dates and floating times are read in the importing user's zone: the one they were stored in.
      let zone =
        item.timeForm == .utc || item.timeForm == .zoned
        ? TimeZone(identifier: "Asia/Tokyo")! : CalendarZone.named(item.timeZone!)!
      let entries = try read(text, timeZone: zone)
      try #require(entries.count == 1, "\(text)")
      let entry = entries[0]
      let context = "round \(round): \(text)"
      #expect(entry.kind == item.kind, "\(context)")
      #expect(entry.uid == item.calendarUID, "\(context)")
      #expect(entry.title == item.title, "\(context)")
      #expect(entry.body == item.body, "\(context)")
      #expect(entry.start == item.dueAt, "\(context)")
      #expect(entry.timeForm == item.timeForm, "\(context)")
      // Dates and floating times take the reader's zone, under the name it has here.
      #expect(
        entry.timeZone
          == (item.timeForm == .zoned || item.timeForm == .utc ? item.timeZone : CalendarZone.name(of: zone)),
        "\(context)")
      #expect(entry.recurrence == item.recurrence, "\(context)")
      #expect(entry.done == item.done, "\(context)")
      if item.kind == .event {
        if let end = item.endsAt {
          #expect(entry.end == end, "\(context)")
        } else if item.timeForm == .date {
          #expect(entry.end == nil, "\(context)")
        } else {
          #expect(entry.end == nil || entry.end == item.dueAt!.addingTimeInterval(3600), "\(context)")
        }
      }
    }
  }

  @Test func anItemAFileCannotHoldIsLeftOutOfTheExport() throws {
    let year10000 = Date(timeIntervalSince1970: 253_402_300_800)  // 10000-01-01T00:00:00Z
    let items = [
      AgentItem(id: 1, kind: .event, title: "too late", dueAt: year10000, createdAt: stamp),
      AgentItem(
        id: 2, kind: .reminder, title: "too late", dueAt: year10000.addingTimeInterval(86_400 * 400),
        createdAt: stamp),
      AgentItem(
        id: 3, kind: .event, title: "last half hour", dueAt: year10000.addingTimeInterval(-1800),
        createdAt: stamp),
    ]
    let text = ICalendarWriter.calendar(items: items, calendarID: "test", stamp: stamp)
    #expect(!text.contains("10000"))
    let entries = try read(text, timeZone: TimeZone(identifier: "UTC")!)
    #expect(entries.map(\.title) == ["last half hour"])
    #expect(entries.first?.end == nil)
  }

  @Test(arguments: [
    (
      "DTSTART:20250612T100000Z\r\nDTEND:20250612T090000Z",
      ICalendarError(line: 5, .endBeforeStart(property: "DTEND", start: "DTSTART"))
    ),
    (
      "DTSTART:20250612T100000Z\r\nDURATION:-PT1H", ICalendarError(line: 5, .negativeDuration(value: "-PT1H"))
    ),
    (
      "DTSTART:20250612T100000Z\r\nDURATION:P99999999W",
      ICalendarError(line: 5, .outOfRange(property: "DTSTART + DURATION"))
    ),
    (
      "DTSTART:99991231T233000Z\r\nDURATION:PT1H",
      ICalendarError(line: 5, .outOfRange(property: "DTSTART + DURATION"))
    ),
    (
      "DTSTART:20250612T100000Z\r\nDTEND:20250612T110000Z\r\nDURATION:PT1H",
      ICalendarError(line: 5, .conflictingProperties("DTEND", "DURATION"))
    ),
    (
      "DTSTART;VALUE=DATE:20250612\r\nDTEND:20250613T100000Z",
      ICalendarError(line: 5, .valueTypeMismatch(property: "DTEND", date: true))
    ),
    (
      "DTSTART;VALUE=DATE:20250612\r\nDTEND;VALUE=DATE:20250612",
      ICalendarError(line: 5, .endBeforeStart(property: "DTEND", start: "DTSTART"))
    ),
    (
      "DTSTART;VALUE=DATE:20250612\r\nDURATION:PT1H",
      ICalendarError(line: 5, .durationNotInDays(value: "PT1H"))
    ),
    (
      "DTSTART:00000101T100000Z",
      ICalendarError(line: 4, .invalidDate(property: "DTSTART", value: "00000101T100000Z"))
    ),
    (
      "DTSTART:20250612T100000Z\r\nRRULE:FREQ=DAILY;INTERVAL=0",
      ICalendarError(
        line: 5,
        .invalidRecurrence(
          value: "FREQ=DAILY;INTERVAL=0", reason: "INTERVAL must be a whole number of at least 1, not 0"))
    ),
    (
      "DTSTART:20250612T100000Z\r\nRRULE:FREQ=DAILY;COUNT=-1",
      ICalendarError(
        line: 5,
        .invalidRecurrence(
          value: "FREQ=DAILY;COUNT=-1", reason: "COUNT must be a whole number of at least 1, not -1"))
    ),
    (
      "DTSTART:20250612T100000Z\r\nRRULE:FREQ=DAILY;COUNT=2;UNTIL=20250701",
      ICalendarError(
        line: 5,
        .invalidRecurrence(
          value: "FREQ=DAILY;COUNT=2;UNTIL=20250701", reason: "COUNT and UNTIL cannot both be given"))
    ),
    (
      "DTSTART:20250612T100000Z\r\nRRULE:FREQ=FORTNIGHTLY",
      ICalendarError(
        line: 5,
        .invalidRecurrence(
          value: "FREQ=FORTNIGHTLY", reason: "FREQ must be one of SECONDLY ... YEARLY, not FORTNIGHTLY"))
    ),
  ])
  func nonsenseIsRefusedWithItsLine(_ properties: String, _ error: ICalendarError) {
    #expect(throws: error) {
      try read(
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\n" + properties + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        timeZone: TimeZone(identifier: "UTC")!)
    }
  }

  @Test func aRuleEngramDoesNotExpandIsStillAccepted() throws {
    let entries = try read(
      "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART:20250612T100000Z\r\n"
        + "RRULE:FREQ=MONTHLY;BYDAY=-1FR;BYSETPOS=1;X-NAME=1\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
      timeZone: TimeZone(identifier: "UTC")!)
    #expect(entries.first?.recurrence == "FREQ=MONTHLY;BYDAY=-1FR;BYSETPOS=1;X-NAME=1")
  }
}
