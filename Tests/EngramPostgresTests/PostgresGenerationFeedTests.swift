import EngramCore
import EngramPostgres
import EngramPostgresTestSupport
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// One user's embedding generation followed across connections (as another process or
/// machine would): LISTEN/NOTIFY for speed, the counter for what notifications missed.
@Suite("PostgreSQL generation feed", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresGenerationFeedTests {
  private func addEmbedding(_ store: PostgresStore, owner: Int64) throws {
    try store.writeTransaction { session in
      try session.configureEmbeddingModel(model: "m", dimension: 2, replace: false)
      try session.upsertEmbedding(
        EmbeddingRow(ownerKind: .memory, ownerID: owner, model: "m", vector: [1, 0], createdAt: t0))
    }
  }

  /// Runs `body` on a fresh database with stores of Alice and Bob (closed afterwards).
  private func withAliceAndBob(
    _ body: (String, PostgresStore, PostgresStore) async throws -> Void
  ) async throws {
    try await PostgresTestServer.inDatabase { _, url in
      let alice = try PostgresStore(uri: url, user: "alice")
      let bob = try PostgresStore(uri: url, user: "bob")
      defer {
        alice.close()
        bob.close()
      }
      try await body(url, alice, bob)
    }
  }

  @Test func anotherConnectionsWriteIsKnownWithinASecond() async throws {
    try await withAliceAndBob { url, alice, bob in
      try addEmbedding(alice, owner: 1)
      let feed = try PostgresGenerationFeed(uri: url, user: "alice")
      defer { feed.stop() }
      // Caught up from the counter at start.
      #expect(feed.generation == 1)
      #expect(await eventually(within: .seconds(1)) { feed.isConnected })
      try addEmbedding(alice, owner: 2)
      // Known within a second (measured on the polling thread).
      #expect(await eventually(within: .seconds(1)) { feed.generation == 2 })
      // Another user's writes are not Alice's.
      try addEmbedding(bob, owner: 1)
      try addEmbedding(alice, owner: 3)
      #expect(await eventually(within: .seconds(1)) { feed.generation == 3 })
      try bob.readTransaction { session throws in #expect(try session.embeddingGeneration() == 1) }
      #expect(try alice.readTransaction { try $0.embeddingGeneration() } == feed.generation)
    }
  }

  @Test func changesMissedWhileDisconnectedAreCaughtUpFromTheCounter() async throws {
    try await PostgresTestServer.inDatabase { _, url in
      let alice = try PostgresStore(uri: url, user: "alice")
      defer { alice.close() }
      let feed = try PostgresGenerationFeed(uri: url, user: "alice")
      defer { feed.stop() }
      #expect(await eventually(within: .seconds(1)) { feed.isConnected })
      #expect(feed.generation == 0)
      // Keep the feed out (no new connections to the database), cut its connection, and
      // write while it is away (the store's connections stay): no notification reaches it.
      let admin = try PostgresConnection(url: url)
      let database = try admin.execute("SELECT current_database()")[0].string(0)!
      let server = try PostgresConnection(url: try PostgresTestServer.url())
      try server.execute("ALTER DATABASE \(database) WITH ALLOW_CONNECTIONS false")
      try admin.execute(
        """
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1
        """, [.text(PostgresGenerationFeed.applicationName)])
      #expect(await eventually(within: .seconds(1)) { !feed.isConnected })
      try addEmbedding(alice, owner: 1)
      try addEmbedding(alice, owner: 2)
      try await Task.sleep(for: .milliseconds(300))
      #expect(feed.generation == 0 && !feed.isConnected)
      try server.execute("ALTER DATABASE \(database) WITH ALLOW_CONNECTIONS true")
      // Back, it reads the counter: generation 2 without having heard of 1 or 2.
      #expect(await eventually(within: .seconds(5)) { feed.generation == 2 && feed.isConnected })
      #expect(feed.reconnectionCount == 1)
    }
  }

  @Test func oneFeedFollowsManyUsersEachByTheirOwnCounter() async throws {
    try await withAliceAndBob { url, alice, bob in
      try addEmbedding(alice, owner: 1)
      try addEmbedding(alice, owner: 2)
      let feed = try PostgresGenerationFeed(uri: url)
      defer { feed.stop() }
      #expect(feed.user == nil && feed.followedUsers.isEmpty)
      #expect(feed.generation(of: "alice") == nil)
      feed.follow("alice")
      feed.follow("bob")
      // Each user's counter read on the feed's thread; a user with no row is at 0.
      #expect(await eventually(within: .seconds(2)) { feed.generation(of: "alice") == 2 })
      #expect(await eventually(within: .seconds(1)) { feed.generation(of: "bob") == 0 })
      try addEmbedding(bob, owner: 1)
      #expect(await eventually(within: .seconds(1)) { feed.generation(of: "bob") == 1 })
      #expect(feed.generation(of: "alice") == 2)
      // A user not followed is never answered for, even when they write.
      let carol = try PostgresStore(uri: url, user: "carol")
      defer { carol.close() }
      try addEmbedding(carol, owner: 1)
      try await Task.sleep(for: .milliseconds(300))
      #expect(feed.generation(of: "carol") == nil)
      feed.unfollow("alice")
      #expect(feed.generation(of: "alice") == nil && feed.followedUsers == ["bob"])
    }
  }

  @Test func aPoolsStoresShareOneFeed() async throws {
    try await PostgresTestServer.inDatabase { _, url in
      let pool = try PostgresConnectionPool(uri: url, size: 2)
      defer { pool.close() }
      let alice = try PostgresStore(pool: pool, user: "alice")
      let bob = try PostgresStore(pool: pool, user: "bob")
      try addEmbedding(alice, owner: 1)
      // The first asks start the pool's feed; until it follows a user, the caller reads.
      #expect(
        await eventually(within: .seconds(3)) {
          alice.followedEmbeddingGeneration() == 1 && bob.followedEmbeddingGeneration() == 0
        })
      let feed = try #require(pool.generationFeed)
      #expect(feed.followedUsers == ["alice", "bob"])
      try addEmbedding(bob, owner: 1)
      #expect(await eventually(within: .seconds(1)) { bob.followedEmbeddingGeneration() == 1 })
      // A closed store's user is no longer followed; the pool's close stops the feed.
      bob.close()
      #expect(feed.followedUsers == ["alice"])
      #expect(bob.followedEmbeddingGeneration() == nil)
      alice.close()
      pool.close()
      #expect(pool.followedGeneration(of: "alice") == nil)
    }
  }
}
