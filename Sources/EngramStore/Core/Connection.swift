import CSQLite
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One SQLite connection. It owns its `sqlite3` handle and closes it in `deinit`.
///
/// Not `Sendable`: use it from one thread at a time (`Database` serializes access). Every
/// connection has the SQL function `engram_fts_text` registered, which the FTS triggers of
/// the schema call. Opening never writes to the file; `enableWriteAheadLog()` is the
/// first write and is left to the caller (so a database from the future is never touched).
public final class Connection {
  /// How a connection opens its file.
  public enum OpenMode: Sendable, Hashable {
    /// Reads only; the file must exist.
    case readOnly
    /// Reads and writes; the file is created (mode 0600) when missing.
    case readWriteCreate
    /// Reads only and leaves the file and its folder exactly as it found them, so a read
    /// command writes nothing and works on a memory the user cannot write.
    ///
    /// Writers keep the `-wal` and `-shm` files when they close (`SQLITE_FCNTL_PERSIST_WAL`,
    /// the log truncated to 0 bytes). When both exist the file is opened read-only with
    /// `readonly_shm=1`: SQLite maps the wal-index read-only while a writer has it open,
    /// and otherwise builds it in heap memory from the log (its "unreliable shm" mode), so
    /// nothing is created or written and a reader still sees every commit. Without them (a
    /// memory from an older Engram, or copied without them): SQLite's read-only mode would
    /// create the files and, unable to take the lock that removes them, leave them behind.
    /// So when the file and its folder are writable, the file is opened read-write with
    /// `query_only` on (the last connection to close removes the files, as a writer's
    /// does, and nothing can be written through it); when they are not and a `-wal` file
    /// exists, SQLite's read-only mode shares it; when they are not and no `-wal` exists,
    /// every committed page is in the file and nobody can write it, so it is opened
    /// `immutable` (no lock files at all).
    case readOnlyNoTrace
  }

  /// How a `.readOnlyNoTrace` open of `path` was carried out.
  enum ReadOnlyStrategy: Equatable {
    case sharedReadOnly
    case queryOnly
    case sqliteReadOnly
    case immutable
  }

  static func readOnlyStrategy(_ path: String) -> ReadOnlyStrategy {
    if path == ":memory:" || path.isEmpty || path.hasPrefix("file:") { return .sqliteReadOnly }
    let log = path + "-wal"
    let shared = [log, path + "-shm"].allSatisfy { isRegularFile($0) && access($0, R_OK) == 0 }
    if shared { return .sharedReadOnly }
    let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
    if isWritableFile(path) && isWritableDirectory(directory) { return .queryOnly }
    // A log this user cannot read is of use only when it holds something; an empty one
    // (a writer closed and checkpointed it) is as good as none.
    var info = stat()
    if stat(log, &info) == 0 && (info.st_size > 0 || access(log, R_OK) == 0) { return .sqliteReadOnly }
    return .immutable
  }

  /// The raw handle, for code that needs the C API directly.
  public let handle: OpaquePointer
  /// The database file path.
  public let path: String
  /// The mode the connection was opened with.
  public let mode: OpenMode
  /// How a `.readOnlyNoTrace` connection was opened (nil for the other modes).
  let openStrategy: ReadOnlyStrategy?
  private var statementCache: [String: Statement] = [:]
  /// Statements of shared SQL (`sharedStatement(_:)`), by their shared text.
  private var sharedStatements: [String: Statement] = [:]
  /// Record statements by (record type, operation), so the generic record paths build
  /// their SQL once per connection instead of once per call.
  var recordStatements: [RecordStatementKey: Statement] = [:]
  /// Multi-row insert statements of `insert(contentsOf:)`, by (record type, row count).
  var batchStatements: [RecordStatementKey: Statement] = [:]
  /// The savepoints open now (`SavepointNesting`).
  package var savepointDepth = 0
  /// The user whose rows the per-user queries read and write (`StoreUser.defaultID` unless
  /// the `Database` that opened it was configured for another).
  public internal(set) var user = StoreUser.defaultID

