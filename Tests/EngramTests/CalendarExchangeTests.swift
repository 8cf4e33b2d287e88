import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Reminders and events out and back in as iCalendar: the export's shape, a round trip into
/// another memory, idempotent re-import (and updates by UID), and files refused whole.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct CalendarExchangeTests {
  let base = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15T15:06:40Z
  let stamp = Date(timeIntervalSince1970: 1_760_000_000)
  let zone = TimeZone(identifier: "Europe/Paris")!

  func seeded(_ folder: TemporaryFolder, name: String = "m.sqlite") async throws -> MemoryEngine {
    let engine = try MemoryEngine(path: folder.path(name), configuration: hashingConfiguration())
    let records = engine.agentRecords
    try await records.addItem(
      kind: .event, title: "Dinner, with Ana; 🍣 at 寿司屋", body: "table for two\nbring \\ the gift",
      due: base)
    let done = try await records.addItem(
      kind: .reminder, title: "call the bank", due: base.addingTimeInterval(3600))
    try await records.setItemDone(done)
    try await records.addItem(kind: .reminder, title: "water the plants", due: base.addingTimeInterval(7200))
    try await records.addItem(kind: .reminder, title: "someday")
    try await records.addItem(kind: .note, title: "a note is not exported")
    try await records.addItem(kind: .event, title: "an undated event is not exported")
    return engine
  }

  @Test func exportWritesEventsAndRemindersWithStableUIDsUTCTimesAndAlarms() async throws {
    let folder = try TemporaryFolder()
    let engine = try await seeded(folder)
    defer { engine.close() }
    let text = try await engine.transfer.calendarText(stamp: stamp)
    #expect(text.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"))
    #expect(text.hasSuffix("END:VCALENDAR\r\n"))
    #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
    for line in text.components(separatedBy: "\r\n") { #expect(line.utf8.count <= 75) }
    let calendar = try #require(try ICalendarSyntax.parse(Data(text.utf8)).first)
    let events = calendar.components.filter { $0.name == "VEVENT" }
    let todos = calendar.components.filter { $0.name == "VTODO" }
    #expect(events.count == 1)
    #expect(todos.count == 3)
    let event = try #require(events.first)
    #expect(event.property("DTSTART")?.value == "20250615T150640Z")
    #expect(event.property("DTEND")?.value == "20250615T160640Z")
    #expect(event.property("DTSTAMP")?.value == "20251009T085320Z")
    #expect(
      event.property("SUMMARY").map { ICalendarSyntax.unescapeText($0.value) } == "Dinner, with Ana; 🍣 at 寿司屋"
    )
    #expect(event.property("DESCRIPTION")?.value == #"table for two\nbring \\ the gift"#)
    let databaseID = try #require(try engine.store.readTransaction { try $0.meta("database_id") })
      .lowercased()
    #expect(event.property("UID")?.value == "engram-event-1@\(databaseID)")
    #expect(todos.map { $0.property("STATUS")?.value } == ["COMPLETED", "NEEDS-ACTION", "NEEDS-ACTION"])
    #expect(todos[1].property("DUE")?.value == "20250615T170640Z")
    let alarm = try #require(todos[1].components.first)
    #expect(alarm.name == "VALARM")
    #expect(alarm.property("ACTION")?.value == "DISPLAY")
    #expect(alarm.property("TRIGGER")?.parameters["VALUE"] == "DATE-TIME")
    #expect(alarm.property("TRIGGER")?.value == "20250615T170640Z")
    // The undated reminder: no DUE, no alarm.
    #expect(todos[2].property("DUE") == nil && todos[2].components.isEmpty)
    // The same memory exports the same calendar again (the UIDs do not change).
    #expect(try await engine.transfer.calendarText(stamp: stamp) == text)
  }

  @Test func aRoundTripIntoAnotherMemoryKeepsItemsAndReimportingAddsNothing() async throws {
    let folder = try TemporaryFolder()
    let source = try await seeded(folder)
    defer { source.close() }
    let text = try await source.transfer.calendarText(stamp: stamp)
    let target = try MemoryEngine(path: folder.path("t.sqlite"), configuration: hashingConfiguration())
    defer { target.close() }
    let first = try await target.transfer.importCalendar(Data(text.utf8), timeZone: zone)
    #expect(first.added == 4 && first.updated == 0 && first.unchanged == 0)
    let items = try await target.agentRecords.items()
    #expect(
      items.map(\.title) == ["Dinner, with Ana; 🍣 at 寿司屋", "call the bank", "water the plants", "someday"])
    #expect(items[0].body == "table for two\nbring \\ the gift")
    #expect(items[0].dueAt == base)
    #expect(items[0].endsAt == base.addingTimeInterval(3600))
    #expect(items.map(\.done) == [false, true, false, false])
    #expect(items[3].dueAt == nil)
    let second = try await target.transfer.importCalendar(Data(text.utf8), timeZone: zone)
    #expect(second.added == 0 && second.updated == 0 && second.unchanged == 4)
    #expect(try await target.agentRecords.items().count == 4)
    // The target's export keeps the source's UIDs: a calendar app sees the same items.
    let again = try await target.transfer.calendarText(stamp: stamp)
    let uids = { (text: String) in
      text.components(separatedBy: "\r\n").filter { $0.hasPrefix("UID:") }
    }
    #expect(uids(again) == uids(text))
    // Re-importing the source's own export into the source adds nothing either.
    let own = try await source.transfer.importCalendar(Data(text.utf8), timeZone: zone)
    #expect(own.added == 0 && own.unchanged == 4)
  }

  @Test func aChangedFileUpdatesTheItemItNamesByUID() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    func calendar(_ start: String, _ summary: String) -> Data {
      Data(
        """
        BEGIN:VCALENDAR\r
        BEGIN:VEVENT\r
        UID:abc@example.com\r
        DTSTART:\(start)\r
        SUMMARY:\(summary)\r
        END:VEVENT\r
        END:VCALENDAR\r

        """.utf8)
    }
    #expect(
      try await engine.transfer.importCalendar(calendar("20250612T100000Z", "review"), timeZone: zone).added
        == 1)
    let moved = try await engine.transfer.importCalendar(
      calendar("20250613T100000Z", "review (moved)"), timeZone: zone)
    #expect(moved.added == 0 && moved.updated == 1)
    let items = try await engine.agentRecords.items()
    #expect(items.count == 1)
    #expect(items.first?.title == "review (moved)")
    #expect(items.first?.dueAt == ISO8601DateFormatter().date(from: "2025-06-13T10:00:00Z"))
    #expect(items.first?.calendarUID == "abc@example.com")
  }

  @Test(arguments: [
    "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20250612T100000Z\r\nSUMMARY:ok\r\nEND:VEVENT\r\n"
      + "BEGIN:VEVENT\r\nUID:b\r\nDTSTART:20251312T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20250612T100000Z\r\nSUMMARY:ok\r\nEND:VEVENT\r\n"
      + "BEGIN:VTODO\r\nUID:b\r\nSUMMARY:left open\r\n",
    "SUMMARY:not a calendar\r\n",
  ])
  func aBadFileStoresNothingAndLeavesStoredItemsAsTheyWere(_ text: String) async throws {
    let folder = try TemporaryFolder()
    let engine = try await seeded(folder)
    defer { engine.close() }
    let before = try await engine.agentRecords.items()
    await #expect(throws: ICalendarError.self) {
      try await engine.transfer.importCalendar(Data(text.utf8), timeZone: zone)
    }
    #expect(try await engine.agentRecords.items() == before)
  }

  @Test func ownUIDsAreRecognisedOnlyForThisMemory() {
    let id = "0f6e3c1a-0000-4000-8000-000000000001"
    let event = ICalendarWriter.ownItem(uid: "engram-event-12@\(id)", calendarID: id)
    #expect(event?.kind == .event && event?.id == 12)
    let reminder = ICalendarWriter.ownItem(uid: "engram-reminder-3@\(id)", calendarID: id)
    #expect(reminder?.kind == .reminder && reminder?.id == 3)
    #expect(ICalendarWriter.ownItem(uid: "engram-event-12@another", calendarID: id) == nil)
    #expect(ICalendarWriter.ownItem(uid: "engram-event-x@\(id)", calendarID: id) == nil)
  }
}
