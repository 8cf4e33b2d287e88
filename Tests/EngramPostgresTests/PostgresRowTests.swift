import EngramCore
import EngramPostgresTestSupport
import EngramTestSupport
import Foundation
import Testing

@testable import EngramPostgres
@testable import EngramStore

/// PostgreSQL binds a record's one encoding and reads records from its own rows (no SQLite
/// in between): the values it stores are the encoding, and a malformed row fails exactly as
/// it fails in the SQLite store.
@Suite("PostgreSQL rows", .timeLimit(.minutes(5)), .watchdog)
struct PostgresRowTests {
  /// A migrated SQLite store of its own, to compare with.
  private func sqlite() throws -> Connection {
    let connection = try Connection(path: ":memory:")
    try Migrator.migrate(connection)
    return connection
  }

  @Test func oneEncodingIsStoredAndReadBackAlikeByBothStores() throws {
    try PostgresTestServer.withDatabase { _, url in
      let store = try PostgresStore(uri: url, user: "alice")
      defer { store.close() }
      let sqlite = try sqlite()
      try sqlite.configureEmbeddingModel(model: "hashing", dimension: 3)
      try store.writeTransaction { session throws in
        try session.configureEmbeddingModel(model: "hashing", dimension: 3, replace: false)
        // The same parents, with the same ids, in both stores.
        let parents: [any StoredRecord] = [
          Session(id: 5, externalID: "s", title: "Trip", startedAt: t0),
          Message(id: 6, sessionID: 5, role: .user, content: "hi", createdAt: t0),
          Memory(id: 7, kind: .fact, content: "f", createdAt: t0),
        ]
        for parent in parents {
          #expect(try session.insert(parent) == parent.id)
          #expect(try sqlite.insert(parent) == parent.id)
        }
        let postgres = session as! PostgresSession
        for record in Self.records(sessionID: 5, messageID: 6, memoryID: 7) {
          try Self.checkAny(record, postgres, sqlite)
        }
      }
    }
  }

