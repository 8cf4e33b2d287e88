import CPostgres
import EngramStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A notification received on a channel this connection listens to (`LISTEN` / `NOTIFY`).
public struct PostgresNotification: Sendable, Hashable {
  /// The channel.
  public var channel: String
  /// The payload (empty when the sender gave none).
  public var payload: String
  /// The process id of the server backend that sent it (compare ``PostgresConnection/backendPID``
  /// to recognize one's own).
  public var senderPID: Int32
}

/// One connection to a PostgreSQL server through libpq.
///
/// Statements take typed parameters (``PostgresValue``) and are sent with the extended
/// protocol, so a parameter can never change the SQL. Owns its `PGconn`, closes it in
/// `deinit`; not `Sendable`: use it from one thread or task at a time.
public final class PostgresConnection {
  let handle: OpaquePointer
  /// The savepoints open now (`SavepointNesting`).
  package var savepointDepth = 0
  /// Statements prepared on this connection (`PQprepare`): name by SQL text and parameter
  /// types. A statement is prepared when it runs a second time (a process that runs it once
  /// pays no extra round trip); from then on it skips the server's parse and analysis (and,
  /// once PostgreSQL settles on a generic plan, its planning).
  private var prepared: [String: String] = [:]
  private var preparedNames = 0
  /// Statements run once, not yet prepared.
  private var seenOnce: Set<String> = []

  /// How many statements a connection keeps prepared; later ones run unprepared.
  public static let preparedStatementLimit = 256

  /// Connects with a libpq connection URI (`postgresql://user@host:port/dbname?...`) or a
  /// `key=value` connection string.
  /// - Throws: ``PostgresError`` of kind `.connection` with libpq's reason (the URI itself,
  ///   which may hold a password, is never part of the error).
  public init(url: String) throws(PostgresError) {
    guard !url.utf8.contains(0) else {
      throw PostgresError(kind: .connection, message: "the connection string contains a NUL character")
    }
    guard let connection = PQconnectdb(url) else {
      throw PostgresError(kind: .connection, message: "libpq could not allocate a connection")
    }
    guard PQstatus(connection) == CONNECTION_OK else {
      let message = Self.trimmed(PQerrorMessage(connection))
      PQfinish(connection)
      throw PostgresError(kind: .connection, message: message.isEmpty ? "the connection failed" : message)
    }
    handle = connection
    // From here on the object is fully initialized: a throw runs `deinit`, which finishes the
    // connection (finishing it here as well was a double free when the server dropped the
    // connection during the setup below).
    engram_pq_silence_notices(handle)
    guard PQsetClientEncoding(handle, "UTF8") == 0 else {
      let message = Self.trimmed(PQerrorMessage(handle))
      throw PostgresError(
        kind: .connection, message: "setting the client encoding to UTF8 failed: \(message)")
    }
    // Pin the one output format this wrapper decodes, whatever the server's default.
    try execute("SET bytea_output = 'hex'")
  }

  deinit { PQfinish(handle) }

  /// The server's version as an integer (`150018` for 15.18).
  public var serverVersion: Int { Int(PQserverVersion(handle)) }

  /// Whether the connection is still up (false once the server closed it or it broke).
  ///
  /// Reads what the server sent meanwhile without waiting (libpq's sockets never block), so
  /// a connection the server closed while it sat idle (a restart, a terminated backend) is
  /// seen as broken before the next statement is sent on it.
  public var isHealthy: Bool {
    guard PQstatus(handle) == CONNECTION_OK else { return false }
    // Twice: a server that shuts down sends a FATAL message, then closes; the first read
    // takes the message, the second sees the end of the stream.
    if PQtransactionStatus(handle) == PQTRANS_IDLE {
      if PQconsumeInput(handle) == 1 { _ = PQconsumeInput(handle) }
    }
    return PQstatus(handle) == CONNECTION_OK
  }

  /// The process id of this connection's server backend.
  public var backendPID: Int32 { PQbackendPID(handle) }

  /// Whether a transaction is open on this connection.
  public var isInTransaction: Bool {
    let status = PQtransactionStatus(handle)
    return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
  }

