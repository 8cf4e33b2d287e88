import EngramCore
import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// The PostgreSQL store as the engine finds it: registered by `PostgresBackend.register()`,
/// it opens `postgresql://` and `postgres://` locations (StoreLocationTests and UserScopeTests
/// check the typed error without it); the stores' shared checks (`StoreChecks`) on PostgreSQL.
@Suite(.timeLimit(.minutes(5)), .watchdog, .offPool) struct PostgresBackendTests {
  @Test func registeringOpensBothSchemes() throws {
    PostgresBackend.register()
    #expect(StoreBackends.backend(forURI: "postgresql://db/m") is PostgresBackend)
    #expect(StoreBackends.backend(forURI: "POSTGRES://db/m") is PostgresBackend)
    #expect(StoreBackends.backend(forURI: "mysql://db/m") == nil)
  }

  @Test func connectionErrorsNeverShowThePassword() throws {
    PostgresBackend.register()
    // No such server: the connection error never shows the password.
    let location = try StoreLocation(parsing: "postgres://u:s3cret@db.example.org:5432/m?sslmode=require")
    #expect {
      try StoreFactory.open(location)
    } throws: { error in
      guard let error = error as? PostgresError, error.kind == .connection else { return false }
      return !"\(error)".contains("s3cret")
    }
    #expect {
      try StoreFactory.inspect(location) { _ in 0 }
    } throws: { error in
      guard let error = error as? PostgresError, error.kind == .connection else { return false }
      return !"\(error)".contains("s3cret")
    }
  }

  @Test func theEngineOpensPostgreSQLByURI() throws {
    PostgresBackend.register()
    // The PostgreSQL store, which finds no server there (the tests' server listens on a Unix
    // socket only).
    #expect {
      try MemoryEngine.open(
        "postgresql://engram@localhost:5432/memory",
        configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    } throws: { error in
      guard let error = error as? PostgresError else { return false }
      return error.kind == .connection
    }
  }

  @Test func embeddingVectorsPerUser() throws {
    try PostgresTestServer.withDatabase { _, url in
      let mine = try PostgresStore(uri: url, user: "alice")
      let theirs = try PostgresStore(uri: url, user: "bob")
      defer {
        mine.close()
        theirs.close()
      }
      try StoreChecks.embeddingVectorsPerUser(mine, theirs)
    }
  }

  @Test func routinesPerUser() throws {
    try PostgresTestServer.withDatabase { _, url in
      let alice = try PostgresStore(uri: url, user: "alice")
      defer { alice.close() }
      let bob = try PostgresStore(uri: url, user: "bob")
      defer { bob.close() }
      try StoreChecks.routinesPerUser(alice, bob)
    }
  }
}
