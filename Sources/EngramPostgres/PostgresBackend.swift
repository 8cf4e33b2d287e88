import EngramStore

/// The PostgreSQL store as a `StoreBackend`: after ``register()``, `StoreFactory` (and so
/// `MemoryEngine(location:)`, `engram --db postgresql://...`) opens `postgresql://` and
/// `postgres://` locations with ``PostgresStore``. An application that opens PostgreSQL
/// stores calls it once at start-up (the `engram` tool and `engram-bench` do); one that does
/// not link this module gets `StoreError.storeUnavailable` for such a location.
public struct PostgresBackend: StoreBackend {
  /// Registers the PostgreSQL store for `StoreLocation.postgresSchemes` (again: no change).
  public static func register() {
    StoreBackends.register(PostgresBackend(), schemes: StoreLocation.postgresSchemes)
  }

  /// Creates the backend (``register()`` is what an application calls).
  public init() {}

  /// Opens ``PostgresStore`` at `uri`, or on `options.connectionPool`.
  public func open(uri: String, options: StoreFactory.Options) throws -> any MemoryStore {
    if let pool = options.connectionPool { return try pool.openStore(user: options.user) }
    return try PostgresStore(
      uri: uri, user: options.user, readOnly: options.readOnly, readerCount: options.readerCount)
  }

  /// Reads `user`'s rows at `uri` in a `REPEATABLE READ READ ONLY` transaction on a
  /// connection of its own, or returns nil when the database has no schema.
  public func inspect<T>(uri: String, user: String, _ body: (any StoreSession) throws -> T) throws -> T? {
    let connection = try PostgresConnection(url: uri)
    guard try PostgresMigrator.checkVersion(connection, database: StoreLocation.redacted(uri)) > 0 else {
      return nil
    }
    let session = try PostgresSession(connection: connection, userScope: try StoreUser.validated(user))
    return try connection.transaction(begin: PostgresSession.readOnlyBegin) { try body(session) }
  }
}

extension PostgresConnectionPool: StoreConnectionPool {
  /// A ``PostgresStore`` of `user` on this pool.
  public func openStore(user: String) throws -> any MemoryStore {
    try PostgresStore(pool: self, user: user)
  }

  /// Runs `body` in a `REPEATABLE READ READ ONLY` transaction of `user`'s rows on a
  /// connection of this pool: how a server of many users reads a user's meta (which
  /// embedder made their vectors) before it opens their engine.
  /// - Throws: `StoreError.invalidUser`; `PostgresStoreError.poolExhausted(size:)`;
  ///   `PostgresError`.
  public func inspect<T>(user: String, _ body: (any StoreSession) throws -> T) throws -> T {
    let user = try StoreUser.validated(user)
    return try use { pooled in
      let session = try PostgresSession(connection: pooled, userScope: user)
      return try pooled.transaction(begin: PostgresSession.readOnlyBegin) { try body(session) }
    }
  }
}

extension PostgresSession {
  /// How a read-only transaction begins: one consistent snapshot.
  static let readOnlyBegin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
}
