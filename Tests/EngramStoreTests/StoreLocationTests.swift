import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// `--db` takes a SQLite path or a PostgreSQL URI (issue 19); the factory opens SQLite and
/// names what is missing for PostgreSQL.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct StoreLocationTests {
  @Test func pathsAndURIsAreToldApart() throws {
    #expect(try StoreLocation(parsing: "/tmp/memory.sqlite") == .sqlite(path: "/tmp/memory.sqlite"))
    #expect(try StoreLocation(parsing: "memory.sqlite") == .sqlite(path: "memory.sqlite"))
    #expect(try StoreLocation(parsing: ":memory:") == .sqlite(path: ":memory:"))
    #expect(try StoreLocation(parsing: "file:m.sqlite?mode=ro") == .sqlite(path: "file:m.sqlite?mode=ro"))
    // A colon or slashes later in a path do not make it a URI.
    #expect(try StoreLocation(parsing: "./a://b") == .sqlite(path: "./a://b"))
    #expect(try StoreLocation(parsing: "/data/x:y") == .sqlite(path: "/data/x:y"))
    for uri in [
      "postgresql://engram@localhost:5432/memory", "postgres://u:secret@db.example.org/m?sslmode=require",
      "PostgreSQL://host/db", "postgresql:///memory?host=/tmp/socket",
    ] {
      #expect(try StoreLocation(parsing: uri) == .postgres(uri: uri))
      #expect(StoreLocation.isURI(uri))
    }
    #expect(!StoreLocation.isURI("/tmp/memory.sqlite"))
  }

  @Test func badLocationsAreRefused() {
    #expect(throws: StoreError.invalidLocation("", reason: "the location is empty")) {
      try StoreLocation(parsing: "")
    }
    #expect(throws: StoreError.self) { try StoreLocation(parsing: "mysql://u@h/db") }
    #expect(throws: StoreError.self) { try StoreLocation(parsing: "https://example.org/memory") }
    #expect(
      throws: StoreError.invalidLocation(
        "postgresql://", reason: "the PostgreSQL URI names no server or database")
    ) {
      try StoreLocation(parsing: "postgresql://")
    }
  }

  @Test func passwordsNeverReachMessages() throws {
    let location = try StoreLocation(parsing: "postgres://u:s3cret@db.example.org:5432/m?sslmode=require")
    #expect(location.description == "postgres://u:***@db.example.org:5432/m?sslmode=require")
    #expect(
      StoreLocation.redacted("postgresql://db/m?user=u&password=s3cret&sslmode=require")
        == "postgresql://db/m?user=u&password=***&sslmode=require")
    #expect(StoreLocation.redacted("postgresql://u@db/m") == "postgresql://u@db/m")
    // Without the PostgreSQL store (EngramPostgres not linked): a typed error naming the fix,
    // without the password (PostgresBackendTests: the same with it registered).
    let unavailable = StoreError.storeUnavailable(
      location: "postgres://u:***@db.example.org:5432/m?sslmode=require",
      missing:
        "the PostgreSQL store (link the EngramPostgres product and call PostgresBackend.register() at start-up)"
    )
    StoreBackends.$scoped.withValue([:]) {
      #expect(throws: unavailable) { try StoreFactory.open(location) }
      #expect(throws: unavailable) { try StoreFactory.inspect(location) { _ in 0 } }
    }
  }

  @Test func theFactoryOpensSQLiteForAUser() throws {
    let directory = try TemporaryDirectory()
    var options = StoreFactory.Options()
    options.user = "ann"
    let store = try StoreFactory.open(.sqlite(path: directory.file("m.sqlite")), options: options)
    defer { store.close() }
    #expect(store.user == "ann")
    #expect(store.capabilities.contains(.vectorSnapshotFile))
    #expect(store.vectorSnapshotURL?.lastPathComponent == "m.sqlite.ann.vectors")
    let id = try store.writeTransaction { try $0.insert(Session(externalID: "s", startedAt: Date())) }
    #expect(try store.readTransaction { try $0.fetch(Session.self, id: id)?.externalID } == "s")
    options.user = "not valid"
    #expect(throws: StoreError.invalidUser("not valid")) {
      try StoreFactory.open(.sqlite(path: directory.file("m.sqlite")), options: options)
    }
    options.user = StoreUser.defaultID
    let other = try StoreFactory.open(.sqlite(path: directory.file("m.sqlite")), options: options)
    defer { other.close() }
    #expect(try other.readTransaction { try $0.fetch(Session.self, id: id) } == nil)
    #expect(other.vectorSnapshotURL?.lastPathComponent == "m.sqlite.vectors")
    #expect(try other.readTransaction { try $0.storedUsers() } == ["ann"])
  }
}
