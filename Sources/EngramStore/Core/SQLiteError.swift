import CSQLite

/// An error reported by SQLite: result codes, message and the statement that failed.
///
/// Match it by code in a `catch`: `catch let error as SQLiteError where error.code == .busy`.
/// Tests assert codes, never message text.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A primary SQLite result code (the low byte of an extended code).
  public struct Code: RawRepresentable, Sendable, Hashable {
    /// The numeric code, as in `sqlite3.h`.
    public var rawValue: Int32
    /// Creates a code from its numeric value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// SQLITE_ERROR: generic error (SQL error, missing table, constraint raised by a trigger).
    public static let error = Code(rawValue: SQLITE_ERROR)
    /// SQLITE_INTERNAL.
    public static let `internal` = Code(rawValue: SQLITE_INTERNAL)
    /// SQLITE_PERM: access permission denied.
    public static let permission = Code(rawValue: SQLITE_PERM)
    /// SQLITE_ABORT: an operation was aborted (also `RAISE(ABORT, ...)` in a trigger).
    public static let abort = Code(rawValue: SQLITE_ABORT)
    /// SQLITE_BUSY: the database file is locked by another connection.
    public static let busy = Code(rawValue: SQLITE_BUSY)
    /// SQLITE_LOCKED: a table is locked within the same connection.
    public static let locked = Code(rawValue: SQLITE_LOCKED)
    /// SQLITE_NOMEM.
    public static let noMemory = Code(rawValue: SQLITE_NOMEM)
    /// SQLITE_READONLY: attempt to write a read-only database.
    public static let readOnly = Code(rawValue: SQLITE_READONLY)
    /// SQLITE_INTERRUPT.
    public static let interrupt = Code(rawValue: SQLITE_INTERRUPT)
    /// SQLITE_IOERR: a disk I/O error.
    public static let ioError = Code(rawValue: SQLITE_IOERR)
    /// SQLITE_CORRUPT: the database disk image is malformed.
    public static let corrupt = Code(rawValue: SQLITE_CORRUPT)
    /// SQLITE_FULL: the disk is full.
    public static let full = Code(rawValue: SQLITE_FULL)
    /// SQLITE_CANTOPEN: unable to open the database file.
    public static let cannotOpen = Code(rawValue: SQLITE_CANTOPEN)
    /// SQLITE_CONSTRAINT: a CHECK, UNIQUE, NOT NULL or FOREIGN KEY constraint failed.
    public static let constraint = Code(rawValue: SQLITE_CONSTRAINT)
    /// SQLITE_MISMATCH: data type mismatch.
    public static let mismatch = Code(rawValue: SQLITE_MISMATCH)
    /// SQLITE_MISUSE: the library was used incorrectly.
    public static let misuse = Code(rawValue: SQLITE_MISUSE)
    /// SQLITE_RANGE: a bind index out of range.
    public static let range = Code(rawValue: SQLITE_RANGE)
    /// SQLITE_NOTADB: the file is not a database.
    public static let notADatabase = Code(rawValue: SQLITE_NOTADB)
  }

  /// The primary result code.
  public var code: Code { Code(rawValue: extendedCode & 0xFF) }
  /// The extended result code (for example SQLITE_CONSTRAINT_CHECK).
  public var extendedCode: Int32
  /// SQLite's message (`sqlite3_errmsg`) at the time of the failure.
  public var message: String
  /// The SQL of the failing statement, when there was one.
  public var sql: String?
  /// How many arguments were bound to the failing statement.
  public var argumentCount: Int
  /// The database file, when the failure concerns opening one.
  public var path: String?

  /// Creates an error from an extended result code and context.
  public init(
    extendedCode: Int32, message: String, sql: String? = nil, argumentCount: Int = 0, path: String? = nil
  ) {
    self.extendedCode = extendedCode
    self.message = message
    self.sql = sql
    self.argumentCount = argumentCount
    self.path = path
  }

  /// Reads the error state of `db` after a call returned `resultCode`.
  static func from(
    _ db: OpaquePointer?, resultCode: Int32, sql: String? = nil, argumentCount: Int = 0, path: String? = nil
  ) -> SQLiteError {
    var extended = resultCode
    var message = String(cString: sqlite3_errstr(resultCode))
    if let db {
      let fromHandle = sqlite3_extended_errcode(db)
      // The handle's code is only trustworthy when it agrees with the call's primary code.
      if fromHandle & 0xFF == resultCode & 0xFF { extended = fromHandle }
      if let text = sqlite3_errmsg(db) { message = String(cString: text) }
    }
    return SQLiteError(
      extendedCode: extended, message: message, sql: sql, argumentCount: argumentCount, path: path)
  }

  /// `SQLite error <code>/<extended>: message (in SQL)`.
  public var description: String {
    var text = "SQLite error \(code.rawValue)"
    if extendedCode != code.rawValue { text += "/\(extendedCode)" }
    text += ": \(message)"
    if let path { text += " [\(path)]" }
    if let sql { text += " in `\(sql)`" }
    return text
  }
}
