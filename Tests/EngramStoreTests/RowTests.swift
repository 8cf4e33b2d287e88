import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// The backend-neutral row: a row of values (what PostgreSQL's rows become) reads every
/// value as SQLite's statement reads it, and a record reads itself from either the same way.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RowTests {
  /// Values of every storage class, including text SQLite reads as a number.
  static let values: [SQLValue] = [
    .integer(42), .integer(-7), .integer(.max), .real(3.75), .real(-2.5), .real(1e300), .text("12abc"),
    .text("  -4.5e2x"), .text("9223372036854775808"), .text("-99999999999999999999"), .text("1e"),
    .text(".5"),
    .text("+7."), .text("abc"), .text(""),
    .text("Ünï ✓"), .blob([0x31, 0x32]), .blob([]), .null,
  ]

  @Test func aValueRowConvertsEveryValueAsSQLitesStatementDoes() throws {
    let connection = try Connection(path: ":memory:")
    let placeholders = (1...Self.values.count).map { "?\($0)" }.joined(separator: ", ")
    let statement = try connection.prepare("SELECT \(placeholders)")
    try statement.bind(Self.values)
    #expect(try statement.step())
    let row = ValueRow(Self.values)
    #expect(row.columnCount == statement.columnCount)
    for index in Self.values.indices {
      let value = Self.values[index]
      #expect(row.value(at: index) == statement.value(at: index), "value of \(value)")
      #expect(row.columnType(at: index) == statement.columnType(at: index), "type of \(value)")
      #expect(row.isNull(at: index) == statement.isNull(at: index), "null of \(value)")
      #expect(row.int64(at: index) == statement.int64(at: index), "integer of \(value)")
      #expect(row.double(at: index) == statement.double(at: index), "double of \(value)")
      if case .real = value { continue }  // SQLite prints reals with %!.15g, Swift shortest.
      #expect(row.bytes(at: index) == statement.bytes(at: index), "bytes of \(value)")
      #expect(row.string(at: index) == statement.string(at: index), "text of \(value)")
    }
  }

  /// One record of each table, as the engine writes them.
  static func records(sessionID: Int64, messageID: Int64, memoryID: Int64) -> [any StoredRecord] {
    [
      Message(
        sessionID: sessionID, role: .tool, speaker: "Ann", content: "Booked ✓ 東京", createdAt: t0,
        tokenCount: 7, metadata: #"{"k":"v"}"#, sourceKey: 99),
      Memory(
        kind: .preference, content: "window seats", importance: 0.75, createdAt: t0, lastAccessedAt: t(5),
        accessCount: 2, validFrom: t0, sourceMessageIDs: [messageID], scopeUser: "ann", sessionID: sessionID,
        tags: ["travel", "seat"], metadata: #"{"source":"chat"}"#),
      Summary(
        sessionID: sessionID, firstMessageID: messageID, lastMessageID: messageID, startAt: t0, endAt: t(9),
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

  @Test func everyRecordReadsItsOwnEncodingBackFromAValueRowAndFromSQLite() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    try connection.configureEmbeddingModel(model: "hashing", dimension: 3)
    let sessionID = try connection.insert(Session(externalID: "s", title: "Trip", startedAt: t0))
    let messageID = try connection.insert(
      Message(sessionID: sessionID, role: .user, content: "hi", createdAt: t0))
    let memoryID = try connection.insert(Memory(kind: .fact, content: "f", createdAt: t0))
    var records = Self.records(sessionID: sessionID, messageID: messageID, memoryID: memoryID)
    records.append(Session(externalID: "s2", title: nil, startedAt: t0, endedAt: t(3), metadata: "{}"))
    for record in records {
      try Self.checkAnyRoundTrip(record, connection)
    }
  }

  private static func checkRoundTrip<R: StoredRecord & Equatable>(_ record: R, _ connection: Connection)
    throws
  {
    var record = record
    record.id = try connection.insert(record)
    let values = try record.encoded()
    #expect(values.count == R.columns.count)
    #expect(try R(row: ValueRow([.integer(record.id!)] + values)) == record, "\(R.self) from its values")
    #expect(try connection.fetch(R.self, id: record.id!) == record, "\(R.self) from SQLite")
  }

  /// `checkRoundTrip` of a record of any table.
  private static func checkAnyRoundTrip(_ record: any StoredRecord, _ connection: Connection) throws {
    switch record {
    case let record as Message: try checkRoundTrip(record, connection)
    case let record as Memory: try checkRoundTrip(record, connection)
    case let record as Summary: try checkRoundTrip(record, connection)
    case let record as EmbeddingRow: try checkRoundTrip(record, connection)
    case let record as Trace: try checkRoundTrip(record, connection)
    case let record as PendingCall: try checkRoundTrip(record, connection)
    case let record as AgentItem: try checkRoundTrip(record, connection)
    case let record as Session: try checkRoundTrip(record, connection)
    default: Issue.record("no round trip for \(type(of: record))")
    }
  }

  /// Rows a record's type refuses (`id` first), with the error each must raise.
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
        #"SELECT 1, 'fact', 'text', 0.5, 0, 0, NULL, 0, NULL, NULL, NULL, '{"a":1}', NULL, NULL, NULL, '[]', '{}'"#,
        Memory.self, .invalidColumnValue(table: "memories", column: "source_message_ids", value: #"{"a":1}"#)
      ),
      (
        "SELECT 1, NULL, 'robot', NULL, 'hi', 0, 0, '{}', NULL, NULL",
        Message.self, .invalidColumnValue(table: "messages", column: "role", value: "robot")
      ),
      (
        "SELECT 1, 'reminder', 't', NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, 'utc', NULL, NULL, 'not json'",
        AgentItem.self,
        .invalidColumnValue(table: "agent_items", column: "condition_outcome", value: "not json")
      ),
      (
        "SELECT 1, 'reminder', 't', NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, 'lunar', NULL, NULL, NULL",
        AgentItem.self, .invalidColumnValue(table: "agent_items", column: "time_form", value: "lunar")
      ),
      (
        "SELECT 1, 'e', 1, 's', '{}', 'later', 'maybe', 0, 0, NULL",
        PendingCall.self, .invalidColumnValue(table: "pending_calls", column: "status", value: "maybe")
      ),
      (
        "SELECT 1, 'e', 1, NULL, '{}', NULL, 'lost', 0, 0, NULL",
        Trace.self, .invalidColumnValue(table: "traces", column: "status", value: "lost")
      ),
      (
        "SELECT 1, 'row', 1, 'm', 3, x'00', 0",
        EmbeddingRow.self, .invalidColumnValue(table: "embeddings", column: "owner_kind", value: "row")
      ),
    ]
  }

  /// Reads `row` as a `type`.
  static func read<R: StoredRecord>(_ type: R.Type, _ row: some Row) throws { _ = try R(row: row) }

  @Test(arguments: 0..<9)
  func aMalformedRowFailsAlikeFromSQLiteAndFromItsValues(_ index: Int) throws {
    let (sql, type, expected) = Self.malformed[index]
    let connection = try Connection(path: ":memory:")
    let statement = try connection.prepare(sql)
    #expect(try statement.step())
    #expect(throws: expected) { try Self.read(type, statement) }
    let values = ValueRow((0..<statement.columnCount).map { statement.value(at: $0) })
    #expect(throws: expected) { try Self.read(type, values) }
  }
}