  /// One record of each table, every column set.
  static func records(sessionID: Int64, messageID: Int64, memoryID: Int64) -> [any StoredRecord] {
    [
      Session(
        externalID: "s2", title: "Home", startedAt: t0, endedAt: t0.addingTimeInterval(3), metadata: "{}"),
      Message(
        sessionID: sessionID, role: .tool, speaker: "Ann", content: "Booked ✓ 東京", createdAt: t0,
        tokenCount: 7,
        metadata: #"{"k":"v"}"#, summaryID: nil, sourceKey: 99),
      Memory(
        kind: .preference, content: "window seats", importance: 0.75, createdAt: t0,
        lastAccessedAt: t0.addingTimeInterval(5), accessCount: 2, validFrom: t0,
        sourceMessageIDs: [messageID],
        scopeUser: "ann", scopeAgent: "planner", sessionID: sessionID, tags: ["travel", "seat"],
        metadata: #"{"source":"chat"}"#),
      Summary(
        sessionID: sessionID, firstMessageID: messageID, lastMessageID: messageID, startAt: t0, endAt: t0,
        content: "Ann booked", structured: #"{"quoted_message_ids":[1]}"#, createdAt: t0),
      EmbeddingRow(
        ownerKind: .memory, ownerID: memoryID, model: "hashing", vector: [0.5, -1, 2], createdAt: t0),
      Trace(
        executionID: "e1", step: 2, skillID: "calendar", arguments: #"{"x":2}"#, result: "ok",
        status: .timeout,
        startedAt: t0, durationMs: 1.5, error: "slow"),
      PendingCall(executionID: "e1", skillID: "email", summary: "send", status: .confirmed, createdAt: t0),
      AgentItem(
        kind: .reminder, title: "Call", dueAt: t0, createdAt: t0, done: true, timeForm: .zoned,
        timeZone: "Europe/Paris", condition: "if it rains", conditionOutcome: .init(.held, reason: "rain")),
    ]
  }

  /// Inserts `record` in both stores with one id: each holds exactly its encoding, and each
  /// reads the record back.
  private static func check<R: StoredRecord & Equatable>(
    _ record: R, _ postgres: PostgresSession, _ sqlite: Connection
  )
    throws
  {
    var record = record
    record.id = try postgres.insert(record)
    #expect(try sqlite.insert(record) == record.id)
    let encoded = try record.encoded()
    let columns = R.columns.joined(separator: ", ")
    let stored = try postgres.connection.execute(
      "SELECT \(columns) FROM \(R.tableName) WHERE id = $1", [.int(record.id!)])[0].valueRow()
    #expect(stored.values == encoded, "\(R.self) as PostgreSQL stores it")
    let plain = try sqlite.prepare("SELECT \(columns) FROM \(R.tableName) WHERE id = ?1")
    try plain.bind(record.id!, at: 1)
    #expect(try plain.step())
    #expect(
      (0..<plain.columnCount).map { plain.value(at: $0) } == (try record.storedValues()),
      "\(R.self) in SQLite")
    plain.reset()
    #expect(try postgres.fetch(R.self, id: record.id!) == record, "\(R.self) from PostgreSQL")
    #expect(try sqlite.fetch(R.self, id: record.id!) == record, "\(R.self) from SQLite")
  }

  /// `check` of a record of any table.
  private static func checkAny(_ record: any StoredRecord, _ postgres: PostgresSession, _ sqlite: Connection)
    throws
  {
    switch record {
    case let record as Session: try check(record, postgres, sqlite)
    case let record as Message: try check(record, postgres, sqlite)
    case let record as Memory: try check(record, postgres, sqlite)
    case let record as Summary: try check(record, postgres, sqlite)
    case let record as EmbeddingRow: try check(record, postgres, sqlite)
    case let record as Trace: try check(record, postgres, sqlite)
    case let record as PendingCall: try check(record, postgres, sqlite)
    case let record as AgentItem: try check(record, postgres, sqlite)
    default: Issue.record("no check for \(type(of: record))")
    }
  }

  /// Rows a record's type refuses (`id` first), as both dialects spell them, with the error.
  static var malformed: [(sql: String, type: any StoredRecord.Type, error: StoreError)] {
    [
      (
        "SELECT 1, 'bogus', 'text', 0.5, 0, 0, NULL, 0, NULL, NULL, NULL, '[]', NULL, NULL, NULL, '[]', '{}'",
        Memory.self, .invalidColumnValue(table: "memories", column: "kind", value: "bogus")
      ),
      (
        "SELECT 1, 'fact', 'text', 0.5, 0, 0, NULL, 0, NULL, NULL, NULL, '[]', NULL, NULL, NULL, '[1,2]', '{}'",
        Memory.self, .invalidColumnValue(table: "memories", column: "tags", value: "[1,2]")
      ),
      (
        "SELECT 1, NULL, 'robot', NULL, 'hi', 0, 0, '{}', NULL, NULL",
        Message.self, .invalidColumnValue(table: "messages", column: "role", value: "robot")
      ),
      (
        "SELECT 1, 'reminder', 't', NULL, NULL, 0, true, NULL, NULL, NULL, NULL, 'utc', NULL, NULL, 'not json'",
        AgentItem.self,
        .invalidColumnValue(table: "agent_items", column: "condition_outcome", value: "not json")
      ),
      (
        "SELECT 1, 'e', 1, 's', '{}', 'later', 'maybe', 0, 0, NULL",
        PendingCall.self, .invalidColumnValue(table: "pending_calls", column: "status", value: "maybe")
      ),
      (
        "SELECT 1, 'row', 1, 'm', 3, NULL, 0",
        EmbeddingRow.self, .invalidColumnValue(table: "embeddings", column: "owner_kind", value: "row")
      ),
    ]
  }

  /// Reads `row` as a `type`.
  static func read<R: StoredRecord>(_ type: R.Type, _ row: some Row) throws { _ = try R(row: row) }

  @Test func aMalformedRowFailsAsInTheSQLiteStore() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      let sqlite = try Connection(path: ":memory:")
      for (sql, type, expected) in Self.malformed {
        let statement = try sqlite.prepare(sql)
        #expect(try statement.step())
        #expect(throws: expected, "SQLite: \(sql)") { try Self.read(type, statement) }
        // PostgreSQL's path: its result rows, read by the record itself.
        #expect(throws: expected, "PostgreSQL: \(sql)") {
          _ = try PostgresSession.rows(of: try connection.execute(sql)) { try Self.read(type, $0) }
        }
      }
    }
  }

  @Test func aStoredRowOfMalformedJSONFailsAsInTheSQLiteStore() throws {
    try PostgresTestServer.withDatabase { _, url in
      let store = try PostgresStore(uri: url, user: "alice")
      defer { store.close() }
      let sqlite = try sqlite()
      let memory = Memory(id: 3, kind: .fact, content: "f", createdAt: t0)
      let item = AgentItem(id: 4, kind: .note, title: "n", createdAt: t0)
      try store.writeTransaction { session throws in
        _ = try session.insert(memory)
        _ = try session.insert(item)
        let postgres = session as! PostgresSession
        try postgres.connection.execute("UPDATE memories SET tags = '[1,2]'")
        try postgres.connection.execute("UPDATE agent_items SET condition_outcome = '{\"state\":\"odd\"}'")
      }
      try sqlite.insert(memory)
      try sqlite.insert(item)
      try sqlite.execute("UPDATE memories SET tags = '[1,2]'")
      try sqlite.execute("UPDATE agent_items SET condition_outcome = '{\"state\":\"odd\"}'")
      let tags = StoreError.invalidColumnValue(table: "memories", column: "tags", value: "[1,2]")
      let outcome = StoreError.invalidColumnValue(
        table: "agent_items", column: "condition_outcome", value: #"{"state":"odd"}"#)
      #expect(throws: tags) { try sqlite.fetch(Memory.self, id: 3) }
      #expect(throws: outcome) { try sqlite.fetch(AgentItem.self, id: 4) }
      try store.readTransaction { session throws in
        #expect(throws: tags) { try session.fetch(Memory.self, id: 3) }
        #expect(throws: outcome) { try session.fetch(AgentItem.self, id: 4) }
      }
    }
  }
}
