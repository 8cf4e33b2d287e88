import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct MigratorTests {
  /// The compiled migrations must be exactly the files of schemas/migrations: run
  /// `make schemas` when this fails.
  @Test func generatedMigrationsMatchTheSQLFiles() throws {
    let folder = repositoryRoot.appendingPathComponent("schemas/migrations")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
      .filter { $0.hasSuffix(".sql") }.sorted()
    #expect(!files.isEmpty)
    #expect(files.count == Migration.all.count, "stale Migrations+Generated.swift: run `make schemas`")
    for (file, migration) in zip(files, Migration.all) {
      let base = String(file.dropLast(4))
      let parts = base.split(separator: "_", maxSplits: 1)
      #expect(Int(parts[0]) == migration.version)
      #expect(String(parts[1]) == migration.name)
      let sql = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
      #expect(sql == migration.sql, "stale migration \(file): run `make schemas`")
    }
  }

  @Test func migrationsAreNumberedFromOne() throws {
    #expect(Migration.all.map(\.version) == Array(1...Migration.all.count))
    let gap = [Migration(version: 1, name: "a", sql: ""), Migration(version: 3, name: "c", sql: "")]
    let connection = try Connection(path: ":memory:")
    #expect(throws: StoreError.invalidMigrations(version: 3, expected: 2)) {
      try Migrator.migrate(connection, migrations: gap)
    }
  }

  @Test func failingMigrationLeavesThePreviousVersion() throws {
    let connection = try Connection(path: ":memory:")
    let migrations = [
      Migration(version: 1, name: "one", sql: "CREATE TABLE a (v);"),
      Migration(version: 2, name: "two", sql: "CREATE TABLE b (v); CREATE TABLE a (v);"),
    ]
    #expect { try Migrator.migrate(connection, migrations: migrations) } throws: { isSQLite($0, .error) }
    #expect(try connection.userVersion() == 1)
    #expect(try connection.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'b'") == 0)
  }

  @Test func migrateIsIdempotent() throws {
    let connection = try Connection(path: ":memory:")
    #expect(try Migrator.migrate(connection) == Migration.all.count)
    #expect(try Migrator.migrate(connection) == 0)
    #expect(try connection.userVersion() == Migration.all.count)
  }
  /// Migration 2 rebuilds `messages` (a cheaper role CHECK): a version 1 database keeps its
  /// rows, ids, full-text index, triggers and constraints.
  @Test func messagesRebuildKeepsRowsIndexAndTriggers() throws {
    let directory = try TemporaryDirectory()
    let connection = try Connection(path: directory.file("v1.sqlite"))
    try connection.enableWriteAheadLog()
    try Migrator.migrate(connection, migrations: Array(Migration.all.prefix(1)))
    #expect(try connection.userVersion() == 1)
    let session = try connection.legacyInsert(Session(title: "climbing", startedAt: t0))
    var records: [Message] = []
    for index in 0..<50 {
      records.append(
        Message(
          sessionID: index % 2 == 0 ? session : nil, role: index % 3 == 0 ? .assistant : .user,
          speaker: index % 5 == 0 ? "Ann" : nil,
          content: index % 7 == 0 ? "我周末去攀岩了 walrus\(index)" : "running shoes walrus\(index)",
          createdAt: t(Int64(index))))
    }
    let ids = try records.map { try connection.legacyInsert($0) }
    try connection.configureEmbeddingModel(model: "m", dimension: 2)
    try connection.legacyInsertEmbedding(
      EmbeddingRow(ownerKind: .message, ownerID: ids[3], model: "m", vector: [1, 2], createdAt: t0))
    let queries = ["攀岩", "walrus14", "Ann", "run", "shoe walrus"]
    let rowsBefore = try connection.legacyList(Message.self)
    let hitsBefore = try queries.map { try connection.legacySearch($0, table: "messages") }

    // Up to migration 3 (4 rebuilds the keyword index with new terms, tested below).
    #expect(try Migrator.migrate(connection, migrations: Array(Migration.all.prefix(3))) == 2)
    #expect(try connection.legacyList(Message.self) == rowsBefore)
    #expect(try queries.map { try connection.legacySearch($0, table: "messages") } == hitsBefore)
    #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))
    #expect(try connection.integrityCheck() == [])
    #expect(try connection.scalarInt("PRAGMA foreign_key_check") == nil)
    let schema = try connection.scalarString("SELECT sql FROM sqlite_schema WHERE name = 'messages'") ?? ""
    #expect(schema.contains("role = 'tool'") && !schema.contains("messages_new"))
    let triggers = try connection.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'messages' ORDER BY name"
    ).map { $0.string(at: 0) }
    #expect(
      triggers == [
        "messages_embedding_delete", "messages_fts_delete", "messages_fts_insert", "messages_fts_update",
      ])
    let indexes = try connection.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'messages' ORDER BY name"
    ).map { $0.string(at: 0) }
    // Migrated up to 3 here; messages_speaker comes from migration 5 (VectorSnapshotStampTests).
    #expect(indexes == ["messages_session_time", "messages_time"])
    #expect(try connection.scalarInt("SELECT v FROM messages_fts_config WHERE k = 'automerge'") == 8)

    // The triggers work on the rebuilt table (brought up to the current schema, whose
    // record operations this part uses): insert, update and delete keep the index and the
    // embeddings in step; the constraints still refuse what they refused.
    try Migrator.migrate(connection)
    let added = try connection.insert(
      Message(role: .user, content: "明天下午三点开会 walrus99", createdAt: t(99)))
    #expect(added == ids.last! + 1)
    #expect(try connection.searchText("开会", kinds: [.message]).map(\.ownerID) == [added])
    var changed = rowsBefore[14]
    changed.content = "kayak trip"
    try connection.update(changed)
    #expect(try connection.searchText("walrus14", kinds: [.message]).isEmpty)
    #expect(try connection.searchText("kayak", kinds: [.message]).map(\.ownerID) == [ids[14]])
    #expect(try connection.delete(Message.self, id: ids[3]))
    #expect(try connection.embedding(ownerKind: .message, ownerID: ids[3]) == nil)
    #expect(try connection.searchText("walrus3", kinds: [.message]).isEmpty)
    #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))
    #expect {
      try connection.run("INSERT INTO messages (role, content, created_at) VALUES ('robot', 'x', 0)")
    } throws: {
      isSQLite($0, .constraint)
    }
    #expect {
      try connection.run(
        "INSERT INTO messages (role, content, created_at, session_id) VALUES ('user', 'x', 0, 999)")
    } throws: {
      isSQLite($0, .constraint)
    }
    for role in MessageRole.allCases {
      try connection.run(
        "INSERT INTO messages (role, content, created_at) VALUES (?1, 'ok', 0)", [.text(role.rawValue)])
    }
    #expect(try connection.delete(Session.self, id: session))
    #expect(try connection.count(Message.self) == 50 - 1 + 1 + MessageRole.allCases.count - 25)
  }

  /// Migration 4 rebuilds the keyword indexes with stemmed terms and turn days: rows
  /// indexed before it (as the old `engram_fts_text` did: the text as it was, for FTS5's
  /// porter tokenizer) are found by stem and by day afterwards, and can be updated and
  /// deleted without breaking the contentless index (whose deletes must repeat the terms).
  @Test func keywordIndexRebuildIndexesOldRowsWithNewTerms() throws {
    let directory = try TemporaryDirectory()
    let connection = try Connection(path: directory.file("v3.sqlite"))
    try connection.enableWriteAheadLog()
    try Migrator.migrate(connection, migrations: Array(Migration.all.prefix(3)))
    let may8 = Int64(1_557_323_760_000)  // 2019-05-08 13:56 UTC
    var ids: [Int64] = []
    for (index, text) in ["We went kayaking on the lake", "明天下午三点开会", "Ann's cats are knitting"].enumerated()
    {
      ids.append(
        try connection.legacyInsert(
          Message(role: .user, speaker: "Ann", content: text, createdAt: Timestamp.date(may8 + Int64(index))))
      )
    }
    let memory = try connection.legacyInsert(
      Memory(kind: .fact, content: "Ann knits scarves", createdAt: Timestamp.date(may8)))
    // The index as version 3 wrote it.
    for (table, text) in [("messages", "coalesce(speaker || ': ', '') || content"), ("memories", "content")] {
      try connection.execute("INSERT INTO \(table)_fts (\(table)_fts) VALUES ('delete-all')")
      try connection.execute("INSERT INTO \(table)_fts (rowid, body) SELECT id, \(text) FROM \(table)")
    }

    // Migration 4 (this one) and the later ones.
    #expect(try Migrator.migrate(connection) == Migration.all.count - 3)
    let schema =
      try connection.scalarString("SELECT sql FROM sqlite_schema WHERE name = 'messages_fts'") ?? ""
    #expect(schema.contains("unicode61") && !schema.contains("porter"))
    #expect(try connection.scalarInt("SELECT v FROM messages_fts_config WHERE k = 'automerge'") == 8)
    #expect(try connection.searchText("kayaks", kinds: [.message]).map(\.ownerID) == [ids[0]])
    #expect(try connection.searchText("开会", kinds: [.message]).map(\.ownerID) == [ids[1]])
    #expect(try connection.searchText("knitted cat", kinds: [.message]).map(\.ownerID) == [ids[2]])
    #expect(Set(try connection.searchText("8 May 2019", kinds: [.message]).map(\.ownerID)) == Set(ids))
    #expect(try connection.searchText("knitted", kinds: [.memory]).map(\.ownerID) == [memory])
    #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))

    var changed = try #require(try connection.fetch(Message.self, id: ids[0]))
    changed.content = "A quiet evening"
    try connection.update(changed)
    #expect(try connection.searchText("kayak", kinds: [.message]).isEmpty)
    #expect(try connection.delete(Message.self, id: ids[2]))
    #expect(try connection.delete(Memory.self, id: memory))
    #expect(try connection.searchText("knit", kinds: [.message, .memory]).isEmpty)
    #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))
    #expect(try connection.integrityCheck() == [])
  }
}
