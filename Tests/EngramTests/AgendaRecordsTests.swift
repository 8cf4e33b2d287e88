import EngramCore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram

/// Reminders and events as the agenda skills, `engram reminders` and `memory_agenda` read
/// them: ranges, delivery (once, across processes), changes and cancellation.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct AgendaRecordsTests {
  let base = Date(timeIntervalSince1970: 1_750_000_000)

  @Test func agendaListsOneKindInItsRangeSoonestFirst() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let records = engine.agentRecords
    let late = try await records.addItem(kind: .reminder, title: "late", due: base.addingTimeInterval(7200))
    let early = try await records.addItem(kind: .reminder, title: "early", due: base.addingTimeInterval(60))
    _ = try await records.addItem(kind: .event, title: "event", due: base.addingTimeInterval(120))
    _ = try await records.addItem(kind: .reminder, title: "undated")
    let past = try await records.addItem(kind: .reminder, title: "past", due: base.addingTimeInterval(-60))
    #expect(try await records.agenda(kind: .reminder).map(\.id) == [past, early, late])
    #expect(try await records.agenda(kind: .reminder, from: base).map(\.id) == [early, late])
    // `to` is exclusive.
    #expect(
      try await records.agenda(kind: .reminder, from: base, to: base.addingTimeInterval(7200)).map(\.id) == [
        early
      ])
    #expect(try await records.agenda(kind: .event).map(\.title) == ["event"])
    #expect(try await records.agenda(kind: .reminder, limit: 1).map(\.id) == [past])
  }

  @Test func dueRemindersAreDeliveredOnceAndMovingOneDeliversItAgain() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let records = engine.agentRecords
    let due = try await records.addItem(kind: .reminder, title: "due", due: base)
    let later = try await records.addItem(kind: .reminder, title: "later", due: base.addingTimeInterval(600))
    _ = try await records.addItem(kind: .event, title: "an event is never delivered", due: base)
    let first = try await records.deliverDueReminders(at: base)
    #expect(first.map(\.id) == [due])
    #expect(first.first?.deliveredAt == base)
    #expect(try await records.item(due)?.deliveredAt == base)
    #expect(try await records.deliverDueReminders(at: base.addingTimeInterval(1)).isEmpty)
    #expect(try await records.agenda(kind: .reminder, undeliveredOnly: true).map(\.id) == [later])
    // Moved to a new time, it comes due again; renamed only, it stays delivered.
    try await records.updateItem(due, title: "due, renamed")
    #expect(try await records.item(due)?.deliveredAt == base)
    let moved = try await records.updateItem(due, due: base.addingTimeInterval(300))
    #expect(moved.deliveredAt == nil)
    #expect(moved.title == "due, renamed")
    #expect(
      try await records.deliverDueReminders(at: base.addingTimeInterval(900)).map(\.id) == [due, later])
  }

  /// Each reminder is claimed just before its hand-over, not all up front: a hand-over that
  /// fails releases its own claim and leaves the ones after it due.
  @Test func aFailedHandOverReleasesItsReminderAndLeavesTheNextOnesDue() async throws {
    struct HandOverFailed: Error {}
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let records = engine.agentRecords
    let first = try await records.addItem(kind: .reminder, title: "first", due: base)
    let failing = try await records.addItem(
      kind: .reminder, title: "failing", due: base.addingTimeInterval(1))
    let next = try await records.addItem(kind: .reminder, title: "next", due: base.addingTimeInterval(2))
    let now = base.addingTimeInterval(10)
    let handed = Mutex<[Int64]>([])
    await #expect(throws: HandOverFailed.self) {
      _ = try await engine.reminders.deliver(at: now) { item in
        if item.id == failing { throw HandOverFailed() }
        handed.withLock { $0.append(item.id ?? 0) }
      }
    }
    #expect(handed.withLock { $0 } == [first])
    #expect(try await records.item(first)?.deliveredAt == now)
    #expect(try await records.item(failing)?.deliveredAt == nil)
    #expect(try await records.item(next)?.deliveredAt == nil)
    let again = try await engine.reminders.deliver(at: now) { _ in }
    #expect(again.map(\.id) == [failing, next])
  }

  @Test func changesRefuseBlankTitlesAndMissingItems() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let records = engine.agentRecords
    let id = try await records.addItem(kind: .event, title: "standup", due: base)
    await #expect(throws: AgentRecordError.emptyField("title")) {
      try await records.updateItem(id, title: " ")
    }
    #expect(try await records.item(id)?.title == "standup")
    await #expect(throws: AgentRecordError.notFound(table: "agent_items", id: 999)) {
      try await records.updateItem(999, due: base)
    }
    try await records.deleteItem(id)
    #expect(try await records.item(id) == nil)
    await #expect(throws: AgentRecordError.notFound(table: "agent_items", id: id)) {
      try await records.deleteItem(id)
    }
  }

  @Test func twoEnginesOnOneFileNeverDeliverOneReminderTwice() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let setup = try MemoryEngine(path: path, configuration: hashingConfiguration())
    for index in 0..<200 {
      try await setup.agentRecords.addItem(
        kind: .reminder, title: "r\(index)", due: base.addingTimeInterval(Double(index)))
    }
    await setup.close()
    let engines = try (0..<2).map { _ in try MemoryEngine(path: path, configuration: hashingConfiguration()) }
    let start = base
    // Both claim as the clock moves, on their own threads, at the same time.
    let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
      for engine in engines {
        group.addTask {
          var ids: [Int64] = []
          for second in stride(from: 0, through: 200, by: 5) {
            ids += try await engine.agentRecords.deliverDueReminders(
              at: start.addingTimeInterval(Double(second))
            )
            .compactMap(\.id)
          }
          return ids
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    for engine in engines { await engine.close() }
    let all = claimed.flatMap { $0 }
    #expect(all.count == 200)
    #expect(Set(all).count == 200)
  }

  /// A repeating event (an imported RRULE) is listed at each of its occurrences in a range,
  /// those of a series that began before the range too, and not past COUNT or UNTIL.
  @Test func repeatingEventsAreListedAtEachOccurrence() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let ics = [
      "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN",
      "BEGIN:VEVENT", "UID:standup@test", "DTSTAMP:20250601T000000Z", "DTSTART:20250602T013000Z",
      "DTEND:20250602T014500Z", "SUMMARY:standup", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE", "END:VEVENT",
      "BEGIN:VEVENT", "UID:review@test", "DTSTAMP:20250601T000000Z", "DTSTART:20250605T060000Z",
      "SUMMARY:review", "RRULE:FREQ=DAILY;INTERVAL=2;COUNT=3", "END:VEVENT",
      "END:VCALENDAR", "",
    ].joined(separator: "\r\n")
    _ = try await engine.transfer.importCalendar(Data(ics.utf8), timeZone: TimeZone(identifier: "UTC")!)
    let from = try #require(DateParser.fileTimestamp("2025-06-09T00:00:00Z"))
    let to = try #require(DateParser.fileTimestamp("2025-06-16T00:00:00Z"))
    let week = try await engine.agentRecords.agenda(kind: .event, from: from, to: to)
    // Monday 9th and Wednesday 11th; the review (5th, 7th, 9th) has its last on the 9th.
    #expect(
      week.map { "\($0.title) \(DateParser.iso8601($0.dueAt!, timeZone: TimeZone(identifier: "UTC")!))" } == [
        "standup 2025-06-09T01:30:00Z", "review 2025-06-09T06:00:00Z", "standup 2025-06-11T01:30:00Z",
      ])
    #expect(week.first?.endsAt == week.first?.dueAt.map { $0.addingTimeInterval(15 * 60) })
    #expect(Set(week.compactMap(\.id)).count == 2)
    // Rules this cannot honour are not expanded.
    #expect(Recurrence("FREQ=MONTHLY;BYDAY=2MO") == nil)
    #expect(Recurrence("FREQ=HOURLY") == nil)
    #expect(Recurrence("FREQ=MONTHLY;INTERVAL=2;UNTIL=20251231")?.interval == 2)
  }
}
