import EngramCore
import EngramPostgres
import EngramPostgresTestSupport
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// What keeps round trips to the server few: statements prepared per connection, batched
/// writes, one statement per search, and the generation known from the feed.
@Suite("PostgreSQL round trips", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresRoundTripTests {
  @Test func aStatementRunTwiceIsPreparedAndReplannedWhenItsTableChanges() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try connection.execute("CREATE TABLE t (a bigint)")
      try connection.execute("INSERT INTO t VALUES (1), (2)")
      let sql = "SELECT * FROM t WHERE a >= $1 ORDER BY a"
      #expect(try connection.execute(sql, [.int(1)]).count == 2)
      #expect(!connection.isPrepared(sql, types: [20]))
      #expect(try connection.execute(sql, [.int(2)]).count == 1)
      #expect(connection.isPrepared(sql, types: [20]))
      #expect(try connection.execute(sql, [.int(0)])[1].int64(0) == 2)
      // Another column changes the statement's result type: the prepared plan fails once,
      // and the next run prepares it anew.
      try connection.execute("ALTER TABLE t ADD COLUMN b text")
      #expect(throws: PostgresError.self) { try connection.execute(sql, [.int(1)]) }
      #expect(!connection.isPrepared(sql, types: [20]))
      #expect(try connection.execute(sql, [.int(1)]).columnCount == 2)
    }
  }

  @Test func batchedInsertsKeepOrderAndBumpTheGenerationOncePerStatement() throws {
    try PostgresTestServer.withDatabase { _, url in
      let store = try PostgresStore(uri: url, user: "alice")
      defer { store.close() }
      let t0 = Date(timeIntervalSince1970: 1_700_000_000)
      let (ids, before, after) = try store.writeTransaction { session -> ([Int64], Int64, Int64) in
        try session.configureEmbeddingModel(model: "m", dimension: 2, replace: false)
        let messages = (0..<1_200).map {
          Message(
            role: .user, speaker: "Ann", content: "turn \($0)", createdAt: t0.addingTimeInterval(Double($0)))
        }
        let ids = try session.insert(contentsOf: messages)
        let before = try session.embeddingGeneration()
        var rows = ids.map {
          EmbeddingRow(ownerKind: .message, ownerID: $0, model: "m", vector: [1, 0], createdAt: t0)
        }
        // The same owner twice: the later row wins, as with one upsert after the other.
        rows.append(
          EmbeddingRow(ownerKind: .message, ownerID: ids[0], model: "m", vector: [0, 1], createdAt: t0))
        try session.upsertEmbeddings(rows)
        return (ids, before, try session.embeddingGeneration())
      }
      #expect(ids.count == 1_200 && ids == ids.sorted() && Set(ids).count == 1_200)
      // 500 rows a statement: three statements.
      #expect(after - before == 3)
      try store.readTransaction { session in
        let stored = try session.list(Message.self, page: Page(limit: 2_000))
        #expect(stored.map(\.id) == ids.map(Optional.some))
        #expect(stored.map(\.content) == (0..<1_200).map { "turn \($0)" })
        #expect(try session.count(EmbeddingRow.self) == 1_200)
        #expect(try session.embedding(ownerKind: .message, ownerID: ids[0])?.vector == [0, 1])
        #expect(try session.embedding(ownerKind: .message, ownerID: ids[1])?.vector == [1, 0])
      }
    }
  }

  @Test func oneStatementReadsKeywordAndVectorCandidatesWithTheirRows() throws {
    try PostgresTestServer.withDatabase { _, url in
      let store = try PostgresStore(uri: url, user: "alice")
      defer { store.close() }
      let t0 = Date(timeIntervalSince1970: 1_700_000_000)
      let ids = try store.writeTransaction { session -> [Int64] in
        let sessionID = try session.insert(Session(externalID: "s", startedAt: t0))
        return try session.insert(
          contentsOf: ["we went climbing", "the dentist was late", "climbing again on Sunday"].enumerated()
            .map {
              Message(
                sessionID: sessionID, role: .user, speaker: "Ann", content: $1,
                createdAt: t0.addingTimeInterval(Double($0)))
            })
      }
      let memory = try store.writeTransaction { session in
        try session.insert(Memory(kind: .fact, content: "Ann climbs", createdAt: t0, updatedAt: t0))
      }
      let found = try store.read { session in
        try session.searchCandidates(
          keywordQuery: "climbing", kinds: Set(ItemKind.allCases), limit: 10, sessionID: nil, timeRange: nil,
          vectorIDs: [.message: [ids[1]], .memory: [memory, 999]])
      }
      #expect(Set(found.keywordHits.map(\.ownerID)) == [ids[0], ids[2]])
      let expected = try store.read { try $0.searchText("climbing", limit: 10) }
      #expect(found.keywordHits == expected)
      #expect(
        Set(found.rows.map { "\($0.kind.rawValue)\($0.id)" }) == [
          "message\(ids[0])", "message\(ids[1])", "message\(ids[2])", "memory\(memory)",
        ])
      #expect(found.texts[.message]?[ids[1]]?.text == "the dentist was late")
      #expect(found.texts[.memory]?[memory]?.text == "Ann climbs")
      let row = try #require(found.rows.first { $0.kind == .message && $0.id == ids[1] })
      #expect(row.previous == ids[0] && row.next == ids[2] && row.speaker == "Ann")
    }
  }

  // The feed runs on threads of its own; `eventually` looks at it from a BlockingWork thread,
  // so no cooperative thread waits and the deadline is not stretched by scheduling.
  @Test func theStoreFollowsAnotherNodesWritesWithoutAskingTheDatabase() async throws {
    try await PostgresTestServer.inDatabase { _, url in
      let reader = try PostgresStore(uri: url, user: "alice")
      let writer = try PostgresStore(uri: url, user: "alice")
      defer {
        reader.close()
        writer.close()
      }
      try writer.writeTransaction { try $0.configureEmbeddingModel(model: "m", dimension: 1, replace: false) }
      // The first call only starts the feed; it answers once connected.
      #expect(reader.followedEmbeddingGeneration() == nil)
      // Under the whole suite's load the feed's connection can take a while.
      #expect(
        await eventually(within: .seconds(60), every: .milliseconds(10)) {
          reader.followedEmbeddingGeneration() != nil
        })
      let followed = reader.followedEmbeddingGeneration()
      #expect(followed == 0)
      let t0 = Date(timeIntervalSince1970: 1_700_000_000)
      let generation = try writer.writeTransaction { session -> Int64 in
        let id = try session.insert(Memory(kind: .fact, content: "x", createdAt: t0, updatedAt: t0))
        try session.upsertEmbedding(
          EmbeddingRow(ownerKind: .memory, ownerID: id, model: "m", vector: [1], createdAt: t0))
        return try session.embeddingGeneration()
      }
      let knownInASecond = await eventually(within: .seconds(1)) {
        reader.followedEmbeddingGeneration() == generation
      }
      let known = reader.followedEmbeddingGeneration()
      #expect(knownInASecond, "not known within a second")
      #expect(known == generation, "not known within a second")
    }
  }
}
