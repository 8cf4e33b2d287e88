import Foundation

/// How an agent step ended.
public enum TraceStatus: String, Sendable, Hashable, CaseIterable, Codable {
  /// It succeeded.
  case ok
  /// It failed.
  case failed
  /// It was cancelled.
  case cancelled
  /// It ran out of time.
  case timeout
  /// It waits for confirmation.
  case pending
}

/// One step the agent ran (`traces`).
public struct Trace: StoredRecord, Hashable {
  /// The row id; nil before insertion.
  public var id: Int64?
  /// The execution (one agent turn) it belongs to.
  public var executionID: String
  /// The step number within the execution.
  public var step: Int
  /// The skill that ran.
  public var skillID: String?
  /// Its arguments, JSON text.
  public var arguments: String
  /// Its result text.
  public var result: String?
  /// How it ended.
  public var status: TraceStatus
  /// Start.
  public var startedAt: Date
  /// Duration in milliseconds.
  public var durationMs: Double
  /// The error, when it failed.
  public var error: String?

  /// Creates a trace row.
  public init(
    id: Int64? = nil, executionID: String, step: Int, skillID: String? = nil, arguments: String = "{}",
    result: String? = nil, status: TraceStatus, startedAt: Date, durationMs: Double = 0, error: String? = nil
  ) {
    self.id = id
    self.executionID = executionID
    self.step = step
    self.skillID = skillID
    self.arguments = arguments
    self.result = result
    self.status = status
    self.startedAt = startedAt
    self.durationMs = durationMs
    self.error = error
  }

  /// The table.
  public static let tableName = "traces"
  /// The non-id columns, in binding order.
  public static let columns = [
    "execution_id", "step", "skill_id", "arguments", "result", "status", "started_at", "duration_ms", "error",
  ]
  /// The column time filters apply to.
  public static var timeColumn: String? { "started_at" }

  /// Appends the non-id columns.
  public func encode(to row: inout [SQLValue]) throws {
    row += [
      SQLValue(executionID), SQLValue(step), SQLValue(skillID), SQLValue(arguments), SQLValue(result),
      SQLValue(status), SQLValue(startedAt), SQLValue(durationMs), SQLValue(error),
    ]
  }

  /// Reads a row (id first).
  public init(row: some Row) throws {
    id = row.int64(at: 0)
    executionID = row.string(at: 1)
    step = row.int(at: 2)
    skillID = row.optionalString(at: 3)
    arguments = row.string(at: 4)
    result = row.optionalString(at: 5)
    status = try row.enumValue(TraceStatus.self, at: 6, table: "traces", column: "status")
    startedAt = row.date(at: 7)
    durationMs = row.double(at: 8)
    error = row.optionalString(at: 9)
  }
}

extension RecordQueries {
  /// The steps of `executionID`, in step order.
  public func traces(executionID: String) throws -> [Trace] {
    try select(
      RecordQuery<Trace>([.init("execution_id", .text(executionID))], order: [.init("step"), .init("id")]))
  }

  /// The most recent trace rows, newest first.
  public func recentTraces(limit: Int) throws -> [Trace] {
    try select(RecordQuery<Trace>(order: [.init("id", descending: true)], limit: limit))
  }
}
