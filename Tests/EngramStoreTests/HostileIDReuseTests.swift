import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// Migration 3 retires ids: a forgotten item's id is never handed to a new one, and the
/// rebuild keeps every row, link, embedding and full-text entry of a version 2 database.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileIDReuseTests {
  @Test func migrationThreeKeepsRowsAndLinksAndRetiresIDs() throws {
    let directory = try TemporaryDirectory()
    let connection = try Connection(path: directory.file("v2.sqlite"))
    try connection.enableWriteAheadLog()
    try Migrator.migrate(connection, migrations: Array(Migration.all.prefix(2)))
    #expect(try connection.userVersion() == 2)
    try connection.configureEmbeddingModel(model: "m", dimension: 2)
    let session = try connection.legacyInsert(Session(title: "garden", startedAt: t0))
    var messageIDs: [Int64] = []
    for index in 0..<6 {
      messageIDs.append(
        try connection.legacyInsert(
          Message(
            sessionID: session, role: .user, speaker: "Ann", content: "tomatoes walrus\(index)",
            createdAt: t(Int64(index)))))
    }
    let summary = try connection.legacyInsert(
      Summary(
        sessionID: session, startAt: t0, endAt: t(5), content: "the garden walrus summary", createdAt: t0))
    try connection.run("UPDATE messages SET summary_id = ?1", [.integer(summary)])
    let older = try connection.legacyInsert(Memory(kind: .fact, content: "Ann likes basil", createdAt: t0))
    let newer = try connection.legacyInsert(Memory(kind: .fact, content: "Ann loves basil", createdAt: t(1)))
    try connection.run(
      "UPDATE memories SET superseded_by = ?1, updated_at = ?2 WHERE id = ?3",
      [.integer(newer), .integer(Timestamp.milliseconds(t(2))), .integer(older)])
    for (kind, id) in [(ItemKind.message, messageIDs[2]), (.summary, summary), (.memory, newer)] {
      try connection.legacyInsertEmbedding(
        EmbeddingRow(ownerKind: kind, ownerID: id, model: "m", vector: [1, 2], createdAt: t0))
    }
    let messagesBefore = try connection.legacyList(Message.self)
    let memoriesBefore = try connection.legacyList(Memory.self)
    let summariesBefore = try connection.legacyList(Summary.self)

    #expect(try Migrator.migrate(connection) == Migration.all.count - 2)
    #expect(try connection.list(Message.self, page: .all) == messagesBefore)
    #expect(try connection.list(Memory.self, page: .all) == memoriesBefore)
    #expect(try connection.list(Summary.self, page: .all) == summariesBefore)
    #expect(
      try connection.scalarInt("SELECT count(*) FROM messages WHERE summary_id = ?1", [.integer(summary)])
        == 6)
    #expect(try connection.fetch(Memory.self, id: older)?.supersededBy == newer)
    #expect(try connection.scalarInt("SELECT count(*) FROM embeddings") == 3)
    #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))
    #expect(try connection.integrityCheck() == [])
    #expect(try connection.scalarInt("PRAGMA foreign_key_check") == nil)
    for table in ["messages", "memories", "summaries"] {
      let schema =
        try connection.scalarString("SELECT sql FROM sqlite_schema WHERE name = ?1", [.text(table)]) ?? ""
      #expect(schema.contains("AUTOINCREMENT") && !schema.contains("_new"), "\(schema)")
    }

    // The triggers work on the rebuilt tables, and a forgotten highest id stays retired.
    #expect(try connection.delete(Memory.self, id: newer))
    #expect(try connection.embedding(ownerKind: .memory, ownerID: newer) == nil)
    #expect(try connection.fetch(Memory.self, id: older)?.supersededBy == nil)
    let next = try connection.insert(Memory(kind: .fact, content: "Ann grows mint", createdAt: t(3)))
    #expect(next == newer + 1)
    #expect(try connection.searchText("mint", kinds: [.memory]).map(\.ownerID) == [next])
    #expect(try connection.delete(Message.self, id: messageIDs.last!))
    let nextMessage = try connection.insert(Message(role: .user, content: "walrus again", createdAt: t(9)))
    #expect(nextMessage == messageIDs.last! + 1)
    #expect(try connection.delete(Summary.self, id: summary))
    #expect(try connection.scalarInt("SELECT count(*) FROM messages WHERE summary_id IS NOT NULL") == 0)
    let nextSummary = try connection.insert(
      Summary(startAt: t0, endAt: t0, content: "another summary", createdAt: t0))
    #expect(nextSummary == summary + 1)
  }

  /// A batch insert (ingest) assigns ids itself: it must skip retired ids too.
  @Test func batchInsertsNeverReuseAForgottenId() throws {
    let directory = try TemporaryDirectory()
    let connection = try Connection(path: directory.file("batch.sqlite"))
    try Migrator.migrate(connection)
    let first = try connection.insert(
      contentsOf: (0..<3).map { Message(role: .user, content: "first \($0)", createdAt: t(Int64($0))) })
    #expect(first == [1, 2, 3])
    #expect(try connection.delete(Message.self, id: 3))
    #expect(try connection.delete(Message.self, id: 2))
    let second = try connection.insert(
      contentsOf: (0..<2).map { Message(role: .user, content: "second \($0)", createdAt: t(Int64($0))) })
    #expect(second == [4, 5])
    #expect(try connection.insert(Message(role: .user, content: "single", createdAt: t0)) == 6)
    #expect(try connection.fetch(Message.self, id: 5)?.content == "second 1")
  }
}