  /// Runs one statement with `parameters` bound to `$1`, `$2`, ... and returns its rows.
  /// - Throws: ``PostgresError`` with the server's SQLSTATE, message and this SQL.
  @discardableResult
  public func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError)
    -> PostgresResult
  {
    guard !sql.utf8.contains(0) else {
      throw PostgresError(kind: .conversion, message: "the SQL contains a NUL character", sql: sql)
    }
    var buffers: [UnsafeMutablePointer<CChar>?] = []
    buffers.reserveCapacity(parameters.count)
    defer { for buffer in buffers { buffer?.deallocate() } }
    var lengths: [Int32] = []
    var formats: [Int32] = []
    var types: [UInt32] = []
    for parameter in parameters {
      types.append(parameter.typeOID)
      guard let (bytes, binary) = try parameter.wireBytes(sql: sql) else {
        buffers.append(nil)
        lengths.append(0)
        formats.append(0)
        continue
      }
      // Text parameters are read up to a NUL terminator; binary ones by their length.
      let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
      bytes.withUnsafeBytes { source in
        UnsafeMutableRawPointer(buffer).copyMemory(
          from: source.baseAddress ?? UnsafeRawPointer(buffer), byteCount: source.count)
      }
      buffer[bytes.count] = 0
      buffers.append(buffer)
      lengths.append(Int32(bytes.count))
      formats.append(binary ? 1 : 0)
    }
    let values = buffers.map { UnsafePointer($0) }
    guard !parameters.isEmpty, let name = try preparedName(sql, types: types) else {
      let result = values.withUnsafeBufferPointer { values in
        PQexecParams(
          handle, sql, Int32(parameters.count), types, values.baseAddress, lengths, formats, 0)
      }
      return try check(result, sql: sql)
    }
    let result = values.withUnsafeBufferPointer { values in
      PQexecPrepared(handle, name, Int32(parameters.count), values.baseAddress, lengths, formats, 0)
    }
    do {
      return try check(result, sql: sql)
    } catch {
      // A plan whose result type changed under it (another process altered a table) cannot
      // be run again: prepare the statement anew next time.
      if error.sqlState?.rawValue == "0A000" {
        prepared.removeValue(forKey: Self.preparedKey(sql, types: types))
      }
      throw error
    }
  }

  /// Whether `sql` is kept prepared on this connection (after its second run with parameters).
  public func isPrepared(_ sql: String, types: [UInt32]) -> Bool {
    prepared[Self.preparedKey(sql, types: types)] != nil
  }

  private static func preparedKey(_ sql: String, types: [UInt32]) -> String {
    types.map(String.init).joined(separator: ",") + ";" + sql
  }

  /// The name `sql` is prepared under, preparing it on first use; nil once the connection
  /// holds ``preparedStatementLimit`` statements.
  private func preparedName(_ sql: String, types: [UInt32]) throws(PostgresError) -> String? {
    let key = Self.preparedKey(sql, types: types)
    if let name = prepared[key] { return name }
    guard prepared.count < Self.preparedStatementLimit else { return nil }
    guard seenOnce.remove(key) != nil else {
      if seenOnce.count < Self.preparedStatementLimit { seenOnce.insert(key) }
      return nil
    }
    preparedNames += 1
    let name = "engram_\(preparedNames)"
    _ = try check(PQprepare(handle, name, sql, Int32(types.count), types), sql: sql)
    prepared[key] = name
    return name
  }

  /// Runs a script of several statements separated by semicolons (a migration), with no
  /// parameters. Unless the script manages its own transaction, PostgreSQL runs it as one
  /// implicit transaction: all of it or none of it.
  public func executeScript(_ sql: String) throws(PostgresError) {
    guard !sql.utf8.contains(0) else {
      throw PostgresError(kind: .conversion, message: "the SQL contains a NUL character", sql: sql)
    }
    _ = try check(PQexec(handle, sql), sql: sql)
  }

  /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
  /// Nested calls use savepoints, so an inner failure undoes only the inner part.
  ///
  /// A body that catches a statement's error leaves the transaction failed in PostgreSQL;
  /// then nothing is committed and ``PostgresError/Kind/transactionAborted`` is thrown.
  /// - Parameter begin: the statement that opens the transaction (`BEGIN` with its isolation
  ///   level and access mode); ignored for a nested call.
  public func transaction<T>(begin: String = "BEGIN", _ body: () throws -> T) throws -> T {
    try inTransaction(begin: begin, body)
  }

  // MARK: LISTEN / NOTIFY

  /// Starts listening on `channel` (any text: it is quoted as an identifier).
  public func listen(_ channel: String) throws(PostgresError) {
    try execute("LISTEN \(try quoteIdentifier(channel))")
  }

  /// Stops listening on `channel`.
  public func unlisten(_ channel: String) throws(PostgresError) {
    try execute("UNLISTEN \(try quoteIdentifier(channel))")
  }

  /// Sends `payload` on `channel` (delivered when the current transaction commits, once per
  /// distinct payload).
  public func notify(_ channel: String, payload: String = "") throws(PostgresError) {
    try execute("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
  }

  /// The notifications received so far, waiting up to `timeout` for the first one when none
  /// is waiting. Empty when the time ran out.
  /// - Throws: ``PostgresError`` of kind `.connection` when the connection is lost.
  public func notifications(timeout: Duration) throws(PostgresError) -> [PostgresNotification] {
    var received = try drainNotifications()
    if !received.isEmpty { return received }
    let socket = PQsocket(handle)
    guard socket >= 0 else {
      throw PostgresError(kind: .connection, message: "the connection is closed")
    }
    let (seconds, attoseconds) = timeout.components
    let deadline = ContinuousClock.now.advanced(by: timeout)
    var milliseconds = max(0, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    while true {
      var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, Int32(clamping: milliseconds))
      if ready < 0 && errno != EINTR {
        throw PostgresError(kind: .connection, message: "waiting for notifications failed (errno \(errno))")
      }
      received = try drainNotifications()
      if !received.isEmpty { return received }
      let left = ContinuousClock.now.duration(to: deadline)
      if left <= .zero { return [] }
      let (s, a) = left.components
      milliseconds = max(1, Int(s) * 1000 + Int(a / 1_000_000_000_000_000))
    }
  }

  private func drainNotifications() throws(PostgresError) -> [PostgresNotification] {
    guard PQconsumeInput(handle) == 1 else {
      throw PostgresError(kind: .connection, message: Self.trimmed(PQerrorMessage(handle)))
    }
    var received: [PostgresNotification] = []
    while let notice = PQnotifies(handle) {
      received.append(
        PostgresNotification(
          channel: String(cString: notice.pointee.relname),
          payload: notice.pointee.extra.map { String(cString: $0) } ?? "",
          senderPID: notice.pointee.be_pid))
      PQfreemem(notice)
    }
    return received
  }

  // MARK: Helpers

  /// `name` quoted as an SQL identifier (`"..."`, inner quotes doubled).
  public func quoteIdentifier(_ name: String) throws(PostgresError) -> String {
    guard !name.utf8.contains(0), let quoted = PQescapeIdentifier(handle, name, name.utf8.count) else {
      throw PostgresError(kind: .conversion, message: "'\(name)' cannot be quoted as an identifier")
    }
    defer { PQfreemem(quoted) }
    return String(cString: quoted)
  }

  /// The result when its status is a success; otherwise the error it carries.
  private func check(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresResult {
    guard let result else {
      throw PostgresError(kind: .statement, message: Self.trimmed(PQerrorMessage(handle)), sql: sql)
    }
    switch PQresultStatus(result) {
    case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
      return PostgresResult(handle: result, sql: sql)
    default:
      func field(_ code: Int32) -> String? {
        PQresultErrorField(result, code).map { String(cString: $0) }
      }
      let primary = field(engram_pq_diag_message_primary()) ?? Self.trimmed(PQresultErrorMessage(result))
      let error = PostgresError(
        kind: .statement,
        sqlState: field(engram_pq_diag_sqlstate()).map(PostgresError.SQLState.init(rawValue:)),
        message: primary.isEmpty ? Self.trimmed(PQerrorMessage(handle)) : primary,
        detail: field(engram_pq_diag_message_detail()), constraint: field(engram_pq_diag_constraint_name()),
        sql: sql)
      PQclear(result)
      throw error
    }
  }

  private static func trimmed(_ text: UnsafePointer<CChar>?) -> String {
    guard let text else { return "" }
    var message = String(cString: text)
    while let last = message.last, last.isWhitespace { message.removeLast() }
    return message
  }
}

extension PostgresConnection: SavepointNesting {
  /// Runs the statement on this connection.
  package func runTransactionStatement(_ sql: String) throws { try execute(sql) }

  /// `COMMIT`, which PostgreSQL answers with `ROLLBACK` (not an error) for a failed
  /// transaction.
  package func commitTransaction() throws {
    let commit = try execute("COMMIT")
    let tag = String(cString: PQcmdStatus(commit.handle))
    guard tag == "COMMIT" else {
      throw PostgresError(kind: .transactionAborted, message: "the server rolled the transaction back")
    }
  }

  /// Refuses a transaction in which a statement failed and its error was caught.
  package func checkCommittable() throws {
    guard PQtransactionStatus(handle) != PQTRANS_INERROR else {
      throw PostgresError(
        kind: .transactionAborted,
        message: "a statement failed inside the transaction and its error was caught; nothing was committed")
    }
  }

  /// Always: a failed statement inside leaves the transaction open, to be rolled back to.
  package var canRollBackToSavepoint: Bool { true }
}
