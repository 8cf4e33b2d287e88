import EngramCore
import EngramPostgresTestSupport
import EngramTestSupport
import Foundation
import Testing

@testable import EngramPostgres
@testable import EngramStore

/// The PostgreSQL store against a real server: the same records and behaviour as the SQLite
/// store, every user kept apart, transactions all or nothing.
@Suite("PostgreSQL store", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresStoreTests {
  /// Stores of `users` on one new database.
  private func withStores<T>(_ users: [String], _ body: ([PostgresStore], String) throws -> T) throws -> T {
    try PostgresTestServer.withDatabase { _, url in
      let stores = try users.map { try PostgresStore(uri: url, user: $0) }
      defer { for store in stores { store.close() } }
      return try body(stores, url)
    }
  }

  @Test func everyRecordRoundTripsAsTheSQLiteStoreWritesIt() throws {
    try withStores(["alice"]) { stores, _ throws in
      let store = stores[0]
      try store.writeTransaction { session throws in
        try session.configureEmbeddingModel(model: "hashing", dimension: 3, replace: false)
        let sessionID = try session.insert(
          Session(externalID: "s1", title: "Trip", startedAt: t0, metadata: #"{"a":1}"#))
        let message = Message(
          sessionID: sessionID, role: .user, speaker: "Ann", content: "Booked the train ✓ 東京", createdAt: t0,
          tokenCount: 7, metadata: #"{"k":"v"}"#)
        let messageID = try session.insert(message)
        let summary = Summary(
          sessionID: sessionID, firstMessageID: messageID, lastMessageID: messageID, startAt: t0, endAt: t0,
          content: "Ann booked a train", structured: #"{"quoted_message_ids":[1]}"#, createdAt: t0)
        let summaryID = try session.insert(summary)
        let memory = Memory(
          kind: .preference, content: "Ann prefers window seats", importance: 0.75, createdAt: t0,
          lastAccessedAt: t0.addingTimeInterval(5), accessCount: 2, validFrom: t0,
          sourceMessageIDs: [messageID],
          scopeUser: "ann", scopeAgent: "planner", sessionID: sessionID, tags: ["travel", "seat"],
          metadata: #"{"source":"chat"}"#)
        let memoryID = try session.insert(memory)
        let embedding = EmbeddingRow(
          ownerKind: .memory, ownerID: memoryID, model: "hashing", vector: [0.5, -1, 2], createdAt: t0)
        let embeddingID = try session.insert(embedding)
        let trace = Trace(
          executionID: "e1", step: 1, skillID: "calendar", arguments: #"{"x":2}"#, status: .ok, startedAt: t0,
          durationMs: 1.5)
        let traceID = try session.insert(trace)
        let call = PendingCall(executionID: "e1", skillID: "email", summary: "send", createdAt: t0)
        let callID = try session.insert(call)
        let item = AgentItem(kind: .reminder, title: "Call", body: nil, dueAt: t0, createdAt: t0, done: true)
        let itemID = try session.insert(item)

        var expected = message
        expected.id = messageID
        #expect(try session.fetch(Message.self, id: messageID) == expected)
        var expectedMemory = memory
        expectedMemory.id = memoryID
        #expect(try session.fetch(Memory.self, id: memoryID) == expectedMemory)
        var expectedSummary = summary
        expectedSummary.id = summaryID
        #expect(try session.fetch(Summary.self, id: summaryID) == expectedSummary)
        var expectedEmbedding = embedding
        expectedEmbedding.id = embeddingID
        #expect(try session.fetch(EmbeddingRow.self, id: embeddingID) == expectedEmbedding)
        #expect(try session.embedding(ownerKind: .memory, ownerID: memoryID) == expectedEmbedding)
        var expectedTrace = trace
        expectedTrace.id = traceID
        #expect(try session.traces(executionID: "e1") == [expectedTrace])
        var expectedCall = call
        expectedCall.id = callID
        #expect(try session.pendingCalls(status: .pending) == [expectedCall])
        var expectedItem = item
        expectedItem.id = itemID
        #expect(try session.agentItems(kind: .reminder, limit: 10) == [expectedItem])
        #expect(try session.session(externalID: "s1")?.title == "Trip")
        #expect(try session.sessionID(named: "s1") == sessionID)

        try session.setPreference(Preference(key: "tz", value: "Europe/Paris", pinned: true, updatedAt: t0))
        #expect(
          try session.preference(key: "tz")
            == Preference(key: "tz", value: "Europe/Paris", pinned: true, updatedAt: t0))
        try session.setSkillState(SkillState(skillID: "email", enabled: false, updatedAt: t0))
        #expect(
          try session.skillState(skillID: "email")
            == SkillState(skillID: "email", enabled: false, updatedAt: t0))
        #expect(try session.count(Message.self, filter: RecordFilter(sessionID: sessionID)) == 1)
        #expect(
          try session.list(Memory.self, filter: RecordFilter(timeRange: t0ms..<(t0ms + 1))).map(\.id) == [
            memoryID
          ])
        #expect(try session.distinctSpeakers() == ["Ann"])
        #expect(try session.userVersion() == PostgresMigrator.all.count)
      }
    }
  }

  @Test func oneUsersRowsAreInvisibleToAnother() throws {
    try withStores(["alice", "bob"]) { stores, _ throws in
      let (alice, bob) = (stores[0], stores[1])
      let aliceMemory = try alice.writeTransaction { session throws in
        try session.insert(Memory(kind: .fact, content: "Alice's locker code is 4711", createdAt: t0))
      }
      let bobMemory = try bob.writeTransaction { session throws in
        try session.insert(Memory(kind: .fact, content: "Bob's locker is by the door", createdAt: t0))
      }
      try bob.readTransaction { session throws in
        #expect(
          try session.searchText(
            "locker code", kinds: Set(ItemKind.allCases), limit: 10, sessionID: nil, timeRange: nil
          )
          .map(\.ownerID) == [bobMemory])
        #expect(try session.fetch(Memory.self, id: aliceMemory) == nil)
        #expect(try session.count(Memory.self) == 1)
        #expect(
          try session.itemTexts([.memory: [aliceMemory, bobMemory]])[.memory]?.keys.sorted() == [bobMemory])
        #expect(try session.candidateRows([.memory: [aliceMemory]]).isEmpty)
        #expect(try session.storedUsers() == ["alice", "bob"])
      }
      // Bob can neither change nor delete nor forget Alice's memory.
      try bob.writeTransaction { session throws in
        var stolen = Memory(kind: .fact, content: "changed", createdAt: t0)
        stolen.id = aliceMemory
        #expect(throws: StoreError.notFound(table: "memories", id: aliceMemory)) {
          try session.update(stolen)
        }
        #expect(try session.delete(Memory.self, id: aliceMemory) == false)
        #expect(try session.forgetItem(kind: .memory, id: aliceMemory) == nil)
      }
      try alice.readTransaction { session throws in
        #expect(try session.fetch(Memory.self, id: aliceMemory)?.content == "Alice's locker code is 4711")
        #expect(
          try session.searchText("locker", kinds: [.memory], limit: 10, sessionID: nil, timeRange: nil)
            .map(\.ownerID) == [aliceMemory])
      }
    }
  }

  @Test func aFailedTransactionLeavesNothing() throws {
    try withStores(["alice"]) { stores, _ throws in
      let store = stores[0]
      struct Abort: Error {}
      #expect(throws: Abort.self) {
        try store.writeTransaction { session throws in
          _ = try session.insert(Message(role: .user, content: "first", createdAt: t0))
          _ = try session.insert(Memory(kind: .fact, content: "second", createdAt: t0))
          throw Abort()
        }
      }
      // A statement refused by the server half-way: nothing of the transaction stays.
      #expect(throws: StoreError.invalidImportance(2)) {
        try store.writeTransaction { session throws in
          _ = try session.insert(Message(role: .user, content: "third", createdAt: t0))
          _ = try session.insert(Memory(kind: .fact, content: "bad", importance: 2, createdAt: t0))
        }
      }
      let error = #expect(throws: PostgresError.self) {
        try store.writeTransaction { session throws in
          _ = try session.insert(Message(role: .user, content: "fourth", createdAt: t0))
          _ = try session.insert(
            Message(sessionID: 999_999, role: .user, content: "no such session", createdAt: t0))
        }
      }
      // The foreign keys are deferrable (for imports) but checked at the statement by default.
      #expect(error?.sqlState == .foreignKeyViolation)
      try store.readTransaction { session throws in
        #expect(try session.count(Message.self) == 0)
        #expect(try session.count(Memory.self) == 0)
      }
      // The store still works afterwards.
      try store.writeTransaction { session throws in
        _ = try session.insert(Message(role: .user, content: "ok", createdAt: t0))
      }
      try store.readTransaction { session throws in #expect(try session.count(Message.self) == 1) }
    }
  }

  @Test func idsAreNeverReused() throws {
    try withStores(["alice"]) { stores, _ throws in
      try stores[0].writeTransaction { session throws in
        let first = try session.insert(Memory(kind: .fact, content: "a", createdAt: t0))
        let second = try session.insert(Memory(kind: .fact, content: "b", createdAt: t0))
        #expect(try session.delete(Memory.self, id: second))
        let third = try session.insert(Memory(kind: .fact, content: "c", createdAt: t0))
        #expect(third > second && second > first)
        // An explicit id moves the sequence past it.
        var explicit = Memory(kind: .fact, content: "d", createdAt: t0)
        explicit.id = third + 100
        #expect(try session.insert(explicit) == third + 100)
        #expect(try session.insert(Memory(kind: .fact, content: "e", createdAt: t0)) > third + 100)
      }
    }
  }

  @Test func keywordSearchFindsWhatTheSQLiteStoreFinds() throws {
    let texts = [
      "I was running along the river yesterday", "The Eiffel Tower in PARIS is tall",
      "Cooking pasta with tomatoes and basil", "我周末去攀岩了", "明天下午三点开会",
      "Ann's friends went climbing on Saturday", "We ran to the café crème place",
    ]
    let folder = try ScratchFolder()
    let sqlite = try Connection(path: folder.path("test.sqlite"))
    try sqlite.enableWriteAheadLog()
    try Migrator.migrate(sqlite)
    try withStores(["alice"]) { stores, _ throws in
      try stores[0].writeTransaction { session throws in
        for (offset, text) in texts.enumerated() {
          let message = Message(
            role: .user, speaker: "Ann", content: text,
            createdAt: t0.addingTimeInterval(Double(offset) * 86_400))
          #expect(try session.insert(message) > 0)
          try sqlite.insert(message)
        }
      }
      try stores[0].readTransaction { session throws in
        let queries = [
          "run", "climbing", "Paris tower", "攀岩", "开会", "cafe", "what did Ann say", "\"15 November 2023\"",
          "?!",
        ]
        for query in queries {
          let postgres = try session.searchText(
            query, kinds: [.message], limit: 10, sessionID: nil, timeRange: nil)
          let expected = try sqlite.searchText(query, kinds: [.message], limit: 10)
          // The same documents (ids are per store: compare the texts), and the same best one.
          func contents(_ hits: [TextHit], _ fetch: (Int64) throws -> String?) throws -> Set<String> {
            Set(try hits.compactMap { try fetch($0.ownerID) })
          }
          let found = try contents(postgres) { try session.fetch(Message.self, id: $0)?.content }
          let wanted = try contents(expected) { try sqlite.fetch(Message.self, id: $0)?.content }
          #expect(found == wanted, "\(query)")
          if let best = postgres.first, let bestSQLite = expected.first, expected.count > 1,
            expected[0].bm25 > expected[1].bm25
          {
            #expect(
              try session.fetch(Message.self, id: best.ownerID)?.content
                == sqlite.fetch(Message.self, id: bestSQLite.ownerID)?.content,
              "\(query)")
          }
          #expect(postgres.allSatisfy { $0.bm25 > 0 })
        }
      }
    }
  }

  @Test func anExportImportsIntoAnotherUserWithTheSameRows() throws {
    try withStores(["alice", "bob"]) { stores, _ throws in
      let (alice, bob) = (stores[0], stores[1])
      try alice.writeTransaction { session throws in
        try session.configureEmbeddingModel(model: "hashing", dimension: 2, replace: false)
        let sessionID = try session.insert(Session(externalID: "trip", startedAt: t0))
        let turn = try session.insert(
          Message(sessionID: sessionID, role: .user, content: "We land at 9", createdAt: t0))
        let summaryID = try session.insert(
          Summary(
            sessionID: sessionID, firstMessageID: turn, lastMessageID: turn, startAt: t0, endAt: t0,
            content: "landing", createdAt: t0))
        try session.setSummary(summaryID, forMessages: [turn])
        let memory = try session.insert(
          Memory(kind: .event, content: "Flight lands at 9", createdAt: t0, sessionID: sessionID))
        try session.upsertEmbedding(
          EmbeddingRow(ownerKind: .memory, ownerID: memory, model: "hashing", vector: [1, 0], createdAt: t0))
        try session.setPreference(Preference(key: "lang", value: "fr", updatedAt: t0))
      }
      // Table by table, as the exporter reads and the importer writes them.
      let tables = [
        ("meta", "key"), ("sessions", "id"), ("summaries", "id"), ("messages", "id"), ("memories", "id"),
        ("embeddings", "id"), ("preferences", "key"), ("skill_state", "skill_id"), ("traces", "id"),
        ("pending_calls", "id"), ("agent_items", "id"),
      ]
      var exported: [(table: String, columns: [String], rows: [[SQLValue]])] = []
      try alice.readTransaction { session throws in
        for (table, order) in tables {
          var names: [String] = []
          var rows: [[SQLValue]] = []
          try session.forEachExportedRow(of: table, orderedBy: order, columns: { names = $0 }) { row in
            rows.append((0..<row.columnCount).map { row.value(at: $0) })
          }
          #expect(!names.contains("user_scope") && !names.contains("fts_text"))
          exported.append((table, names, rows))
        }
      }
      try bob.writeTransaction { session throws in
        #expect(try session.holdsItems() == false)
        try session.deferForeignKeys()
        // Meta (the embedding model) first, then children before parents: the deferred keys
        // are checked at commit.
        for (table, columns, rows) in exported.prefix(1) + exported.dropFirst().reversed() {
          for row in rows {
            try session.insertExportedRow(
              into: table, columns: columns, values: row, replacing: table == "meta" || table == "preferences"
            )
          }
        }
      }
      let snapshot = { (store: PostgresStore) throws -> [String] in
        try store.readTransaction { session throws in
          [
            "\(try session.list(Session.self))", "\(try session.list(Message.self))",
            "\(try session.list(Summary.self))",
            "\(try session.list(Memory.self))", "\(try session.list(EmbeddingRow.self))",
            "\(try session.preferences(pinnedOnly: false, page: .all))",
            "\(try session.embeddingModel().map(\.name) ?? "")",
            "\(try session.searchText("flight", kinds: [.memory], limit: 5, sessionID: nil, timeRange: nil).map(\.ownerID))",
          ]
        }
      }
      #expect(try snapshot(bob) == snapshot(alice))
      // Alice's rows are untouched and still only hers.
      try alice.readTransaction { session throws in #expect(try session.count(Memory.self) == 1) }
    }
  }

  @Test func typedErrorsAsTheSQLiteStoreThrows() throws {
    try withStores(["alice"]) { stores, url throws in
      try stores[0].writeTransaction { session throws in
        #expect(throws: StoreError.embeddingModelNotConfigured) {
          try session.upsertEmbedding(
            EmbeddingRow(ownerKind: .memory, ownerID: 1, model: "m", vector: [1], createdAt: t0))
        }
        try session.configureEmbeddingModel(model: "m", dimension: 2, replace: false)
        #expect(
          throws: StoreError.modelMismatch(
            expectedModel: "m", expectedDimension: 2, actualModel: "x", actualDimension: 2)
        ) {
          try session.upsertEmbedding(
            EmbeddingRow(ownerKind: .memory, ownerID: 1, model: "x", vector: [1, 2], createdAt: t0))
        }
        #expect(throws: StoreError.nonFiniteVector(index: 1)) {
          try session.upsertEmbedding(
            EmbeddingRow(ownerKind: .memory, ownerID: 1, model: "m", vector: [1, .nan], createdAt: t0))
        }
        #expect(throws: StoreError.missingID(table: "memories")) {
          try session.update(Memory(kind: .fact, content: "x", createdAt: t0))
        }
        #expect(throws: StoreError.invalidPage(limit: -1, offset: 0)) {
          try session.list(Memory.self, page: Page(limit: -1))
        }
      }
      let readOnly = try PostgresStore(uri: url, user: "alice", readOnly: true)
      defer { readOnly.close() }
      #expect(throws: StoreError.databaseReadOnly(path: readOnly.locationDescription)) {
        try readOnly.writeTransaction { _ in () }
      }
      #expect(throws: StoreError.invalidUser("")) { try PostgresStore(uri: url, user: "") }
      #expect(
        throws: StoreError.unsupported(
          operation: "vacuum", store: "PostgreSQL (\(readOnly.locationDescription))")
      ) {
        try readOnly.maintain(.vacuum)
      }
    }
  }

  @Test func theFactoryOpensAPostgreSQLLocationForTheGivenUser() throws {
    try PostgresTestServer.withDatabase { _, url in
      var options = StoreFactory.Options()
      options.user = "carol"
      let store = try StoreFactory.open(try StoreLocation(parsing: url), options: options)
      defer { store.close() }
      #expect(store is PostgresStore && store.user == "carol")
      let id = try store.writeTransaction {
        try $0.insert(Memory(kind: .note, content: "hello", createdAt: t0))
      }
      #expect(try store.readTransaction { try $0.fetch(Memory.self, id: id)?.content } == "hello")
      try store.writeTransaction { try $0.setMeta("embedding_model", "m") }
      // Inspect reads without writing (the default user's meta: Carol's is hers alone).
      #expect(
        try StoreFactory.inspect(try StoreLocation(parsing: url)) { try $0.meta("embedding_model") }
          == .some(nil))
    }
  }

  @Test func aBrokenConnectionIsReplacedOnItsNextUse() throws {
    try withStores(["alice"]) { stores, url throws in
      let store = stores[0]
      try store.writeTransaction { _ = try $0.insert(Memory(kind: .fact, content: "kept", createdAt: t0)) }
      // Terminate every backend of this database but the admin's (a server restart, as the
      // store's connections see it).
      let admin = try PostgresConnection(url: url)
      try admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
      )
      // A call on a dead connection either fails (its transaction wrote nothing) or, when the
      // store noticed the broken connection first, runs on a new one; never half ...
      let firstWrite = Result {
        try store.writeTransaction { _ = try $0.insert(Memory(kind: .fact, content: "lost", createdAt: t0)) }
      }
      for _ in 0..<2 {
        // A read either fails with the store's typed error or counts what was committed
        // ("kept", and "lost" when its write went through on a new connection).
        switch Result(catching: { try store.readTransaction { try $0.count(Memory.self) } }) {
        case .success(let count): #expect((1...2).contains(count), "\(count)")
        case .failure(let error): #expect(error is PostgresError, "\(error)")
        }
      }
      // ... and the next ones reconnect.
      try store.writeTransaction { _ = try $0.insert(Memory(kind: .fact, content: "after", createdAt: t0)) }
      let contents = try store.readTransaction { try $0.list(Memory.self).map(\.content) }
      #expect(contents.first == "kept" && contents.last == "after")
      // The write on the dead connection is there exactly when it reported success.
      switch firstWrite {
      case .success: #expect(contents.filter { $0 == "lost" }.count == 1, "\(contents)")
      case .failure: #expect(!contents.contains("lost"), "\(contents)")
      }
    }
  }
}
