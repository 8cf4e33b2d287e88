/// Reading a store's meta before an engine opens it (which embedder made its vectors).
extension StoreFactory {
  /// Runs `body` in a read of the store at `location` without migrating or writing anything
  /// (SQLite: a read-only connection that leaves the file and its folder as they were), or
  /// returns nil when the store has no schema yet.
  /// - Throws: `StoreError.schemaTooNew`; `SQLiteError` (`.cannotOpen`, `.notADatabase`) for
  ///   a missing or foreign file; `StoreError.storeUnavailable` for PostgreSQL when no
  ///   PostgreSQL store is registered (`StoreBackends`: link EngramPostgres).
  public static func inspect<T>(
    _ location: StoreLocation, user: String = StoreUser.defaultID, _ body: (any StoreSession) throws -> T
  ) throws -> T? {
    switch location {
    case .sqlite(let path):
      let connection = try Connection(path: path, mode: .readOnlyNoTrace)
      guard try Migrator.checkVersion(connection) > 0 else { return nil }
      return try connection.transaction(.deferred) { try body(connection) }
    case .postgres(let uri):
      let user = try StoreUser.validated(user)
      return try StoreBackends.postgres(uri).inspect(uri: uri, user: user, body)
    }
  }

  /// Runs `body` in a read of `user`'s rows on a connection of `pool` (whose database the
  /// pool migrated, or checked, when it opened): how a server of many users reads a user's
  /// meta (which embedder made their vectors) before it opens their engine, without a
  /// connection of its own.
  /// - Throws: `StoreError.invalidUser`; the pool's errors (PostgreSQL:
  ///   `PostgresStoreError.poolExhausted(size:)`, `PostgresError`).
  public static func inspect<T>(
    _ pool: any StoreConnectionPool, user: String, _ body: (any StoreSession) throws -> T
  ) throws -> T {
    try pool.inspect(user: try StoreUser.validated(user), body)
  }
}
