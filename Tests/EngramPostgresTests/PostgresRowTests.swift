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
@Suite("PostgreSQL rows", .timeLimit(.minutes(5)), .watchdog, .offPool)
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
        for record in RecordSamples.records(sessionID: 5, messageID: 6, memoryID: 7, at: t0) {
          try Self.check(record, postgres, sqlite)
        }
      }
    }
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

  @Test func aMalformedRowFailsAsInTheSQLiteStore() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      let sqlite = try Connection(path: ":memory:")
      for malformed in RecordSamples.malformedRows {
        let (sql, type, expected) = (malformed.sql, malformed.type, malformed.error)
        let statement = try sqlite.prepare(sql)
        #expect(try statement.step())
        #expect(throws: expected, "SQLite: \(sql)") { try RecordSamples.read(type, statement) }
        // PostgreSQL's path: its result rows, read by the record itself.
        #expect(throws: expected, "PostgreSQL: \(sql)") {
          _ = try PostgresSession.rows(of: try connection.execute(sql)) { try RecordSamples.read(type, $0) }
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
