import EngramStore

/// An error reported by PostgreSQL or libpq: the SQLSTATE, the message and the statement that
/// failed.
///
/// Match it by SQLSTATE in a `catch`:
/// `catch let error as PostgresError where error.sqlState == .uniqueViolation`.
/// Tests assert states, never message text.

public struct PostgresError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A five-character SQLSTATE code (see PostgreSQL's "Errcodes" appendix).
  public struct SQLState: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code, for example `23505`.
    public var rawValue: String
    /// Creates a state from its code.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The two-character class (`23` for integrity constraint violations).
    public var errorClass: String { String(rawValue.prefix(2)) }
    public var description: String { rawValue }

    /// 23505: a UNIQUE or PRIMARY KEY constraint failed.
    public static let uniqueViolation = SQLState(rawValue: "23505")
    /// 23503: a FOREIGN KEY constraint failed.
    public static let foreignKeyViolation = SQLState(rawValue: "23503")
    /// 23514: a CHECK constraint failed.
    public static let checkViolation = SQLState(rawValue: "23514")
    /// 23502: a NOT NULL constraint failed.
    public static let notNullViolation = SQLState(rawValue: "23502")
    /// 42601: the SQL has a syntax error.
    public static let syntaxError = SQLState(rawValue: "42601")
    /// 42P01: the table does not exist.
    public static let undefinedTable = SQLState(rawValue: "42P01")
    /// 22P02: a value's text is not valid for its type.
    public static let invalidTextRepresentation = SQLState(rawValue: "22P02")
    /// 40001: a serializable transaction could not be ordered; retry it.
    public static let serializationFailure = SQLState(rawValue: "40001")
    /// 40P01: a deadlock was detected; retry the transaction.
    public static let deadlockDetected = SQLState(rawValue: "40P01")
    /// 25P02: the transaction already failed; commands are ignored until its end.
    public static let inFailedTransaction = SQLState(rawValue: "25P02")
    /// P0001: `RAISE EXCEPTION` in a PL/pgSQL function or trigger.
    public static let raiseException = SQLState(rawValue: "P0001")
    /// 57P01: the server is shutting down (administrator command).
    public static let adminShutdown = SQLState(rawValue: "57P01")
  }

  /// What failed.
  public enum Kind: Sendable, Hashable {
    /// Opening the connection (bad URI, server unreachable, authentication).
    case connection
    /// A statement (the server's error, or the connection lost while it ran).
    case statement
    /// A transaction's body did not leave it committable (an error inside was caught).
    case transactionAborted
    /// A value the wrapper could not convert (column type, NUL byte in a text).
    case conversion
  }

  /// What failed.
  public var kind: Kind
  /// The SQLSTATE, when the server sent one (a lost connection has none).
  public var sqlState: SQLState?
  /// The primary message (the server's, else libpq's).
  public var message: String
  /// The server's detail line, if any.
  public var detail: String?
  /// The name of the constraint that failed, if any.
  public var constraint: String?
  /// The SQL of the failing statement, when there was one (never a connection URI, which
  /// may hold a password).
  public var sql: String?

  /// Creates an error.
  public init(
    kind: Kind, sqlState: SQLState? = nil, message: String, detail: String? = nil, constraint: String? = nil,
    sql: String? = nil
  ) {
    self.kind = kind
    self.sqlState = sqlState
    self.message = message
    self.detail = detail
    self.constraint = constraint
    self.sql = sql
  }

  /// Whether retrying the whole transaction may succeed (serialization failure, deadlock).
  public var isTransient: Bool {
    sqlState == .serializationFailure || sqlState == .deadlockDetected
  }

  public var description: String {
    var text = "PostgreSQL error"
    if let sqlState { text += " \(sqlState.rawValue)" }
    text += ": \(message)"
    if let detail { text += " (\(detail))" }
    if let sql {
      let shown = sql.count > 200 ? String(sql.prefix(200)) + "…" : sql
      text += " in «\(shown)»"
    }
    return text
  }
}
