import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// The `routines` table (`StoreChecks`; PostgreSQL's in EngramPostgresTests): a routine round-trips with its steps, a name folded
/// the same way replaces it, each user sees only their own, and removal reports whether one
/// was there.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RoutineStoreTests {
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
    try StoreChecks.routinesPerUser(alice, bob)
  }
}
