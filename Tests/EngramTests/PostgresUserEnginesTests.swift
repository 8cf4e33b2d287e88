import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Many users on PostgreSQL in one process: their engines share a bounded connection pool,
/// and a user's keyword scores do not depend on what another user stores.
@Suite("Many users on PostgreSQL", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresUserEnginesTests {
  /// Runs `body` with a URL of a new, empty database.
  private func withDatabase(_ body: (String) async throws -> Void) async throws {
    let serverURL = try PostgresTestServer.url()
    let admin = try PostgresConnection(url: serverURL)
    let name = "engram_test_\(UInt64.random(in: 0...UInt64.max))"
    try admin.execute("CREATE DATABASE \(name)")
    defer { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    try await body(PostgresTestServer.databaseURL(serverURL, database: name))
  }

  @Test func twelveUsersShareTwoConnectionsAndEachSeesOnlyTheirOwnRows() async throws {
    try await withDatabase { url in
      let pool = try PostgresConnectionPool(uri: url, size: 2)
      defer { pool.close() }
      let engines = UserEngines { user in
        var configuration = hashingConfiguration(dimension: 32)
        configuration.user = user
        configuration.connectionPool = pool
        return try MemoryEngine(location: try StoreLocation(parsing: url), configuration: configuration)
      }
      let users = (0..<12).map { "user\($0)" }
      try await withThrowingTaskGroup(of: Void.self) { group in
        for user in users {
          group.addTask {
            let lease = try await engines.lease(user: user)
            defer { lease.release() }
            try await lease.engine.memories.remember("\(user) keeps a shared hobby: painting")
            let hits = try await lease.engine.search("shared hobby painting", k: 20, recordAccess: false)
            #expect(hits.map(\.text) == ["\(user) keeps a shared hobby: painting"])
          }
        }
        try await group.waitForAll()
      }
      #expect(pool.openConnections <= 2)
      #expect(engines.statistics.cachedUsers == 12)
      await engines.close()
    }
  }

  @Test func aUsersKeywordScoresDoNotDependOnAnotherUsersRows() async throws {
    try await withDatabase { url in
      func engine(_ user: String) throws -> MemoryEngine {
        var configuration = hashingConfiguration(dimension: 32)
        configuration.user = user
        return try MemoryEngine(location: try StoreLocation(parsing: url), configuration: configuration)
      }
      let ann = try engine("ann")
      let bob = try engine("bob")
      defer {
        ann.close()
        bob.close()
      }
      for text in ["garden tomatoes in the evening", "climbing on Saturday", "the garden needs water"] {
        try await ann.memories.remember(text)
      }
      let queries = ["garden", "tomatoes evening", "climbing water"]
      func scores() async throws -> [[Double]] {
        var all: [[Double]] = []
        for query in queries {
          all.append(
            try await ann.search(query, k: 10, mode: .keyword, recordAccess: false).compactMap(\.bm25))
        }
        return all
      }
      let before = try await scores()
      // Bob stores many rows with the same words: document frequencies and lengths of his own.
      for index in 0..<60 {
        try await bob.memories.remember("garden garden tomatoes climbing water evening note \(index)")
      }
      let after = try await scores()
      #expect(before == after)
      #expect(before.allSatisfy { !$0.isEmpty })
    }
  }
}
