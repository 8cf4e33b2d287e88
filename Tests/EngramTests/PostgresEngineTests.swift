import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// The engine on the PostgreSQL store (a real server): the same behaviour as on SQLite, users
/// kept apart, and engines of one user on separate connections (as on separate nodes)
/// seeing each other's writes.
@Suite("Engine on PostgreSQL", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresEngineTests {
  private func engine(_ url: String, user: String, dimension: Int = 256) throws -> MemoryEngine {
    var configuration = hashingConfiguration(dimension: dimension)
    configuration.user = user
    return try MemoryEngine(location: try StoreLocation(parsing: url), configuration: configuration)
  }

  /// Runs `body` with a URL of a new, empty database.
  private func withDatabase(_ body: (String) async throws -> Void) async throws {
    let serverURL = try PostgresTestServer.url()
    let admin = try PostgresConnection(url: serverURL)
    let name = "engram_test_\(UInt64.random(in: 0...UInt64.max))"
    try admin.execute("CREATE DATABASE \(name)")
    defer { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    try await body(PostgresTestServer.databaseURL(serverURL, database: name))
  }

  @Test func remembersSearchesAndForgetsInEveryMode() async throws {
    try await withDatabase { url in
      let engine = try engine(url, user: "alice")
      defer { engine.close() }
      #expect(engine.store is PostgresStore)
      let climbing = try await engine.memories.remember(
        "Alice goes rock climbing every Saturday", kind: .fact)
      _ = try await engine.memories.remember("The dentist appointment is on Tuesday", kind: .event)
      let cjk = try await engine.memories.remember("我周末去攀岩了", kind: .note)
      for mode in SearchMode.allCases {
        let hits = try await engine.search("rock climbing", k: 2, mode: mode, recordAccess: false)
        #expect(hits.first?.id == climbing, "mode \(mode)")
      }
      #expect(try await engine.search("攀岩", k: 1, mode: .keyword, recordAccess: false).first?.id == cjk)
      #expect(try await engine.memories.forget(id: climbing))
      for mode in SearchMode.allCases {
        let hits = try await engine.search("rock climbing", k: 3, mode: mode, recordAccess: false)
        #expect(!hits.contains { $0.id == climbing }, "mode \(mode)")
      }
      #expect(try await engine.memories.forget(id: climbing) == false)
    }
  }

  @Test func anExcludedSessionsTurnsCannotCrowdTheOthersOut() async throws {
    try await withDatabase { url in
      var configuration = crowdingConfiguration(hashingConfiguration())
      configuration.user = "alice"
      let engine = try MemoryEngine(location: try StoreLocation(parsing: url), configuration: configuration)
      defer { engine.close() }
      try await checkAnExcludedSessionCannotCrowdTheOthersOut(engine)
    }
  }

  @Test func weeklyActivityCountsOnlyTheUsersOwnRows() async throws {
    try await withDatabase { url in
      let alice = try engine(url, user: "alice")
      let bob = try engine(url, user: "bob")
      defer { for engine in [alice, bob] { engine.close() } }
      let monday = Date(timeIntervalSince1970: 1_749_470_400)  // 2025-06-09T12:00:00Z
      _ = try await alice.conversation.appendTurn(role: "user", content: "one", at: monday)
      _ = try await alice.memories.remember("a fact", kind: .fact, at: monday.addingTimeInterval(7 * 86_400))
      _ = try await bob.conversation.appendTurn(role: "user", content: "two", at: monday)
      let weeks = try await alice.maintenance.weeklyActivity()
      #expect(weeks.map(\.turns) == [1, 0])
      #expect(weeks.map(\.memories) == [0, 1])
      #expect(weeks.first?.weekStart == Date(timeIntervalSince1970: 1_749_427_200))  // 2025-06-09T00:00:00Z
    }
  }

  @Test func calendarImportsOncePerUserAndExportsTheImportedUIDs() async throws {
    try await withDatabase { url in
      let alice = try engine(url, user: "alice")
      let bob = try engine(url, user: "bob")
      defer { for engine in [alice, bob] { engine.close() } }
      let file = Data(
        ("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:standup@example.com\r\nDTSTART:20250612T070000Z\r\n"
          + "SUMMARY:standup\r\nEND:VEVENT\r\nBEGIN:VTODO\r\nUID:pay@example.com\r\nDUE:20250613T080000Z\r\n"
          + "SUMMARY:pay rent\r\nEND:VTODO\r\nEND:VCALENDAR\r\n").utf8)
      #expect(try await alice.transfer.importCalendar(file).added == 2)
      #expect(try await alice.transfer.importCalendar(file).unchanged == 2)
      // Another user's UIDs are theirs: the same file adds Bob's own items.
      #expect(try await bob.transfer.importCalendar(file).added == 2)
      let items = try await alice.agentRecords.items()
      #expect(items.map(\.calendarUID) == ["standup@example.com", "pay@example.com"])
      let text = try await alice.transfer.calendarText()
      #expect(text.contains("UID:standup@example.com\r\n") && text.contains("UID:pay@example.com\r\n"))
    }
  }

  @Test func remindersAreListedMovedDeliveredOnceAndCancelledPerUser() async throws {
    try await withDatabase { url in
      let alice = try engine(url, user: "alice")
      let node = try engine(url, user: "alice")
      let bob = try engine(url, user: "bob")
      defer { for engine in [alice, node, bob] { engine.close() } }
      let base = Date(timeIntervalSince1970: 1_750_000_000)
      let early = try await alice.agentRecords.addItem(kind: .reminder, title: "early", due: base)
      let late = try await alice.agentRecords.addItem(kind: .reminder, title: "late", due: base + 600)
      let event = try await alice.agentRecords.addItem(kind: .event, title: "review", due: base + 60)
      _ = try await bob.agentRecords.addItem(kind: .reminder, title: "bob's", due: base)
      #expect(try await alice.agentRecords.agenda(kind: .reminder).map(\.id) == [early, late])
      #expect(
        try await alice.agentRecords.agenda(kind: .event, from: base, to: base + 120).map(\.id) == [event])
      // Two engines of one user (two nodes) claim the due reminder once between them.
      let first = try await alice.agentRecords.deliverDueReminders(at: base + 1)
      let second = try await node.agentRecords.deliverDueReminders(at: base + 2)
      #expect(first.map(\.id) + second.map(\.id) == [early])
      #expect(try await bob.agentRecords.deliverDueReminders(at: base + 1).map(\.title) == ["bob's"])
      let moved = try await alice.agentRecords.updateItem(early, due: base + 1200)
      #expect(moved.deliveredAt == nil)
      #expect(try await node.agentRecords.deliverDueReminders(at: base + 1300).map(\.id) == [late, early])
      try await alice.agentRecords.deleteItem(event)
      await #expect(throws: AgentRecordError.notFound(table: "agent_items", id: event)) {
        try await node.agentRecords.deleteItem(event)
      }
    }
  }

  @Test func aConditionalReminderKeepsItsConditionAndItsOutcome() async throws {
    try await withDatabase { url in
      let engine = try engine(url, user: "alice")
      defer { engine.close() }
      try await checkConditionalReminders(engine, at: Date(timeIntervalSince1970: 1_750_000_000))
    }
  }

  @Test func oneUsersSearchNeverReturnsAnothersMemory() async throws {
    try await withDatabase { url in
      let alice = try engine(url, user: "alice")
      let bob = try engine(url, user: "bob")
      defer {
        alice.close()
        bob.close()
      }
      let secret = try await alice.memories.remember("Alice's locker code is 4711", kind: .fact)
      let bobs = try await bob.memories.remember("Bob keeps his bike by the locker room", kind: .fact)
      for mode in SearchMode.allCases {
        let hits = try await bob.search("locker code", k: 10, mode: mode, recordAccess: false)
        #expect(hits.map(\.id) == [bobs], "mode \(mode)")
        #expect(!hits.contains { $0.text.contains("4711") })
      }
      #expect(try await bob.memories.forget(id: secret) == false)
      #expect(
        try await alice.search("locker code", k: 1, mode: .hybrid, recordAccess: false).first?.id == secret)
    }
  }

  @Test func anExportImportsIntoAnotherUserAndAnotherStore() async throws {
    try await withDatabase { url in
      let folder = try TemporaryFolder()
      let alice = try engine(url, user: "alice")
      defer { alice.close() }
      _ = try await alice.memories.remember("The boat leaves from pier 7 at dawn", kind: .event)
      _ = try await alice.memories.remember("Ann likes green tea", kind: .preference)
      let file = folder.path("alice.jsonl")
      #expect(try await alice.transfer.export(to: file) > 0)
      // Into another user of the same database, and into a SQLite file: the same answers.
      let carol = try engine(url, user: "carol")
      defer { carol.close() }
      #expect(try await carol.transfer.importExport(from: file) > 0)
      let sqlite = try MemoryEngine(path: folder.path("copy.sqlite"), configuration: hashingConfiguration())
      defer { sqlite.close() }
      #expect(try await sqlite.transfer.importExport(from: file) > 0)
      for query in ["when does the boat leave", "what does Ann drink"] {
        let expected = try await alice.search(query, k: 2, mode: .hybrid, recordAccess: false).map(\.text)
        #expect(
          try await carol.search(query, k: 2, mode: .hybrid, recordAccess: false).map(\.text) == expected)
        #expect(
          try await sqlite.search(query, k: 2, mode: .hybrid, recordAccess: false).map(\.text) == expected)
      }
      // And back: a SQLite export into a PostgreSQL user.
      let back = folder.path("copy.jsonl")
      #expect(try await sqlite.transfer.export(to: back) > 0)
      let dave = try engine(url, user: "dave")
      defer { dave.close() }
      #expect(try await dave.transfer.importExport(from: back) > 0)
      #expect(
        try await dave.search("pier", k: 1, mode: .vector, recordAccess: false).first?.text
          == "The boat leaves from pier 7 at dawn")

      // The same export again adds nothing and changes nothing (issue 32), whichever store
      // wrote it; another memory's export is still refused, with nothing written.
      let counts = try await dave.maintenance.tableCounts()
      #expect(try await dave.transfer.importExport(from: back) == 0)
      #expect(try await carol.transfer.importExport(from: file) == 0)
      #expect(try await dave.maintenance.tableCounts() == counts)
      let erin = try engine(url, user: "erin")
      defer { erin.close() }
      _ = try await erin.memories.remember("The boat leaves from pier 9 at noon", kind: .event)
      let other = folder.path("erin.jsonl")
      #expect(try await erin.transfer.export(to: other) > 0)
      await #expect(throws: EngramError.importTargetNotEmpty(path: dave.path)) {
        try await dave.transfer.importExport(from: other)
      }
      #expect(try await dave.maintenance.tableCounts() == counts)
    }
  }

  @Test func aWriteOnOneNodeIsFoundOnAnotherWithinASecond() async throws {
    try await withDatabase { url in
      // Two engines of one user on their own connections: two nodes of one deployment.
      let first = try engine(url, user: "alice")
      let second = try engine(url, user: "alice")
      defer {
        first.close()
        second.close()
      }
      _ = try await first.memories.remember("The wifi password is on the fridge", kind: .fact)
      // The second node's index is loaded now (first use).
      #expect(try await second.search("wifi password", k: 1, mode: .vector, recordAccess: false).count == 1)
      let written = try await first.memories.remember("Ann's passport expires in March", kind: .fact)
      let start = ContinuousClock.now
      var found = false
      while !found && ContinuousClock.now - start < .seconds(1) {
        found =
          try await second.search("passport expires", k: 1, mode: .vector, recordAccess: false)
          .first?.id == written
      }
      #expect(found)
      // A forget on the first node disappears from the second node's vector search.
      #expect(try await first.memories.forget(id: written))
      #expect(
        try await second.search("passport expires", k: 2, mode: .vector, recordAccess: false)
          .allSatisfy { $0.id != written })
    }
  }
}
