import Engram
import EngramEmbeddings
import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// The engines of `--users` on a PostgreSQL store whose users' memories were made with
/// different embedders: each user's is opened with its own, a new user takes the store's (or
/// `--model`), and users of one spec share one loaded embedder.
@Suite(.timeLimit(.minutes(5)), .watchdog, .offPool) struct UserServingEmbedderTests {
  /// A memory for `user` made with `spec` (recorded), holding `text`.
  static func make(_ url: String, user: String, spec: EmbedderSpec, text: String) async throws {
    var configuration = EngramConfiguration(embedder: try spec.makeEmbedder(environment: [:]))
    configuration.user = user
    let engine = try MemoryEngine(path: url, configuration: configuration)
    try await engine.maintenance.setEmbedderSpec(spec.text)
    _ = try await engine.memories.remember(text)
    await engine.close()
  }

  static func context(_ url: String) -> CommandContext {
    CommandContext(
      toolName: "engram", database: url, output: CapturedOutput(), error: CapturedOutput(),
      input: LineReader(text: "", showsPrompt: false), terminal: Terminal(), environment: [:])
  }

  @Test func eachUserIsOpenedWithTheEmbedderTheirMemoryWasMadeWith() async throws {
    try await PostgresTestServer.inDatabase { _, url in
      // The store's embedder (the default user's, as `engram init --db URL --model hashing`).
      try await Self.make(url, user: StoreUser.defaultID, spec: .hashing(dimension: 384), text: "the store")
      try await Self.make(url, user: "ann", spec: .hashing(dimension: 384), text: "Ann keeps bees")
      try await Self.make(url, user: "bob", spec: .hashing(dimension: 64), text: "Bob keeps goats")
      let scratch = try ScratchFolder()
      var users = UsersFile()
      for user in ["ann", "bob", "cy", "dee"] { _ = try users.add(user) }
      try users.save(path: scratch.path("users"))
      var options = UserServing.Options()
      options.users = scratch.path("users")
      let engines = try #require(try UserServing.engines(Self.context(url), options: options))
      for (user, text, dimension) in [("ann", "Ann keeps bees", 384), ("bob", "Bob keeps goats", 64)] {
        let lease = try await engines.lease(user: user)
        #expect(lease.engine.embedder.dimension == dimension)
        let hits = try await lease.engine.search("who keeps animals, bees or goats", k: 3, mode: .vector)
        #expect(hits.map(\.text) == [text])
        lease.release()
      }
      // A user new to the store takes the store's embedder, and the memory records it.
      let cy = try await engines.lease(user: "cy")
      #expect(cy.engine.embedder.dimension == 384)
      _ = try await cy.engine.memories.remember("Cy keeps a cat")
      cy.release()
      await engines.close()
      #expect(try EngineAccess.recordedSpec(forDatabaseAt: url, user: "cy") == .hashing(dimension: 384))

      // With --model, a new user takes that one; the others keep their own.
      options.model = "hashing:32"
      let again = try #require(try UserServing.engines(Self.context(url), options: options))
      let dee = try await again.lease(user: "dee")
      #expect(dee.engine.embedder.dimension == 32)
      dee.release()
      let bob = try await again.lease(user: "bob")
      #expect(bob.engine.embedder.dimension == 64)
      bob.release()
      await again.close()
      #expect(try EngineAccess.recordedSpec(forDatabaseAt: url, user: "dee") == .hashing(dimension: 32))
    }
  }

  @Test func aFolderOfUserFilesServesEachFileWithItsOwnEmbedder() async throws {
    let scratch = try ScratchFolder()
    let folder = scratch.path("users.d")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try await Self.make(
      folder + "/ann.sqlite", user: "ann", spec: .hashing(dimension: 384),
      text: "Ann keeps bees")
    try await Self.make(
      folder + "/bob.sqlite", user: "bob", spec: .hashing(dimension: 64),
      text: "Bob keeps goats")
    var users = UsersFile()
    for user in ["ann", "bob"] { _ = try users.add(user) }
    try users.save(path: scratch.path("users"))
    var options = UserServing.Options()
    options.users = scratch.path("users")
    options.dbDir = folder
    let engines = try #require(
      try UserServing.engines(Self.context(scratch.path("unused.sqlite")), options: options))
    for (user, text) in [("ann", "Ann keeps bees"), ("bob", "Bob keeps goats")] {
      let lease = try await engines.lease(user: user)
      #expect(
        try await lease.engine.search("who keeps animals, bees or goats", k: 3, mode: .vector).map(\.text)
          == [text])
      lease.release()
    }
    await engines.close()
  }
}
