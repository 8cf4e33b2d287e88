import CSQLite
import EngramTestSupport
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct BatchInsertTests {
  private func messages(_ count: Int, from start: Int = 0) -> [Message] {
    var result: [Message] = []
    for index in start..<(start + count) {
      let role: MessageRole = index % 2 == 0 ? .user : .assistant
      let speaker: String? = index % 3 == 0 ? "Ann" : nil
      let content = "note \(index) about walrus\(index) 明天开会"
      result.append(Message(role: role, speaker: speaker, content: content, createdAt: t(Int64(index))))
    }
    return result
  }

  @Test func batchGivesTheSameRowsAndIdsAsSingleInserts() throws {
    let directory = try TemporaryDirectory()
    let single = try makeMigratedConnection(directory, name: "single.sqlite")
    let batch = try makeMigratedConnection(directory, name: "batch.sqlite")
    var records = messages(40)
    // Explicit ids interleaved with missing ones: the missing ones continue after the largest.
    records[5].id = 100
    records[9].id = 50
    let singleIDs = try single.transaction { try records.map { try single.insert($0) } }
    let batchIDs = try batch.transaction { try batch.insert(contentsOf: records) }
    #expect(batchIDs == singleIDs)
    #expect(batchIDs[6] == 101)
    #expect(try batch.list(Message.self, page: .all) == single.list(Message.self, page: .all))
    // A second batch continues the ids and needs no open transaction.
    let more = try batch.insert(contentsOf: messages(3, from: 40))
    #expect(more == [singleIDs.max()! + 1, singleIDs.max()! + 2, singleIDs.max()! + 3])
  }

  @Test func batchRowsAreFullTextIndexed() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let ids = try connection.insert(contentsOf: messages(30))
    let hits = try connection.searchText("walrus17", kinds: [.message], limit: 5)
    #expect(hits.map(\.ownerID) == [ids[17]])
    #expect(try connection.searchText("开会", kinds: [.message], limit: 50).count == 30)
    #expect(try connection.searchText("Ann", kinds: [.message], limit: 50).count == 10)
    let memories = try connection.insert(contentsOf: [
      Memory(kind: .fact, content: "Ann climbs on weekends", createdAt: t0),
      Memory(kind: .note, content: "buy oat milk", createdAt: t0),
    ])
    #expect(try connection.searchText("oat", kinds: [.memory], limit: 5).map(\.ownerID) == [memories[1]])
  }

  @Test func emptyAndSingleBatches() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    #expect(try connection.insert(contentsOf: [Message]()) == [])
    #expect(try connection.insert(contentsOf: messages(1)) == [1])
    #expect(try connection.count(Message.self) == 1)
  }

  @Test func aConstraintViolationWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    try connection.insert(contentsOf: messages(3))
    var records = messages(5, from: 3)
    records[4].id = 2  // taken
    #expect(throws: SQLiteError.self) { try connection.insert(contentsOf: records) }
    #expect(try connection.count(Message.self) == 3)
    #expect(try connection.searchText("walrus4", kinds: [.message], limit: 5).isEmpty)
    var invalidJSON = messages(2, from: 10)
    invalidJSON[1].metadata = "{not json"
    #expect(throws: SQLiteError.self) {
      try connection.transaction { try connection.insert(contentsOf: invalidJSON) }
    }
    #expect(try connection.count(Message.self) == 3)
    // The staging table is left empty: the next batch holds only its own rows.
    #expect(try connection.insert(contentsOf: messages(2, from: 20)) == [4, 5])
    #expect(try connection.count(Message.self) == 5)
  }

  @Test func anInvalidRecordIsRefusedBeforeAnyWrite() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let records = [
      Memory(kind: .fact, content: "fine", createdAt: t0),
      Memory(kind: .fact, content: "bad", importance: 2, createdAt: t0),
    ]
    #expect(throws: StoreError.invalidImportance(2)) { try connection.insert(contentsOf: records) }
    #expect(try connection.count(Memory.self) == 0)
  }

  @Test func batchesLargerThanOneStatementKeepOrderIdsAndIndex() throws {
    let directory = try TemporaryDirectory()
    let single = try makeMigratedConnection(directory, name: "single.sqlite")
    let batch = try makeMigratedConnection(directory, name: "batch.sqlite")
    // 20 parameters hold two 9-column message rows: 25 records need 13 statements of two
    // sizes (2 and 1 rows), more sizes than the statement cache keeps across batches.
    #expect(sqlite3_limit(batch.handle, SQLITE_LIMIT_VARIABLE_NUMBER, 20) > 20)
    var records = messages(25)
    records[3].id = 70
    records[11].id = 7
    let singleIDs = try single.transaction { try records.map { try single.insert($0) } }
    let batchIDs = try batch.insert(contentsOf: records)
    #expect(batchIDs == singleIDs)
    #expect(try batch.list(Message.self, page: .all) == single.list(Message.self, page: .all))
    for size in [3, 7, 2, 5, 9] {
      let start = try batch.count(Message.self) + 100
      let more = try batch.insert(contentsOf: messages(size, from: start))
      let moreSingle = try single.transaction {
        try messages(size, from: start).map { try single.insert($0) }
      }
      #expect(more == moreSingle)
    }
    #expect(try batch.list(Message.self, page: .all) == single.list(Message.self, page: .all))
    #expect(try batch.searchText("walrus24", kinds: [.message], limit: 5).map(\.ownerID) == [batchIDs[24]])
    #expect(try batch.searchText("明天", kinds: [.message], limit: 100).count == 51)
    // The same ranked hits with the same BM25 scores as single inserts, and an intact index.
    for query in ["walrus3", "note about", "开会", "Ann", "明天 walrus17"] {
      #expect(
        try batch.searchText(query, kinds: [.message], limit: 100)
          == single.searchText(query, kinds: [.message], limit: 100))
    }
    #expect(try batch.ftsConsistency().allSatisfy(\.isConsistent))
    let speakerHits = try batch.searchText("Ann", kinds: [.message], limit: 100).map(\.ownerID).sorted()
    #expect(speakerHits.count >= 9)
    #expect(
      speakerHits == (try single.searchText("Ann", kinds: [.message], limit: 100).map(\.ownerID).sorted()))
  }

  @Test func aFailureInALaterStatementWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    #expect(sqlite3_limit(connection.handle, SQLITE_LIMIT_VARIABLE_NUMBER, 27) > 27)
    try connection.insert(contentsOf: messages(4))
    var records = messages(12, from: 4)
    records[10].id = 3  // taken; its statement runs after three others have inserted rows
    #expect(throws: SQLiteError.self) { try connection.insert(contentsOf: records) }
    #expect(try connection.count(Message.self) == 4)
    #expect(try connection.searchText("walrus5", kinds: [.message], limit: 5).isEmpty)
    #expect(try connection.searchText("开会", kinds: [.message], limit: 50).count == 4)
    // Inside a caller's transaction the caller's earlier rows stay; the batch's are gone.
    try connection.transaction {
      try connection.insert(Message(role: .user, content: "kept otter", createdAt: t0))
      #expect(throws: SQLiteError.self) { try connection.insert(contentsOf: records) }
    }
    #expect(try connection.count(Message.self) == 5)
    #expect(try connection.searchText("otter", kinds: [.message], limit: 5).count == 1)
    #expect(try connection.insert(contentsOf: messages(12, from: 40)) == Array(6...17))
  }

  @Test func theFullParameterLimitIsUsed() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let limit = Int(sqlite3_limit(connection.handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
    // One row more than a statement holds: two statements, every row in order.
    let count = limit / (Message.columns.count + 1) + 1
    let ids = try connection.insert(contentsOf: messages(count))
    #expect(ids == Array(1...Int64(count)))
    #expect(try connection.count(Message.self) == count)
    let last = try #require(try connection.fetch(Message.self, id: Int64(count)))
    #expect(last.content == messages(1, from: count - 1)[0].content)
    #expect(
      try connection.searchText("walrus\(count - 1)", kinds: [.message], limit: 5).map(\.ownerID) == [
        Int64(count)
      ])
  }

  /// Ids are never reused (migration 3, AUTOINCREMENT): once an explicit id takes the
  /// largest possible id, no later row can get one, and the batch fails whole (SQLite's
  /// "full") instead of reusing or overflowing an id.
  @Test func anExplicitMaximumIdRetiresEveryLaterId() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    var records = messages(4)
    records[1].id = Int64.max
    #expect { try connection.insert(contentsOf: records) } throws: { isSQLite($0, .full) }
    #expect(try connection.count(Message.self) == 0)
    let ids = try connection.insert(contentsOf: Array(records.prefix(2)))
    #expect(ids == [1, Int64.max])
    #expect { try connection.insert(contentsOf: messages(2)) } throws: { isSQLite($0, .full) }
    #expect(try connection.count(Message.self) == 2)
  }
}
