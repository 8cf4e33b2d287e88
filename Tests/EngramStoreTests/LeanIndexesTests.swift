import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// Migration 7: fewer, leaner indexes, and known speakers from a table kept by triggers.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct LeanIndexesTests {
  /// Two users' sessions, turns (some with speakers), a memory, a summary and embeddings,
  /// written through the store's own operations (embeddings as before migration 8 when
  /// `beforeMigration8`).
  private static func fill(_ connection: Connection, beforeMigration8: Bool = false) throws {
    try connection.configureEmbeddingModel(model: "m", dimension: 2)
    for (user, word) in [("default", "walrus"), ("bob", "heron")] {
      connection.user = user
      let session = try connection.insert(Session(externalID: "trip", startedAt: t0))
      var turns: [Message] = []
      for index in 0..<40 {
        turns.append(
          Message(
            sessionID: index % 3 == 0 ? nil : session, role: index % 2 == 0 ? .user : .assistant,
            speaker: [nil, "Ann", "Émile", "ann"][index % 4],
            content: index % 7 == 0 ? "我周末去攀岩了 \(word)\(index)" : "running shoes \(word)\(index)",
            createdAt: t(Int64(1000 - index))))
      }
      // As the schema of the database's version has them (later columns left out).
      let ids = try turns.map { try connection.legacyInsert($0) }
      let memory = try connection.insert(
        Memory(kind: .fact, content: "\(word) likes kayaks", createdAt: t(5)))
      let summary = try connection.insert(
        Summary(
          sessionID: session, firstMessageID: ids[1], lastMessageID: ids[2], startAt: t(1), endAt: t(2),
          content: "a \(word) summary", createdAt: t(3)))
      for (kind, id) in [(ItemKind.message, ids[4]), (.memory, memory), (.summary, summary)] {
        let row = EmbeddingRow(
          ownerKind: kind, ownerID: id, model: "m", vector: [1, Float(id)], createdAt: t0)
        if beforeMigration8 {
          try connection.insertEmbeddingBeforeMigration8(row)
        } else {
          try connection.upsertEmbedding(row)
        }
      }
    }
    connection.user = StoreUser.defaultID
  }

  /// Every row of every table (but the tables later migrations add: speakers, 7; routines,
  /// 14), in key order.
  private static func rows(_ connection: Connection) throws -> [String: [[String]]] {
    let tables = try connection.prepare(
      """
      SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
        AND name NOT LIKE '%_fts%' AND name NOT IN ('speakers', 'routines') ORDER BY name
      """
    ).map { $0.string(at: 0) }
    var result: [String: [[String]]] = [:]
    for table in tables {
      // Migration 8 stores the database's model as NULL: compared as the model it names.
      let selected =
        table == "embeddings"
        ? "id, owner_kind, owner_id, coalesce(model, (SELECT value FROM meta WHERE key = 'embedding_model')), dimension, encoding, vector, created_at, user_id"
        // Columns migrations 9 and 10 add are NULL for these rows: compared as absent.
        : try connection.legacyColumns(table).subtracting(["source_key", "delivered_at"]).sorted().joined(
          separator: ", ")
      let statement = try connection.prepare("SELECT \(selected) FROM \(table) ORDER BY 1, 2")
      let columns = Int(statement.columnCount)
      result[table] = try statement.map { row in
        (0..<columns).map { row.isNull(at: $0) ? "NULL" : "\(row.string(at: $0))|\(row.double(at: $0))" }
      }
    }
    return result
  }

  /// What the read path asks, for each user.
  private static func answers(_ connection: Connection) throws -> [String] {
    var answers: [String] = []
    for user in ["default", "bob", "nobody"] {
      connection.user = user
      for query in ["攀岩", "walrus14", "heron", "Ann", "run", "shoe walrus", "kayaks", "summary"] {
        answers.append("\(user) \(query): \(try connection.searchText(query, limit: 50))")
      }
      answers.append("\(user) speakers: \(try connection.distinctSpeakers())")
      answers.append("\(user) recent: \(try connection.recentMessages(limit: 5).map(\.id))")
      answers.append("\(user) counts: \(try connection.rowCounts().sorted { $0.key < $1.key })")
      answers.append("\(user) max embedding: \(try connection.maxEmbeddingID())")
      var seen: [Int64] = []
      try connection.forEachEmbedding { entry, vector in seen.append(entry.embeddingID + Int64(vector[1])) }
      answers.append("\(user) embeddings: \(seen)")
    }
    connection.user = StoreUser.defaultID
    return answers
  }

  private static func objects(_ connection: Connection, type: String) throws -> [String] {
    try connection.prepare(
      "SELECT name FROM sqlite_schema WHERE type = ?1 AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name"
    ).bindingAndMap([.text(type)]) { $0.string(at: 0) }
  }

  /// A schema-6 database migrates in one step to the same rows, answers and objects as one
  /// written at schema 7 from the start.
  @Test func aSchemaSixDatabaseMigratesToTheSameRowsAndAnswers() throws {
    let directory = try TemporaryDirectory()
    let old = try Connection(path: directory.file("v6.sqlite"))
    try old.enableWriteAheadLog()
    try Migrator.migrate(old, migrations: Array(Migration.all.prefix(6)))
    try Self.fill(old, beforeMigration8: true)
    let rowsBefore = try Self.rows(old)
    #expect(try Migrator.migrate(old) == Migration.all.count - 6)
    #expect(try old.userVersion() == Migration.all.count)

    let fresh = try makeMigratedConnection(directory, name: "v7.sqlite")
    try Self.fill(fresh)
    #expect(try Self.rows(old) == rowsBefore)
    #expect(try Self.rows(fresh) == rowsBefore)
    #expect(try Self.answers(old) == Self.answers(fresh))
    #expect(try Self.objects(old, type: "index") == Self.objects(fresh, type: "index"))
    #expect(try Self.objects(old, type: "trigger") == Self.objects(fresh, type: "trigger"))
    #expect(try Self.objects(old, type: "table") == Self.objects(fresh, type: "table"))
    #expect(
      try old.prepare("SELECT user_id, speaker, turns FROM speakers ORDER BY 1, 2").map {
        "\($0.string(at: 0)) \($0.string(at: 1)) \($0.int(at: 2))"
      } == [
        "bob Ann 10", "bob ann 10", "bob Émile 10", "default Ann 10", "default ann 10", "default Émile 10",
      ])
    for connection in [old, fresh] {
      #expect(try connection.integrityCheck() == [])
      #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))
    }
  }

  /// The indexes migration 7 leaves, and those later ones add (ingest keys, identical
  /// memories, calendar UIDs): one page each at least, so only those a query reads.
  @Test func onlyTheIndexesQueriesReadRemain() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    #expect(
      try Self.objects(connection, type: "index") == [
        "agent_items_calendar_uid", "embeddings_user", "memories_content_prefix", "memories_superseded",
        "memories_user",
        "messages_session_time",
        "messages_source_key", "messages_user", "summaries_user", "traces_user",
      ])
  }

  /// Read paths keep their index seeks: items by id, a user's rows, owners' embeddings,
  /// the speakers, a session's turns in time order.
  @Test(arguments: [
    (
      """
      SELECT id FROM memories WHERE user_id = ?1 AND substr(content, 1, 64) = substr(?3, 1, 64)
        AND kind = ?2 AND +content = ?3 AND superseded_by IS NULL AND scope_user IS ?4 ORDER BY id LIMIT 1
      """,
      "memories_content_prefix (user_id=? AND <expr>=?)"
    ),
    (
      "SELECT id, content FROM messages WHERE id IN (SELECT value FROM json_each(?1)) AND user_id = ?2",
      "messages_user (user_id=? AND id=? AND rowid=?)"
    ),
    ("SELECT count(*) FROM messages WHERE user_id = ?1", "COVERING INDEX messages_user (user_id=?)"),
    (
      "SELECT id FROM messages WHERE user_id = ?1 ORDER BY id LIMIT 10",
      "COVERING INDEX messages_user (user_id=?)"
    ),
    (
      "SELECT coalesce(max(id), 0) FROM embeddings WHERE user_id = ?1",
      "COVERING INDEX embeddings_user (user_id=?)"
    ),
    (
      "SELECT id FROM embeddings WHERE owner_kind = ?1 AND owner_id = ?2 AND user_id = ?3",
      "sqlite_autoindex_embeddings_1 (owner_kind=? AND owner_id=?)"
    ),
    (
      "SELECT speaker FROM speakers WHERE user_id = ?1 ORDER BY speaker",
      "speakers USING PRIMARY KEY (user_id=?)"
    ),
    (
      "SELECT id FROM messages WHERE session_id = ?1 AND user_id = ?2 ORDER BY created_at, id",
      "messages_session_time (session_id=?)"
    ),
    (
      "SELECT id FROM traces WHERE user_id = ?2 AND execution_id = ?1 ORDER BY step, id",
      "traces_user (user_id=? AND execution_id=?)"
    ),
    (
      "SELECT id FROM pending_calls WHERE user_id = ?2 AND status = ?1 ORDER BY id",
      "SCAN pending_calls"
    ),
  ])
  func queriesSeekTheirIndexes(sql: String, expected: String) throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let plan = try connection.prepare("EXPLAIN QUERY PLAN " + sql).map { $0.string(at: 3) }
    #expect(plan.contains { $0.contains(expected) }, "\(plan)")
    #expect(!plan.contains { $0.hasPrefix("SCAN messages") || $0.hasPrefix("SCAN embeddings") }, "\(plan)")
  }

  /// The index loads read the embeddings in id order from the table: no index pass and no
  /// temporary b-tree holding every vector to sort them (which made loads superlinear;
  /// timed by `engram-bench snapshot-open`).
  @Test(arguments: [
    "WHERE +e.user_id = ?4 AND ((?1 AND e.owner_kind = 'message') OR (?2 AND e.owner_kind = 'memory')"
      + " OR (?3 AND e.owner_kind = 'summary')) ORDER BY e.id",
    "WHERE e.id > ?1 AND +e.user_id = ?2 ORDER BY e.id",
    "WHERE e.id IN (SELECT value FROM json_each(?1)) AND +e.user_id = ?2 ORDER BY e.id",
  ])
  func embeddingLoadsReadTheTableInIdOrder(clause: String) throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let plan = try connection.prepare("EXPLAIN QUERY PLAN \(Connection.embeddingEntrySelect) \(clause)").map {
      $0.string(at: 3)
    }
    #expect(plan.contains { $0 == "SCAN e" || $0.hasPrefix("SEARCH e USING INTEGER PRIMARY KEY") }, "\(plan)")
    #expect(!plan.contains { $0.contains("TEMP B-TREE") || $0.contains("MULTI-INDEX") }, "\(plan)")
  }

  /// The speakers table follows every insert, update and delete of turns, per user.
  @Test func speakersFollowTurns() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    func scanned() throws -> [String] {
      try connection.prepare(
        "SELECT DISTINCT speaker FROM messages WHERE user_id = ?1 AND speaker IS NOT NULL ORDER BY speaker"
      ).bindingAndMap([.text(connection.user)]) { $0.string(at: 0) }
    }
    var ids: [Int64] = []
    for (index, speaker) in ["Ann", nil, "bob", "Ann", "Émile", "bob", "Ann B", nil].enumerated() {
      ids.append(
        try connection.insert(
          Message(role: .user, speaker: speaker, content: "turn \(index)", createdAt: t(Int64(index)))))
    }
    #expect(try connection.distinctSpeakers() == ["Ann", "Ann B", "bob", "Émile"])
    #expect(try connection.distinctSpeakers() == scanned())
    connection.user = "other"
    _ = try connection.insert(Message(role: .user, speaker: "Zed", content: "z", createdAt: t0))
    #expect(try connection.distinctSpeakers() == ["Zed"])
    connection.user = StoreUser.defaultID

    #expect(try connection.delete(Message.self, id: ids[4]))  // the only Émile
    #expect(try connection.delete(Message.self, id: ids[0]))  // one of two Ann
    #expect(try connection.distinctSpeakers() == ["Ann", "Ann B", "bob"])
    var turn = try #require(try connection.fetch(Message.self, id: ids[6]))
    turn.speaker = "Cleo"  // Ann B's only turn
    try connection.update(turn)
    turn = try #require(try connection.fetch(Message.self, id: ids[1]))
    turn.speaker = "bob"  // from none
    try connection.update(turn)
    turn = try #require(try connection.fetch(Message.self, id: ids[3]))
    turn.speaker = nil  // the last Ann
    try connection.update(turn)
    #expect(try connection.distinctSpeakers() == ["Cleo", "bob"])
    #expect(try connection.distinctSpeakers() == scanned())
    #expect(try connection.scalarInt("SELECT turns FROM speakers WHERE speaker = 'bob'") == 3)
    try connection.run("DELETE FROM messages WHERE user_id = 'default'")
    #expect(try connection.distinctSpeakers() == [])
    #expect(try connection.scalarInt("SELECT count(*) FROM speakers") == 1)
  }
}
