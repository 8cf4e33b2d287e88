import EngramCore
import EngramStore
import Foundation

/// Records and malformed rows the suites of both stores read and write alike (the store's
/// and PostgreSQL's row tests).
public enum RecordSamples {
  /// One record of each table the engine writes, every column set, with references to a
  /// session, a message and a memory stored before, written at `time`.
  public static func records(sessionID: Int64, messageID: Int64, memoryID: Int64, at time: Date)
    -> [any StoredRecord & Equatable]
  {
    [
      Session(externalID: "s2", title: "Home", startedAt: time, endedAt: time.addingTimeInterval(3)),
      Message(
        sessionID: sessionID, role: .tool, speaker: "Ann", content: "Booked ✓ 東京", createdAt: time,
        tokenCount: 7, metadata: #"{"k":"v"}"#, sourceKey: 99),
      Memory(
        kind: .preference, content: "window seats", importance: 0.75, createdAt: time,
        lastAccessedAt: time.addingTimeInterval(5), accessCount: 2, validFrom: time,
        sourceMessageIDs: [messageID], scopeUser: "ann", scopeAgent: "planner", sessionID: sessionID,
        tags: ["travel", "seat"], metadata: #"{"source":"chat"}"#),
      Summary(
        sessionID: sessionID, firstMessageID: messageID, lastMessageID: messageID, startAt: time,
        endAt: time.addingTimeInterval(9), content: "Ann booked", structured: #"{"quoted_message_ids":[1]}"#,
        createdAt: time),
      EmbeddingRow(
        ownerKind: .memory, ownerID: memoryID, model: "hashing", vector: [0.5, -1, 2], createdAt: time),
      Trace(
        executionID: "e1", step: 2, skillID: "calendar", arguments: #"{"x":2}"#, result: "ok",
        status: .timeout,
        startedAt: time, durationMs: 1.5, error: "slow"),
      PendingCall(executionID: "e1", skillID: "email", summary: "send", status: .confirmed, createdAt: time),
      AgentItem(
        kind: .reminder, title: "Call", dueAt: time, createdAt: time, done: true, timeForm: .zoned,
        timeZone: "Europe/Paris", condition: "if it rains", conditionOutcome: .init(.held, reason: "rain")),
    ]
  }

  /// A row (`id` first) a record's type refuses, as SQL both dialects read alike.
  public struct MalformedRow: Sendable {
    /// A `SELECT` of literal values.
    public var sql: String
    /// The record type that reads it.
    public var type: any StoredRecord.Type
    /// What reading it throws.
    public var error: StoreError
  }

  /// Rows with an unknown enum value or malformed JSON, one per check a record makes.
  public static let malformedRows: [MalformedRow] = [
    MalformedRow(
      sql:
        "SELECT 1, 'bogus', 'text', 0.5, 0, 0, NULL, 0, NULL, NULL, NULL, '[]', NULL, NULL, NULL, '[]', '{}'",
      type: Memory.self, error: .invalidColumnValue(table: "memories", column: "kind", value: "bogus")),
    MalformedRow(
      sql:
        "SELECT 1, 'fact', 'text', 0.5, 0, 0, NULL, 0, NULL, NULL, NULL, '[]', NULL, NULL, NULL, '[1,2]', '{}'",
      type: Memory.self, error: .invalidColumnValue(table: "memories", column: "tags", value: "[1,2]")),
    MalformedRow(
      sql:
        #"SELECT 1, 'fact', 't', 0.5, 0, 0, NULL, 0, NULL, NULL, NULL, '{"a":1}', NULL, NULL, NULL, '[]', '{}'"#,
      type: Memory.self,
      error: .invalidColumnValue(table: "memories", column: "source_message_ids", value: #"{"a":1}"#)),
    MalformedRow(
      sql: "SELECT 1, NULL, 'robot', NULL, 'hi', 0, 0, '{}', NULL, NULL",
      type: Message.self, error: .invalidColumnValue(table: "messages", column: "role", value: "robot")),
    MalformedRow(
      sql:
        "SELECT 1, 'reminder', 't', NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, 'utc', NULL, NULL, 'not json'",
      type: AgentItem.self,
      error: .invalidColumnValue(table: "agent_items", column: "condition_outcome", value: "not json")),
    MalformedRow(
      sql: "SELECT 1, 'reminder', 't', NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, 'lunar', NULL, NULL, NULL",
      type: AgentItem.self,
      error: .invalidColumnValue(table: "agent_items", column: "time_form", value: "lunar")),
    MalformedRow(
      sql: "SELECT 1, 'e', 1, 's', '{}', 'later', 'maybe', 0, 0, NULL",
      type: PendingCall.self,
      error: .invalidColumnValue(table: "pending_calls", column: "status", value: "maybe")),
    MalformedRow(
      sql: "SELECT 1, 'e', 1, NULL, '{}', NULL, 'lost', 0, 0, NULL",
      type: Trace.self, error: .invalidColumnValue(table: "traces", column: "status", value: "lost")),
    MalformedRow(
      sql: "SELECT 1, 'row', 1, 'm', 3, NULL, 0",
      type: EmbeddingRow.self,
      error: .invalidColumnValue(table: "embeddings", column: "owner_kind", value: "row")),
  ]

  /// Reads `row` as a `type` (the record's own reader, as the stores call it).
  public static func read<R: StoredRecord>(_ type: R.Type, _ row: some Row) throws { _ = try R(row: row) }
}
