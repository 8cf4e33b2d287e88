import EngramTestSupport
import Foundation
import Testing

@testable import Engram
@testable import EngramStore

/// Issue 19: many users in one memory, kept apart by the engine's user (EngramConfiguration.user,
/// the CLI's --user): one user's search, lists, export and forget never see or touch another's
/// rows, and a memory from before users belongs to the default user.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct UserScopeTests {
  static func engine(_ path: String, user: String? = nil) throws -> MemoryEngine {
    var configuration = hashingConfiguration()
    if let user { configuration.user = user }
    return try MemoryEngine(path: path, configuration: configuration)
  }

  /// Both users ingest the same conversation (same session names) and remember one fact each.
  @Test func oneUsersSearchListExportAndForgetNeverSeeAnothersRows() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("shared.sqlite")
    let file = folder.path("c.jsonl")
    try writeFile(IngestExportTests.conversation, to: file)
    let ann = try Self.engine(path, user: "ann")
    defer { ann.close() }
    let bob = try Self.engine(path, user: "bob@example.org")
    defer { bob.close() }
    _ = try await ann.conversation.ingest(path: file)
    _ = try await bob.conversation.ingest(path: file)
    let annFact = try await ann.memories.remember("Ann keeps bees behind the greenhouse")
    let bobFact = try await bob.memories.remember("Bob keeps goats on the hill farm")
    let annTurns = try await ann.conversation.recentTurns(limit: 100)
    let bobTurns = try await bob.conversation.recentTurns(limit: 100)
    #expect(annTurns.count == 4 && bobTurns.count == 4)
    #expect(Set(annTurns.map(\.id)).isDisjoint(with: bobTurns.map(\.id)))
    var bobRows = Set(bobTurns.map { "\($0.kind):\($0.id)" })
    bobRows.insert("memory:\(bobFact)")

    for mode in [SearchMode.keyword, .vector, .hybrid] {
      // Words of both users' turns and of Bob's fact: Ann finds only her own rows.
      let query = "puppy Biscuit golden retriever goats hill farm"
      let annHits = try await ann.search(query, k: 50, mode: mode, recordAccess: false)
      let bobHits = try await bob.search(query, k: 50, mode: mode, recordAccess: false)
      #expect(!annHits.isEmpty, "\(mode)")
      #expect(annHits.allSatisfy { !bobRows.contains("\($0.kind):\($0.id)") }, "\(mode)")
      #expect(bobHits.allSatisfy { bobRows.contains("\($0.kind):\($0.id)") }, "\(mode)")
      #expect(bobHits.contains { $0.kind == .memory && $0.id == bobFact }, "\(mode)")
      #expect(!annHits.contains { $0.text.contains("goats") }, "\(mode)")
    }
    // A session filter naming Bob's session id finds nothing for Ann.
    let bobSession = try #require(bobTurns.first?.sessionID)
    let filtered = try await ann.search(
      "puppy", k: 10, mode: .keyword, filters: SearchFilters(session: String(bobSession)), recordAccess: false
    )
    #expect(filtered.isEmpty)

    // Lists and statistics.
    #expect(try await ann.memories.list().map(\.id) == [annFact])
    #expect(try await bob.memories.list().map(\.id) == [bobFact])
    #expect(try await ann.memories.get(bobFact) == nil)
    let annCounts = try await ann.maintenance.tableCounts()
    #expect(annCounts["messages"] == 4 && annCounts["memories"] == 1)
    #expect(try await ann.maintenance.tableCounts()["sessions"] == 2)

    // Export: each user's own rows only.
    let annExport = folder.path("ann.jsonl")
    try await ann.transfer.export(to: annExport)
    let annText = try String(contentsOfFile: annExport, encoding: .utf8)
    #expect(annText.contains("greenhouse") && !annText.contains("goats"))
    var bobText = ""
    try MemoryEngine.export(databaseAt: path, user: "bob@example.org") { chunk in
      bobText += String(decoding: chunk, as: UTF8.self)
    }
    #expect(bobText.contains("goats") && !bobText.contains("greenhouse"))
    #expect(!annText.contains("user_id") && !bobText.contains("user_id"))

    // Forget: Ann cannot remove Bob's rows, by id or by text.
    #expect(try await ann.memories.forget(kind: .memory, id: bobFact) == false)
    #expect(try await ann.memories.forget(kind: .message, id: bobTurns[0].id) == false)
    _ = try await ann.memories.forget(matching: "goats", kinds: [.memory, .message], dryRun: false)
    #expect(try await bob.memories.get(bobFact) != nil)
    #expect(try await bob.conversation.recentTurns(limit: 100).count == 4)
    #expect(try await ann.memories.forget(kind: .memory, id: annFact))
    #expect(try await bob.memories.list().map(\.id) == [bobFact])

    // The default user shares the file and sees none of it.
    let everyone = try Self.engine(path)
    defer { everyone.close() }
    #expect(try await everyone.memories.list().isEmpty)
    #expect(try await everyone.search("goats puppy", k: 10, recordAccess: false).isEmpty)
  }

  /// An export of one user imports into another user of the same file only when the ids are
  /// free; compaction and its statistics stay inside one user.
  @Test func compactionAndImportStayInsideOneUser() async throws {
    let folder = try TemporaryFolder()
    let file = folder.path("c.jsonl")
    try writeFile(IngestExportTests.conversation, to: file)
    let path = folder.path("shared.sqlite")
    let ann = try Self.engine(path, user: "ann")
    defer { ann.close() }
    let bob = try Self.engine(path, user: "bob")
    defer { bob.close() }
    _ = try await ann.conversation.ingest(path: file)
    _ = try await bob.conversation.ingest(path: file)
    let bobBefore = try await bob.maintenance.tableCounts()
    let report = try await ann.compact(olderThan: 0, now: Date(timeIntervalSince1970: 1_800_000_000))
    #expect(report.summariesCreated == 2)
    #expect(try await bob.maintenance.tableCounts() == bobBefore)
    #expect(try await ann.maintenance.tableCounts()["summaries"] == 2)

    // Ann's export into a third user of a new file: the same rows.
    let export = folder.path("ann.jsonl")
    let lines = try await ann.transfer.export(to: export)
    let copy = try Self.engine(folder.path("copy.sqlite"), user: "carol")
    defer { copy.close() }
    #expect(try await copy.transfer.importExport(from: export) == lines - 2)
    #expect(try await copy.maintenance.tableCounts() == ann.maintenance.tableCounts())
    #expect(try await copy.doctor().healthy)
  }

  /// A memory written before users (schema version 5) opens with every row in the default
  /// user; another user of it starts empty.
  @Test func aMemoryFromBeforeUsersBelongsToTheDefaultUser() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("old.sqlite")
    let embedder = try HashingEmbedder(dimension: 256)
    do {
      let connection = try Connection(path: path)
      try connection.enableWriteAheadLog()
      try Migrator.migrate(connection, migrations: Array(Migration.all.prefix(5)))
      try connection.configureEmbeddingModel(model: embedder.modelID, dimension: embedder.dimension)
      try connection.run(
        "INSERT INTO sessions (external_id, started_at) VALUES ('garden', 1714550400000)")
      try connection.run(
        """
        INSERT INTO messages (session_id, role, speaker, content, created_at)
        VALUES (1, 'user', 'Ann', 'The tomatoes need staking this week', 1714550400000)
        """)
      try connection.run(
        """
        INSERT INTO memories (kind, content, created_at, updated_at)
        VALUES ('fact', 'Ann grows basil on the balcony', 1714550400000, 1714550400000)
        """)
      try connection.run(
        "INSERT INTO preferences (key, value, pinned, updated_at) VALUES ('timezone', 'Europe/Oslo', 1, 0)")
    }
    let engine = try Self.engine(path)
    defer { engine.close() }
    #expect(try engine.database.read { try $0.userVersion() } == Migration.all.count)
    #expect(try await engine.memories.list().map(\.content) == ["Ann grows basil on the balcony"])
    #expect(
      try await engine.conversation.recentTurns(limit: 10).map(\.text) == [
        "The tomatoes need staking this week"
      ])
    #expect(try await engine.userPreferences.get("timezone") == "Europe/Oslo")
    let hits = try await engine.search("basil tomatoes", k: 5, mode: .keyword, recordAccess: false)
    #expect(hits.count == 2)
    #expect(try engine.database.read { try $0.storedUsers() } == [StoreUser.defaultID])
    // Embedded on repair, in the default user.
    #expect(try await engine.doctor(repair: true).healthy)
    #expect(try await engine.search("basil", k: 1, mode: .vector, recordAccess: false).first?.kind == .memory)

    let other = try Self.engine(path, user: "someone")
    defer { other.close() }
    #expect(try await other.memories.list().isEmpty)
    #expect(try await other.conversation.recentTurns(limit: 10).isEmpty)
    #expect(try await other.userPreferences.get("timezone") == nil)
    #expect(try await other.search("basil tomatoes", k: 5, recordAccess: false).isEmpty)
  }

  /// A shared memory cannot be reindexed by one user (the model is the whole file's).
  @Test func reindexRefusesAMemorySharedWithOtherUsers() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("shared.sqlite")
    let ann = try Self.engine(path, user: "ann")
    _ = try await ann.memories.remember("Ann likes kayaking")
    await ann.close()
    let bob = try Self.engine(path, user: "bob")
    _ = try await bob.memories.remember("Bob likes climbing")
    await bob.close()
    var configuration = hashingConfiguration(dimension: 128)
    configuration.user = "ann"
    await #expect(throws: EngramError.reindexNeedsEveryUser(users: ["bob"])) {
      _ = try await MemoryEngine.reindex(path: path, configuration: configuration)
    }
    // Nothing changed: Bob's memory still opens with the old model.
    let reopened = try Self.engine(path, user: "bob")
    defer { reopened.close() }
    #expect(try await reopened.memories.list().map(\.content) == ["Bob likes climbing"])
  }

  /// Invalid user ids are refused before anything opens; the location decides the store.
  @Test func userIDsAndLocationsAreChecked() throws {
    let folder = try TemporaryFolder()
    for bad in ["", "-x", ".hidden", "a b", "ünï", String(repeating: "a", count: 129), "a/b"] {
      var configuration = hashingConfiguration()
      configuration.user = bad
      #expect(throws: EngramError.self) {
        try MemoryEngine(path: folder.path("m.sqlite"), configuration: configuration)
      }
    }
    #expect(!FileManager.default.fileExists(atPath: folder.path("m.sqlite")))
    // Without the PostgreSQL store (EngramPostgres not linked; PostgresBackendTests: with it).
    StoreBackends.$scoped.withValue([:]) {
      #expect {
        try MemoryEngine.open(
          "postgresql://engram@localhost:5432/memory", configuration: hashingConfiguration())
      } throws: { error in
        guard case .storeUnavailable(let location, let missing) = error as? StoreError else { return false }
        return location == "postgresql://engram@localhost:5432/memory" && missing.contains("EngramPostgres")
      }
    }
    #expect(
      throws: StoreError.invalidLocation(
        "mysql://x/y", reason: "unknown scheme 'mysql': give a SQLite file path or a postgresql:// URI")
    ) {
      try MemoryEngine.open("mysql://x/y", configuration: hashingConfiguration())
    }
  }
}
