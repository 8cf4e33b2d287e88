/// Reading a store's meta before an engine opens it (which embedder made its vectors).
extension StoreFactory {
  /// Runs `body` in a read of the store at `location` without migrating or writing anything
  /// (SQLite: a read-only connection that leaves the file and its folder as they were), or
  /// returns nil when the store has no schema yet.
  /// - Throws: `StoreError.schemaTooNew`; `SQLiteError` (`.cannotOpen`, `.notADatabase`) for
  ///   a missing or foreign file; `StoreError.storeUnavailable` for PostgreSQL in this build.
  public static func inspect<T>(
    _ location: StoreLocation, user: String = StoreUser.defaultID, _ body: (any StoreSession) throws -> T
  ) throws -> T? {
    switch location {
    case .sqlite(let path):
      let connection = try Connection(path: path, mode: .readOnlyNoTrace)
      guard try Migrator.checkVersion(connection) > 0 else { return nil }
      return try connection.transaction(.deferred) { try body(connection) }
    case .postgres(let uri):
      let connection = try PostgresConnection(url: uri)
      guard try PostgresMigrator.checkVersion(connection, database: location.description) > 0 else {
        return nil
      }
      let session = try PostgresSession(connection: connection, userScope: try StoreUser.validated(user))
      return try connection.transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
        try body(session)
      }
    }
  }

  /// Runs `body` in a read of `user`'s rows on a connection of `pool` (whose database the
  /// pool migrated, or checked, when it opened): how a server of many users reads a user's
  /// meta (which embedder made their vectors) before it opens their engine, without a
  /// connection of its own.
  /// - Throws: `StoreError.invalidUser`; `PostgresStoreError.poolExhausted(size:)`;
  ///   `PostgresError`.
  public static func inspect<T>(
    _ pool: PostgresConnectionPool, user: String, _ body: (any StoreSession) throws -> T
  ) throws -> T {
    let user = try StoreUser.validated(user)
    return try pool.use { pooled in
      let session = try PostgresSession(pooled: pooled, userScope: user)
      return try pooled.connection.transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
        try body(session)
      }
    }
  }
}