  /// Opens `path` and checks that it is a readable SQLite database.
  ///
  /// - Parameters:
  ///   - path: a file path, or ":memory:" for a private in-memory database.
  ///   - mode: read-only, or read-write creating the file with mode 0600.
  ///   - busyTimeout: how long a statement waits for another connection's lock.
  /// - Throws: `StoreError.readOnlyFile` / `.readOnlyDirectory` when a read-write open finds
  ///   no write permission; `SQLiteError` with `.notADatabase`, `.corrupt` or `.cannotOpen`.
  public init(path: String, mode: OpenMode = .readWriteCreate, busyTimeout: Duration = .seconds(5)) throws {
    if mode == .readWriteCreate && path != ":memory:" && !path.isEmpty {
      try Self.prepareWritableFile(path)
    }
    _ = Self.globalConfiguration
    var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_URI
    var target = path
    var queryOnly = false
    var persistLog = path != ":memory:" && !path.isEmpty
    var strategy: ReadOnlyStrategy?
    switch mode {
    case .readOnly: flags |= SQLITE_OPEN_READONLY
    case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
    case .readOnlyNoTrace:
      persistLog = false
      strategy = Self.readOnlyStrategy(path)
      switch strategy ?? .sqliteReadOnly {
      case .sharedReadOnly:
        flags |= SQLITE_OPEN_READONLY
        target = Self.uri(path, query: "readonly_shm=1")
      case .queryOnly:
        flags |= SQLITE_OPEN_READWRITE
        queryOnly = true
      case .sqliteReadOnly: flags |= SQLITE_OPEN_READONLY
      case .immutable:
        flags |= SQLITE_OPEN_READONLY
        target = Self.uri(path, query: "immutable=1")
      }
    }
    var db: OpaquePointer?
    let code = sqlite3_open_v2(target, &db, flags, nil)
    guard code == SQLITE_OK, let db else {
      let error = SQLiteError.from(db, resultCode: code, path: path)
      sqlite3_close_v2(db)
      throw error
    }
    self.handle = db
    self.path = path
    self.mode = mode
    self.openStrategy = strategy
    sqlite3_extended_result_codes(db, 1)
    setBusyTimeout(busyTimeout)
    _ = engram_sqlite3_db_config_defensive(db, 1)
    do {
      try FTSText.register(on: db)
      try EmbeddingCodec.register(on: db)
      // SQLite opens lazily: read the header and the schema now so a file that is not a
      // database, or is corrupt, fails here with a clear code instead of at first use.
      _ = try scalarInt("PRAGMA schema_version")
      _ = try scalarInt("SELECT count(*) FROM sqlite_schema")
      try execute("PRAGMA foreign_keys = ON")
      if queryOnly { try execute("PRAGMA query_only = ON") }
      if persistLog { try keepLogFiles() }
      if mode == .readWriteCreate && sqlite3_db_readonly(db, "main") == 1 {
        throw StoreError.readOnlyFile(path: path)
      }
    } catch var error as SQLiteError {
      error.path = path
      throw error
    }
  }

  /// Process-wide SQLite settings, applied once before the first connection opens.
  ///
  /// Allocation statistics are turned off: with them on, every SQLite malloc and free takes
  /// a global mutex, which costs about a tenth of a batched message insert with its FTS
  /// maintenance. The store reads no memory statistics and sets no soft heap limit (which
  /// needs them). When the host process has already initialized SQLite, the call is
  /// refused (`SQLITE_MISUSE`) and the host's settings stay; the value says which happened.
  static let globalConfiguration: Bool = engram_sqlite3_config_memstatus(0) == SQLITE_OK

  deinit {
    statementCache.removeAll()
    sharedStatements.removeAll()
    recordStatements.removeAll()
    batchStatements.removeAll()
    sqlite3_close_v2(handle)
  }

