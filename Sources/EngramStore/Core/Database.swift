import Synchronization

/// The store's database: one serialized writer connection and a small pool of reader
/// connections over one SQLite file in WAL mode, so readers never wait for a write batch.
///
/// `Sendable`: share one instance across tasks. Every call is synchronous and blocking
/// (SQLite is); run long batches off latency-sensitive executors.
public final class Database: Sendable {
  /// Settings, validated when the database opens.
  public struct Configuration: Sendable, Hashable {
    /// Open without the writer: `write` throws `StoreError.databaseReadOnly`, and the file
    /// and its folder are left exactly as they were (see `Connection.OpenMode.readOnlyNoTrace`),
    /// so it works on a file or folder the user cannot write. Default false.
    public var readOnly = false
    /// How long a statement waits for another process's lock. Default 5 s.
    public var busyTimeout: Duration = .seconds(5)
    /// Reader connections (at least 1). Default 2.
    public var readerCount = 2
    /// Page cache per connection in KiB. Default 16 MiB.
    public var cacheSizeKiB = 16 * 1024
    /// The user whose rows the connections see and write (`StoreUser.defaultID` when not
    /// set; validate with `StoreUser.validated`).
    public var user = StoreUser.defaultID

    /// The default configuration.
    public init() {}
  }

  /// The database file.
  public let path: String
  /// The configuration it was opened with.
  public let configuration: Configuration
  private let writer: Mutex<ConnectionBox?>
  let readers: [ConnectionSlot]
  private let nextReader = Atomic<Int>(0)

  /// Opens (creating if needed, mode 0600) and migrates the database at `path`.
  ///
  /// A database whose `user_version` is ahead of this binary is refused before anything is
  /// written to it (WAL mode is switched on only after the check).
  /// - Throws: `StoreError.schemaTooNew`, `.readOnlyFile`, `.readOnlyDirectory`,
  ///   `.migrationRequired` (read-only open of an old database); `SQLiteError` with
  ///   `.notADatabase`, `.corrupt`, `.busy`, `.cannotOpen`.
  public init(path: String, configuration: Configuration = Configuration()) throws {
    self.path = path
    self.configuration = configuration
    let readerCount = max(1, configuration.readerCount)
    if configuration.readOnly {
      readers = try SharedReaders.openReadOnly(path, configuration) {
        let first = try Self.openReadOnlyReader(path, configuration)
        try Migration.requireAll(Migration.all, found: try Migrator.checkVersion(first), in: path)
        var connections = [first]
        for _ in 1..<readerCount { connections.append(try Self.openReadOnlyReader(path, configuration)) }
        return connections
      }
      writer = Mutex(nil)
      return
    }
    let opened = try SharedReaders.openReadWrite(path) {
      let connection = try Connection(
        path: path, mode: .readWriteCreate, busyTimeout: configuration.busyTimeout)
      _ = try Migrator.checkVersion(connection)
      try connection.enableWriteAheadLog()
      try Self.tune(connection, configuration)
      try Migrator.migrate(connection)
      try connection.installEmbeddingEpochTrigger()
      var connections: [Connection] = []
      for _ in 0..<readerCount {
        connections.append(try Self.openReader(path, configuration))
      }
      return (connection, connections)
    }
    for connection in opened.readers + [opened.writer] { connection.user = configuration.user }
    writer = Mutex(ConnectionBox(opened.writer))
    readers = opened.readers.map { ConnectionSlot($0) }
  }

  /// A reader connection of a read-only database (see `Connection.OpenMode.readOnlyNoTrace`).
  static func openReadOnlyReader(_ path: String, _ configuration: Configuration) throws -> Connection {
    let reader = try Connection(path: path, mode: .readOnlyNoTrace, busyTimeout: configuration.busyTimeout)
    try tune(reader, configuration)
    reader.user = configuration.user
    return reader
  }

  private static func openReader(_ path: String, _ configuration: Configuration) throws -> Connection {
    let reader = try Connection(path: path, mode: .readOnly, busyTimeout: configuration.busyTimeout)
    try tune(reader, configuration)
    return reader
  }

  private static func tune(_ connection: Connection, _ configuration: Configuration) throws {
    try connection.execute("PRAGMA cache_size = -\(max(256, configuration.cacheSizeKiB))")
    // Staging tables of batch inserts (`insert(contentsOf:)`) stay in memory.
    try connection.execute("PRAGMA temp_store = MEMORY")
  }

