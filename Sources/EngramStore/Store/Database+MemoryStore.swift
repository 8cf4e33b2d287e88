import Foundation

/// The SQLite store: one file, one writer and a pool of readers (see `Database`).
extension Database: MemoryStore {
  /// The file path.
  public var locationDescription: String { path }
  /// The user the connections were opened for.
  public var user: String { configuration.user }
  /// Whether the database was opened read-only.
  public var isReadOnly: Bool { configuration.readOnly }
  /// Everything: WAL checkpoints, `VACUUM`, FTS5 `optimize`, a snapshot file beside the file,
  /// other processes on the same file.
  public var capabilities: StoreCapabilities {
    [.checkpoint, .vacuum, .optimizeFullText, .vectorSnapshotFile, .sharedWriters]
  }

  /// `read`, with the connection as a session.
  public func readTransaction<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T {
    try read { try body($0) }
  }

  /// `write`, with the connection as a session.
  public func writeTransaction<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T {
    try write { try body($0) }
  }

  /// `writeWithoutWaiting`, with the connection as a session.
  public func writeTransactionWithoutWaiting<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T
  {
    try writeWithoutWaiting { try body($0) }
  }

  /// Runs a checkpoint, `VACUUM` or FTS5 `optimize` on the writer, outside a transaction.
  public func maintain(_ operation: StoreMaintenance) throws {
    try writeWithoutTransaction { connection in
      switch operation {
      case .checkpoint: try connection.checkpointTruncatingWAL()
      case .vacuum: try connection.vacuum()
      case .optimizeFullText: try connection.optimizeFullTextIndexes()
      }
    }
  }

  /// Shallow on a reader; deep on the writer outside a transaction (FTS5's integrity check
  /// needs it), or, when the database is read-only, on a reader (which checks a private
  /// copy of each index: `Connection.ftsConsistency(deep:)`).
  public func fullTextConsistency(deep: Bool) throws -> [FTSConsistency] {
    if deep && !configuration.readOnly {
      return try writeWithoutTransaction { try $0.ftsConsistency(deep: true) }
    }
    return try read { try $0.ftsConsistency(deep: deep) }
  }

  /// FTS5 on a reader while the vectors are scanned, then rows and texts in one transaction.
  public var candidateSource: any CandidateSource { SQLiteCandidateSource(database: self) }

  /// The file and its WAL, in bytes.
  public func storageBytes() -> Int {
    var total = 0
    for suffix in ["", "-wal"] {
      if let size = try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int {
        total += size
      }
    }
    return total
  }

  /// `<path>.vectors` for the default user, `<path>.<user>.vectors` for another; nil for an
  /// in-memory database.
  public var vectorSnapshotURL: URL? {
    if path.isEmpty || path == ":memory:" || path.hasPrefix("file:") { return nil }
    let user = configuration.user
    return URL(
      fileURLWithPath: user == StoreUser.defaultID ? path + ".vectors" : path + "." + user + ".vectors")
  }
}

/// A SQLite connection is a session: its named operations are the protocol's.
extension Connection: StoreSession {
  /// Every row of `table` (this user's where the table is per user), with its columns.
  public func forEachExportedRow(
    of table: String, orderedBy order: String, columns: ([String]) throws -> Void,
    _ body: (any ExportedRow) throws -> Void
  ) throws {
    let statement = try exportRows(of: table, orderedBy: order)
    let names = (0..<statement.columnCount).map { statement.columnName(at: $0) }
    try columns(names)
    guard table == "embeddings", let vector = names.firstIndex(of: "vector"),
      let dimension = names.firstIndex(of: "dimension")
    else { return try statement.forEachRow { try body($0) } }
    // Packed vectors (migration 8) leave as the plain float32 an export has always held.
    try statement.forEachRow { row in
      try body(PlainVectorRow(row: row, vectorColumn: vector, dimensionColumn: dimension))
    }
  }
}

/// An embedding row whose vector column reads as plain little-endian float32 when it is
/// stored packed (every other column and encoding as stored).
struct PlainVectorRow: ExportedRow {
  let row: Statement
  let vectorColumn: Int
  let dimensionColumn: Int

  var columnCount: Int { row.columnCount }
  func value(at index: Int) -> SQLValue {
    index == vectorColumn ? .blob(withBlob(at: index) { Array($0) }) : row.value(at: index)
  }
  func columnType(at index: Int) -> Statement.ColumnType { row.columnType(at: index) }
  func isNull(at index: Int) -> Bool { row.isNull(at: index) }
  func int64(at index: Int) -> Int64 { row.int64(at: index) }
  func double(at index: Int) -> Double { row.double(at: index) }
  func string(at index: Int) -> String { row.string(at: index) }
  func withUTF8Bytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
    try row.withUTF8Bytes(at: index, body)
  }
  func withBlob<T>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
    let dimension = row.int(at: dimensionColumn)
    return try row.withBlob(at: index) { blob in
      guard index == vectorColumn, PackedFloat32.isPackedLength(blob.count, dimension: dimension) else {
        return try body(blob)
      }
      // Floats are little-endian in memory on every supported platform.
      return try withUnsafeTemporaryAllocation(of: Float.self, capacity: dimension) { floats in
        guard PackedFloat32.unpack(blob, dimension: dimension, into: floats) else { return try body(blob) }
        return try body(UnsafeRawBufferPointer(floats))
      }
    }
  }
}

extension SQLiteError: StoreDatabaseError {}

extension Connection {
  /// Every user with a row (session, turn, memory, summary or embedding) in the store, in
  /// binary order.
  public func storedUsers() throws -> [String] {
    var users = Set<String>()
    for table in reportedTables {
      // A skip scan of the per-user index: one seek per distinct user.
      let statement = try cachedStatement(
        """
        WITH RECURSIVE users(name) AS (
          SELECT (SELECT min(user_id) FROM \(table))
          UNION ALL
          SELECT (SELECT min(user_id) FROM \(table) WHERE user_id > users.name) FROM users
          WHERE users.name IS NOT NULL
        )
        SELECT name FROM users WHERE name IS NOT NULL
        """)
      try statement.forEachRow { users.insert($0.string(at: 0)) }
    }
    return users.sorted()
  }
}
