import EngramCore
import Foundation

/// Where a side effect waiting for confirmation stands.
public enum PendingCallStatus: String, Sendable, Hashable, CaseIterable, Codable {
  /// Waiting for the user.
  case pending
  /// Confirmed, not yet run.
  case confirmed
  /// Run.
  case executed
  /// Refused or abandoned.
  case cancelled
  /// Run and failed.
  case failed
}

/// A side effect waiting for the user's confirmation (`pending_calls`); survives restarts.
public struct PendingCall: StoredRecord, Hashable {
  /// The row id; nil before insertion.
  public var id: Int64?
  /// The execution it belongs to.
  public var executionID: String
  /// The step within the execution.
  public var step: Int
  /// The skill to run.
  public var skillID: String
  /// Its arguments, JSON text.
  public var arguments: String
  /// What it will do, for the confirmation prompt.
  public var summary: String
  /// Where it stands.
  public var status: PendingCallStatus
  /// Creation.
  public var createdAt: Date
  /// Last change.
  public var updatedAt: Date
  /// The error, when it failed.
  public var error: String?

  /// Creates a pending call.
  public init(
    id: Int64? = nil, executionID: String, step: Int = 1, skillID: String, arguments: String = "{}",
    summary: String, status: PendingCallStatus = .pending, createdAt: Date, updatedAt: Date? = nil,
    error: String? = nil
  ) {
    self.id = id
    self.executionID = executionID
    self.step = step
    self.skillID = skillID
    self.arguments = arguments
    self.summary = summary
    self.status = status
    self.createdAt = createdAt
    self.updatedAt = updatedAt ?? createdAt
    self.error = error
  }

  /// The table.
  public static let tableName = "pending_calls"
  /// The non-id columns, in binding order.
  public static let columns = [
    "execution_id", "step", "skill_id", "arguments", "summary", "status", "created_at", "updated_at", "error",
  ]
  /// The column time filters apply to.
  public static var timeColumn: String? { "created_at" }

  /// Appends the non-id columns.
  public func encode(to row: inout [SQLValue]) throws {
    row += [
      SQLValue(executionID), SQLValue(step), SQLValue(skillID), SQLValue(arguments), SQLValue(summary),
      SQLValue(status), SQLValue(createdAt), SQLValue(updatedAt), SQLValue(error),
    ]
  }

  /// Reads a row (id first).
  public init(row: some Row) throws {
    id = row.int64(at: 0)
    executionID = row.string(at: 1)
    step = row.int(at: 2)
    skillID = row.string(at: 3)
    arguments = row.string(at: 4)
    summary = row.string(at: 5)
    status = try row.enumValue(PendingCallStatus.self, at: 6, table: "pending_calls", column: "status")
    createdAt = row.date(at: 7)
    updatedAt = row.date(at: 8)
    error = row.optionalString(at: 9)
  }
}

extension RecordQueries {
  /// Pending calls with `status`, oldest first.
  public func pendingCalls(status: PendingCallStatus) throws -> [PendingCall] {
    try select(RecordQuery<PendingCall>([.init("status", SQLValue(status))], order: [.init("id")]))
  }
}
