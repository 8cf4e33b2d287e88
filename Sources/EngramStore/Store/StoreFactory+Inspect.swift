/// Reading a store's meta before an engine opens it (which embedder made its vectors).
extension StoreFactory {
  /// Runs `body` in a read of the store at `location` without migrating or writing anything
  /// (SQLite: a read-only connection that leaves the file and its folder as they were), or
  /// returns nil when the store has no schema yet.
  /// - Throws: `StoreError.schemaTooNew`; `SQLiteError` (`.cannotOpen`, `.notADatabase`) for
  ///   a missing or foreign file; `StoreError.storeUnavailable` for PostgreSQL in this build.
  public static func inspect<T>(_ location: StoreLocation, _ body: (any StoreSession) throws -> T) throws
    -> T?
  {
    switch location {
    case .sqlite(let path):
      let connection = try Connection(path: path, mode: .readOnlyNoTrace)
      guard try Migrator.checkVersion(connection) > 0 else { return nil }
      return try connection.transaction(.deferred) { try body(connection) }
    case .postgres:
      throw StoreError.storeUnavailable(
        location: location.description,
        missing: "the PostgreSQL store (a MemoryStore in EngramStore/Postgres, wired in StoreFactory.inspect)"
      )
    }
  }
}
