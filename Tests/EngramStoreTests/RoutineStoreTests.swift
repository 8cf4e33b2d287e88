import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// The `routines` table in both stores: a routine round-trips with its steps, a name folded
/// the same way replaces it, each user sees only their own, and removal reports whether one
/// was there.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RoutineStoreTests {
  let briefing = Routine(
    name: "Evening Wrap Up",
    steps: [
      Routine.Step(text: "show today's calendar", skill: "calendar.list"),
      Routine.Step(text: "天气怎么样", skill: nil),
    ], createdAt: Date(timeIntervalSince1970: 1_700_000_000))

  func exercise(_ alice: any MemoryStore, _ bob: any MemoryStore) throws {
    try alice.writeTransaction { try $0.saveRoutine(briefing) }
    #expect(try alice.readTransaction { try $0.routines() } == [briefing])
    #expect(try bob.readTransaction { try $0.routines() }.isEmpty)
    var renamed = briefing
    renamed.name = "evening  wrap up!"
    renamed.enabled = false
    renamed.updatedAt = Date(timeIntervalSince1970: 1_700_000_100)
    try alice.writeTransaction { try $0.saveRoutine(renamed) }
    let stored = try alice.readTransaction { try $0.routine(key: "evening wrap up") }
    #expect(stored == renamed)
    #expect(try bob.writeTransaction { try $0.deleteRoutine(key: "evening wrap up") } == false)
    #expect(try alice.writeTransaction { try $0.deleteRoutine(key: "evening wrap up") })
    #expect(try alice.readTransaction { try $0.routines() }.isEmpty)
  }

  @Test func sqliteKeepsRoutinesPerUser() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("db.sqlite")
    var configuration = Database.Configuration()
    configuration.user = "alice"
    let alice = try Database(path: path, configuration: configuration)
    defer { alice.close() }
    configuration.user = "bob"
    let bob = try Database(path: path, configuration: configuration)
    defer { bob.close() }
    try exercise(alice, bob)
  }

  @Test func postgresKeepsRoutinesPerUser() throws {
    try PostgresTestServer.withDatabase { _, url in
      let alice = try PostgresStore(uri: url, user: "alice")
      defer { alice.close() }
      let bob = try PostgresStore(uri: url, user: "bob")
      defer { bob.close() }
      try exercise(alice, bob)
    }
  }
}
