import Synchronization

/// A kind of store opened by URI (`scheme://...`) that a module outside EngramStore provides,
/// so that only the applications that use it link its client library: the PostgreSQL store
/// of the `EngramPostgres` product (libpq), registered at start-up by
/// `PostgresBackend.register()`. `StoreFactory` opens the locations of the registered schemes.
public protocol StoreBackend: Sendable {
  /// Opens (migrating unless `options.readOnly`) the store at `uri` for `options.user`
  /// (already validated), or on `options.connectionPool` when one is given.
  func open(uri: String, options: StoreFactory.Options) throws -> any MemoryStore

  /// Runs `body` in a read-only transaction of `user`'s rows at `uri` without migrating or
  /// writing anything, or returns nil when the database has no schema yet.
  func inspect<T>(uri: String, user: String, _ body: (any StoreSession) throws -> T) throws -> T?
}

/// Connections that the engines of many users share (a server holding one engine per user on
/// one database): `PostgresConnectionPool` of `EngramPostgres`.
public protocol StoreConnectionPool: AnyObject, Sendable {
  /// Opens the store of `user` (already validated) on this pool's connections.
  func openStore(user: String) throws -> any MemoryStore

  /// Runs `body` in a read of `user`'s rows (already validated) on one of this pool's
  /// connections, writing nothing.
  func inspect<T>(user: String, _ body: (any StoreSession) throws -> T) throws -> T
}

/// The registration point of the stores opened by URI: the engine knows this table, not the
/// modules that fill it.
public enum StoreBackends {
  private static let registered = Mutex<[String: any StoreBackend]>([:])
  /// A table that replaces the registered one for the current task (tests of what an
  /// application that linked no backend sees, beside tests that register one).
  @TaskLocal static var scoped: [String: any StoreBackend]?

  /// Makes `backend` open the locations whose URI scheme is one of `schemes` (matched without
  /// regard to case). Registering again replaces the earlier backend of a scheme.
  public static func register(_ backend: any StoreBackend, schemes: [String]) {
    registered.withLock { table in
      for scheme in schemes { table[scheme.lowercased()] = backend }
    }
  }

  /// The backend registered for the scheme of `uri`, else nil.
  public static func backend(forURI uri: String) -> (any StoreBackend)? {
    guard let end = uri.range(of: "://") else { return nil }
    let scheme = uri[..<end.lowerBound].lowercased()
    if let scoped { return scoped[scheme] }
    return registered.withLock { $0[scheme] }
  }

  /// The backend of the PostgreSQL location `uri`.
  /// - Throws: `StoreError.storeUnavailable` naming the fix when no module registered one.
  static func postgres(_ uri: String) throws -> any StoreBackend {
    guard let backend = backend(forURI: uri) else {
      throw StoreError.storeUnavailable(
        location: StoreLocation.redacted(uri),
        missing:
          "the PostgreSQL store (link the EngramPostgres product and call PostgresBackend.register() at start-up)"
      )
    }
    return backend
  }
}