  /// Runs `body` with the writer inside one `BEGIN IMMEDIATE` transaction: committed when
  /// it returns, rolled back when it throws. Writers are serialized.
  /// - Throws: `StoreError.databaseReadOnly`, `StoreError.closed`, `SQLiteError` (`.busy`
  ///   when another process holds the lock past the busy timeout; nothing is written then),
  ///   or what `body` throws.
  public func write<T: Sendable>(_ body: (Connection) throws -> T) throws -> T {
    guard !configuration.readOnly else { throw StoreError.databaseReadOnly(path: path) }
    return try writer.withLock { box throws -> T in
      guard let connection = box?.connection else { throw StoreError.closed(path: path) }
      return try connection.transaction(.immediate) { try body(connection) }
    }
  }

  /// `write`, without waiting for another process's lock: when one holds it, fails at once
  /// with `SQLiteError.Code.busy` and writes nothing. For bookkeeping that can be skipped or
  /// left to the next writer (access statistics, a snapshot's stamp), so that a process
  /// leaving never waits a busy timeout for it.
  /// - Throws: as `write`.
  public func writeWithoutWaiting<T: Sendable>(_ body: (Connection) throws -> T) throws -> T {
    guard !configuration.readOnly else { throw StoreError.databaseReadOnly(path: path) }
    return try writer.withLock { box throws -> T in
      guard let connection = box?.connection else { throw StoreError.closed(path: path) }
      connection.setBusyTimeout(.zero)
      defer { connection.setBusyTimeout(configuration.busyTimeout) }
      return try connection.transaction(.immediate) { try body(connection) }
    }
  }

  /// Runs `body` with the writer outside any transaction (for statements that cannot run
  /// in one, such as `VACUUM`, or for batches that manage their own transactions).
  public func writeWithoutTransaction<T: Sendable>(_ body: (Connection) throws -> T) throws -> T {
    guard !configuration.readOnly else { throw StoreError.databaseReadOnly(path: path) }
    return try writer.withLock { box throws -> T in
      guard let connection = box?.connection else { throw StoreError.closed(path: path) }
      return try body(connection)
    }
  }

  /// Runs `body` with a reader connection inside a read transaction, so it sees one
  /// consistent snapshot. Readers see committed writes only.
  /// - Throws: `StoreError.closed`, `SQLiteError`, or what `body` throws.
  public func read<T: Sendable>(_ body: (Connection) throws -> T) throws -> T {
    let start = nextReader.wrappingAdd(1, ordering: .relaxed).oldValue
    // Take the first idle reader; when all are busy, wait for one in round-robin order.
    for offset in 0..<readers.count {
      let index = (start &+ offset) % readers.count
      let outcome: Result<T, any Error>? = readers[index].mutex.withLockIfAvailable { box in
        Result { try self.runRead(box?.connection, body) }
      }
      if let outcome { return try outcome.get() }
    }
    let index = (start % readers.count + readers.count) % readers.count
    return try readers[index].mutex.withLock { box throws -> T in try runRead(box?.connection, body) }
  }

  private func runRead<T>(_ connection: Connection?, _ body: (Connection) throws -> T) throws -> T {
    guard let connection else { throw StoreError.closed(path: path) }
    return try connection.transaction(.deferred) { try body(connection) }
  }

  /// Bytes of heap the connections hold now (page caches, schemas, prepared statements):
  /// waits for each connection in turn, so call it off the cooperative pool.
  public func connectionMemoryBytes() -> Int {
    let readersBytes = readers.map { $0.mutex.withLock { $0?.connection.memoryUsed ?? 0 } }.reduce(0, +)
    return readersBytes + writer.withLock { $0?.connection.memoryUsed ?? 0 }
  }

  /// Closes every connection (waiting for the running calls); later calls throw
  /// `StoreError.closed`. Closing twice is harmless.
  public func close() {
    // Readers first: the writer, closing last, checkpoints the WAL into the file and
    // removes it (a read-only connection cannot).
    for reader in readers { reader.mutex.withLock { $0 = nil } }
    writer.withLock { $0 = nil }
  }
}

/// A reader connection behind its own lock (a `Mutex` cannot live in an array directly).
final class ConnectionSlot: Sendable {
  let mutex: Mutex<ConnectionBox?>
  init(_ connection: Connection) { mutex = Mutex(ConnectionBox(connection)) }
}

/// Carries a connection into a `Mutex`. The connection is only ever touched inside
/// `withLock`, which is what makes the unchecked conformance sound.
struct ConnectionBox: @unchecked Sendable {
  let connection: Connection
  init(_ connection: Connection) { self.connection = connection }
}