  /// Refuses a read-write open without write permission, and creates a missing file with
  /// mode 0600 before SQLite sees it (SQLite would create it with the process umask).
  ///
  /// Permission bits are checked as well as `access(2)`, so that the refusal is the same
  /// for root (which bypasses permissions) as for everyone else.
  private static func prepareWritableFile(_ path: String) throws {
    if path.hasPrefix("file:") { return }
    let url = URL(fileURLWithPath: path)
    let directory = url.deletingLastPathComponent().path
    var info = stat()
    if stat(path, &info) == 0 {
      let writeBits = mode_t(S_IWUSR | S_IWGRP | S_IWOTH)
      if access(path, W_OK) != 0 || info.st_mode & writeBits == 0 {
        throw StoreError.readOnlyFile(path: path)
      }
      if !isWritableDirectory(directory) { throw StoreError.readOnlyDirectory(path: directory) }
      return
    }
    guard isWritableDirectory(directory) else { throw StoreError.readOnlyDirectory(path: directory) }
    let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode_t(0o600))
    if fd >= 0 {
      fchmod(fd, mode_t(0o600))
      close(fd)
    }
    // On failure (for example a race with another creator) SQLite reports the problem.
  }

  /// A `file:` URI opening `path` with `query` (such as `immutable=1`).
  static func uri(_ path: String, query: String) -> String {
    let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    var allowed = CharacterSet.urlPathAllowed
    allowed.remove(charactersIn: "?#%")
    let escaped = absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute
    return "file://" + escaped + "?" + query
  }

  /// Makes the last connection to close keep the `-wal` and `-shm` files of a WAL database
  /// (the log checkpointed and truncated to 0 bytes) instead of deleting them, so a reader
  /// that opens later finds them and can open read-only without creating or writing
  /// anything (see `OpenMode.readOnlyNoTrace`). The journal size limit also truncates a
  /// log that a checkpoint emptied back to 64 MiB while the memory is open.
  private func keepLogFiles() throws {
    var persist: Int32 = 1
    _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
    try execute("PRAGMA journal_size_limit = \(64 << 20)")
  }

  private static func isRegularFile(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
  }

  private static func isWritableFile(_ path: String) -> Bool {
    var info = stat()
    guard stat(path, &info) == 0 else { return false }
    let writeBits = mode_t(S_IWUSR | S_IWGRP | S_IWOTH)
    return access(path, W_OK) == 0 && info.st_mode & writeBits != 0
  }

  private static func isWritableDirectory(_ directory: String) -> Bool {
    var info = stat()
    guard stat(directory, &info) == 0 else { return false }
    let writeBits = mode_t(S_IWUSR | S_IWGRP | S_IWOTH)
    return access(directory, W_OK) == 0 && info.st_mode & writeBits != 0
  }

  // MARK: Settings

  /// Sets how long a statement waits for another connection's lock before failing with
  /// `SQLiteError.Code.busy`.
  public func setBusyTimeout(_ timeout: Duration) {
    let milliseconds = max(
      0,
      min(
        Int64(Int32.max),
        timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
    sqlite3_busy_timeout(handle, Int32(milliseconds))
  }

  /// Turns SQLite's defensive mode on (every connection opens with it: no writes to the
  /// shadow tables of virtual tables, no schema edits) or off.
  func setDefensive(_ on: Bool) {
    _ = engram_sqlite3_db_config_defensive(handle, on ? 1 : 0)
  }

  /// Switches the file to write-ahead logging with `synchronous = NORMAL` (durable at
  /// checkpoints, never corrupt). This is the first write an open performs.
  ///
  /// A new database gets 4 KiB pages first (an existing one keeps its own): SQLite's
  /// default, and since migration 8 stores a 384-d embedding packed (about 1,330 bytes a
  /// row) three rows fit a 4 KiB page as well as six fit 8 KiB, while every table and index
  /// costs at least one page: on LoCoMo memories 2,110 database bytes a turn against 2,363
  /// with 8 KiB pages (`engram-bench locomo`, `storage`).
  public func enableWriteAheadLog() throws {
    try execute("PRAGMA page_size = 4096")
    let journal = try prepare("PRAGMA journal_mode = WAL").first { $0.string(at: 0) }
    guard journal?.lowercased() == "wal" || path == ":memory:" else {
      throw SQLiteError(
        extendedCode: SQLITE_CANTOPEN, message: "journal_mode=WAL refused (\(journal ?? "nil"))",
        sql: "PRAGMA journal_mode = WAL", path: path)
    }
    try execute("PRAGMA synchronous = NORMAL")
  }

  /// Whether the connection cannot write (opened read-only, or the file is read-only).
  public var isReadOnly: Bool { mode == .readOnlyNoTrace || sqlite3_db_readonly(handle, "main") == 1 }

  // MARK: Executing

  /// Runs one or more SQL statements separated by semicolons, ignoring rows.
  /// - Throws: `SQLiteError`.
  public func execute(_ sql: String) throws {
    var message: UnsafeMutablePointer<CChar>?
    let code = sqlite3_exec(handle, sql, nil, nil, &message)
    if let message { sqlite3_free(message) }
    guard code == SQLITE_OK else { throw SQLiteError.from(handle, resultCode: code, sql: sql, path: nil) }
  }

  /// Bytes of heap this connection holds now: its page cache, its parsed schema and its
  /// prepared statements (`sqlite3_db_status`).
  public var memoryUsed: Int {
    var total = 0
    for status in [SQLITE_DBSTATUS_CACHE_USED, SQLITE_DBSTATUS_SCHEMA_USED, SQLITE_DBSTATUS_STMT_USED] {
      var current: Int32 = 0
      var highest: Int32 = 0
      if sqlite3_db_status(handle, status, &current, &highest, 0) == SQLITE_OK { total += Int(current) }
    }
    return total
  }

  /// Whether this connection's transaction holds deferred foreign-key violations that its
  /// commit would refuse (`SQLITE_DBSTATUS_DEFERRED_FKS`).
  public var unresolvedDeferredReferences: Bool {
    var current: Int32 = 0
    var highest: Int32 = 0
    return sqlite3_db_status(handle, SQLITE_DBSTATUS_DEFERRED_FKS, &current, &highest, 0) == SQLITE_OK
      && current > 0
  }

  /// Prepares a new statement; it is finalized when released.
  public func prepare(_ sql: String) throws -> Statement {
    try Statement(db: handle, sql: sql)
  }

  /// A statement prepared once per connection and reused, reset and with cleared bindings.
  ///
  /// Do not hold it across a call that may use the same SQL (it would be reset under you).
  public func cachedStatement(_ sql: String) throws -> Statement {
    if let statement = statementCache[sql] {
      statement.clear()
      return statement
    }
    let statement = try prepare(sql)
    statementCache[sql] = statement
    return statement
  }

  /// The statement of shared SQL (`$N` parameters, see `SQLSession`), prepared once per
  /// connection under its shared text, reset and with cleared bindings.
  func sharedStatement(_ sql: String) throws -> Statement {
    if let statement = sharedStatements[sql] {
      statement.clear()
      return statement
    }
    let statement = try prepare(SQLDialect.sqliteParameters(sql))
    sharedStatements[sql] = statement
    return statement
  }

  /// Drops every cached statement (for example before a schema change).
  public func clearStatementCache() {
    statementCache.removeAll()
    recordStatements.removeAll()
    batchStatements.removeAll()
  }

  /// The first column of the first row of `sql` as an integer (nil when there is no row).
  public func scalarInt(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
    let statement = try cachedStatement(sql)
    try statement.bind(arguments)
    return try statement.first { $0.isNull(at: 0) ? nil : $0.int64(at: 0) } ?? nil
  }

  /// The first column of the first row of `sql` as text (nil when there is no row or NULL).
  public func scalarString(_ sql: String, _ arguments: [SQLValue] = []) throws -> String? {
    let statement = try cachedStatement(sql)
    try statement.bind(arguments)
    return try statement.first { $0.optionalString(at: 0) } ?? nil
  }

  /// Runs `sql` with `arguments` through the statement cache, ignoring rows.
  public func run(_ sql: String, _ arguments: [SQLValue] = []) throws {
    let statement = try cachedStatement(sql)
    try statement.bind(arguments)
    try statement.execute()
  }

  /// The rowid of the last successful INSERT on this connection.
  public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
  /// Rows changed by the last INSERT, UPDATE or DELETE.
  public var changes: Int { Int(sqlite3_changes64(handle)) }
  /// Whether a transaction is open.
  public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

  /// `PRAGMA user_version`: the number of migrations applied.
  public func userVersion() throws -> Int { Int(try scalarInt("PRAGMA user_version") ?? 0) }

  // MARK: Transactions

  /// How a transaction takes its locks.
  public enum TransactionKind: String, Sendable {
    /// Takes the write lock at first write.
    case deferred = "DEFERRED"
    /// Takes the write lock at once (the right choice for writes: no upgrade deadlock).
    case immediate = "IMMEDIATE"
    /// Like immediate in WAL mode.
    case exclusive = "EXCLUSIVE"
  }

  /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
  /// Inside an open transaction it becomes a savepoint, so calls compose.
  /// - Throws: what `body` throws, or `SQLiteError` (`.busy` when the lock is not granted
  ///   within the busy timeout; nothing is written then).
  public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
    try inTransaction(begin: "BEGIN \(kind.rawValue)", body)
  }

  /// Runs `body` inside a savepoint: released when it returns, rolled back to when it throws.
  public func savepoint<T>(_ body: () throws -> T) throws -> T {
    try inSavepoint(body)
  }
}

/// Identifies a generic record statement: the record type and the operation.
struct RecordStatementKey: Hashable {
  var type: ObjectIdentifier
  var operation: Int
}

extension Connection: SavepointNesting {
  /// Runs the statement on this connection.
  package func runTransactionStatement(_ sql: String) throws { try execute(sql) }
  /// `COMMIT`.
  package func commitTransaction() throws { try execute("COMMIT") }
  /// Always: SQLite commits whatever the body left.
  package func checkCommittable() throws {}
  /// While the transaction is open (SQLite may already have rolled back, for example after
  /// `SQLITE_FULL`).
  package var canRollBackToSavepoint: Bool { isInTransaction }
}
