import EngramCore
import EngramStore
import Foundation
import Synchronization

/// The PostgreSQL store: many users in one database, each store opened for one of them
/// (`user`), every statement scoped to that user.
///
/// One writer connection (writes of this process are serialized; other processes write
/// concurrently, ordered by PostgreSQL's row locks) and a pool of readers. Reads run in a
/// `REPEATABLE READ READ ONLY` transaction (one consistent snapshot); writes in a
/// `READ COMMITTED` transaction, all or nothing. A connection that broke (a server restart)
/// is replaced on its next use; the transaction it was running failed and wrote nothing.
public final class PostgresStore: MemoryStore {
  /// The URI with any password hidden.
  public let locationDescription: String
  /// The user whose rows this store's sessions see.
  public let user: String
  /// Whether the store was opened read-only.
  public let isReadOnly: Bool
  private let uri: String
  private let writer: SessionSlot?
  private let readers: [SessionSlot]
  /// The shared pool this store takes its connections from (nil: its own connections).
  public let pool: PostgresConnectionPool?
  /// Serializes this store's writes on a pool (its own writer connection does otherwise).
  private let poolWriteLock = NSLock()
  private let nextReader = Atomic<Int>(0)
  private let closed = Atomic<Bool>(false)
  /// The feed of this user's embedding generation: nil until asked for twice (a process
  /// that searches once does not pay for the connection it holds).
  private let feed = Mutex<FeedState>(FeedState())

  struct FeedState {
    var requests = 0
    var feed: PostgresGenerationFeed?
  }

  /// Opens the database at `uri` for `user`, applying the migrations it lacks (unless
  /// `readOnly`).
  /// - Throws: `StoreError.invalidUser`, `StoreError.schemaTooNew`,
  ///   `StoreError.migrationRequired` (read-only and not migrated), `PostgresError`.
  public init(uri: String, user: String = StoreUser.defaultID, readOnly: Bool = false, readerCount: Int = 2)
    throws
  {
    self.uri = uri
    self.user = try StoreUser.validated(user)
    isReadOnly = readOnly
    let description = StoreLocation.redacted(uri)
    locationDescription = description
    let first = try PostgresConnection(url: uri)
    try PostgresMigrator.prepare(first, database: description, readOnly: readOnly)
    writer = SessionSlot(try PostgresSession(connection: first, userScope: user), uri: uri)
    readers = try (0..<max(1, readerCount)).map { _ in
      SessionSlot(
        try PostgresSession(connection: try SessionSlot.readerConnection(uri), userScope: user), uri: uri,
        reader: true)
    }
    pool = nil
  }

  /// Opens a store of `user` that holds no connection: each transaction takes one from
  /// `pool` (whose database the pool migrated when it opened). Its user's embedding
  /// generation is followed by the pool's one feed (a feed per user would hold a connection
  /// per user).
  /// - Throws: `StoreError.invalidUser`.
  public init(pool: PostgresConnectionPool, user: String = StoreUser.defaultID) throws {
    uri = pool.uri
    self.user = try StoreUser.validated(user)
    isReadOnly = pool.readOnly
    locationDescription = pool.locationDescription
    writer = nil
    readers = []
    self.pool = pool
  }

  /// Runs `body` on a session of this store's user: on a pooled connection, or on the
  /// next of its own readers.
  private func useReader<T>(retryingBrokenConnection: Bool, _ body: (PostgresSession) throws -> T) throws -> T
  {
    if let pool {
      return try pool.use { pooled in try body(try PostgresSession(connection: pooled, userScope: user)) }
    }
    let slot = readers[nextReader.wrappingAdd(1, ordering: .relaxed).oldValue % readers.count]
    return try slot.use(retryingBrokenConnection: retryingBrokenConnection, body)
  }

  /// Concurrent readers and writers in other processes; nothing else.
  public var capabilities: StoreCapabilities { [.sharedWriters] }

  /// No snapshot file: each process loads a user's vectors from the database.
  public var vectorSnapshotURL: URL? { nil }

  private func checkOpen() throws {
    if closed.load(ordering: .acquiring) { throw StoreError.closed(path: locationDescription) }
  }

  /// Runs `body` in a read-only transaction on one consistent snapshot.
  public func readTransaction<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T {
    try checkOpen()
    // Not retried: a body may gather what it reads outside (run twice, it would gather twice).
    return try useReader(retryingBrokenConnection: false) { session in
      try session.connection.transaction(begin: PostgresSession.readOnlyBegin) {
        try body(session)
      }
    }
  }

  /// Runs `body` on a reader connection without a transaction of its own: each statement
  /// is its own transaction, on its own snapshot. For a caller that reads with one
  /// statement (``PostgresSession/searchCandidates(keywordQuery:kinds:limit:sessionID:timeRange:vectorIDs:)``),
  /// the same guarantees as ``readTransaction(_:)`` for one round trip instead of three.
  /// A `body` that failed because the connection broke under it (a server restart) runs once
  /// more on a new connection: it must only read, and keep nothing from a failed run.
  public func read<T>(_ body: (PostgresSession) throws -> T) throws -> T {
    try checkOpen()
    return try useReader(retryingBrokenConnection: true) { session in try body(session) }
  }

  /// The newest embedding generation of this user that the store's ``PostgresGenerationFeed``
  /// (on a pool: the pool's) knows, without asking the database: nil while no feed follows
  /// it (the caller reads the generation itself). The feed starts, in the background, on the
  /// second call (on a pool: the pool's first), and stops at ``close()``; while its
  /// connection is down it answers nil (it catches up from the generation counter when it
  /// is back).
  public func followedEmbeddingGeneration() -> Int64? {
    if let pool {
      return closed.load(ordering: .acquiring) ? nil : pool.followedGeneration(of: user)
    }
    let (current, start) = feed.withLock { state -> (PostgresGenerationFeed?, Bool) in
      state.requests += 1
      return (state.feed, state.requests == 2)
    }
    if let current { return current.isConnected ? current.generation : nil }
    if start && !closed.load(ordering: .acquiring) {
      let uri = self.uri
      let user = self.user
      let thread = Thread { [weak self] in
        guard let started = try? PostgresGenerationFeed(uri: uri, user: user) else {
          // Tried again on the next call.
          self?.feed.withLock { $0.requests = 1 }
          return
        }
        guard let self else { return started.stop() }
        let kept = self.feed.withLock { state -> Bool in
          guard !self.closed.load(ordering: .acquiring) else { return false }
          state.feed = started
          return true
        }
        if !kept { started.stop() }
      }
      thread.name = "engram-pg-feed-start"
      thread.start()
    }
    return nil
  }

  /// Keyword candidates, rows and texts in one statement (one round trip).
  public var candidateSource: any CandidateSource { PostgresCandidateSource(store: self) }

  /// Runs `body` in a write transaction: all of it or nothing.
  public func writeTransaction<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T {
    try checkOpen()
    guard !isReadOnly else { throw StoreError.databaseReadOnly(path: locationDescription) }
    guard let writer else {
      poolWriteLock.lock()
      defer { poolWriteLock.unlock() }
      return try pool!.use { pooled in
        let session = try PostgresSession(connection: pooled, userScope: user)
        return try session.transaction { try body(session) }
      }
    }
    return try writer.use { session in try session.transaction { try body(session) } }
  }

  /// None of the maintenance operations apply (PostgreSQL's autovacuum keeps the tables).
  public func maintain(_ operation: StoreMaintenance) throws {
    throw StoreError.unsupported(operation: operation.rawValue, store: "PostgreSQL (\(locationDescription))")
  }

  /// Whether each keyword index holds the terms of its rows' text (this user's rows).
  public func fullTextConsistency(deep: Bool) throws -> [FTSConsistency] {
    try readTransaction { try $0.ftsConsistency(deep: deep) }
  }

  /// An estimate of this user's bytes (the sizes of their rows).
  public func storageBytes() -> Int {
    let tables = reportedTables.map {
      "(SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM \($0) t WHERE t.user_scope = $1)"
    }
    return
      (try? readTransaction { session -> Int in
        guard let session = session as? PostgresSession else { return 0 }
        return Int(try session.scalarInt("SELECT " + tables.joined(separator: " + ")) ?? 0)
      }) ?? 0
  }

  /// Closes every connection (waiting for running calls).
  public func close() {
    guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
    feed.withLock { state in
      state.feed?.stop()
      state.feed = nil
    }
    // Followed again by the next search of another store of this user on the pool.
    pool?.unfollowGeneration(of: user)
    writer?.close()
    for reader in readers { reader.close() }
  }
}

/// One session and the lock that gives it to one caller at a time; reconnects a broken
/// connection before handing it out.
final class SessionSlot: @unchecked Sendable {
  private let lock = NSLock()
  private var session: PostgresSession?
  private let uri: String
  private let reader: Bool

  init(_ session: PostgresSession, uri: String, reader: Bool = false) {
    self.session = session
    self.uri = uri
    self.reader = reader
  }

  /// A reader's connection: its prepared statements keep one generic plan (the search
  /// statement's planning cost as much as running it; every statement is scoped by an
  /// indexed user, so the generic plan is the custom one).
  static func readerConnection(_ uri: String) throws -> PostgresConnection {
    let connection = try PostgresConnection(url: uri)
    try connection.execute("SET plan_cache_mode = force_generic_plan")
    return connection
  }

  private func connect() throws -> PostgresConnection {
    reader ? try Self.readerConnection(uri) : try PostgresConnection(url: uri)
  }

  /// Runs `body` on the session, after replacing a broken connection. With
  /// `retryingBrokenConnection` (reads only: running them twice changes nothing), a body
  /// that failed because the connection broke under it runs once more on a new one.
  func use<T>(retryingBrokenConnection: Bool = false, _ body: (PostgresSession) throws -> T) throws -> T {
    lock.lock()
    defer { lock.unlock() }
    guard var current = session else { throw StoreError.closed(path: StoreLocation.redacted(uri)) }
    if !current.connection.isHealthy {
      current = try PostgresSession(connection: try connect(), userScope: current.userScope)
      session = current
    }
    do {
      return try body(current)
    } catch  where retryingBrokenConnection && !current.connection.isHealthy {
      current = try PostgresSession(connection: try connect(), userScope: current.userScope)
      session = current
      return try body(current)
    }
  }

  func close() {
    lock.lock()
    session = nil
    lock.unlock()
  }
}
