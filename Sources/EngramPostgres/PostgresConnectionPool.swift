import EngramStore
import Foundation
import Synchronization

/// A bounded set of PostgreSQL connections that the stores of many users share
/// (`engram mcp --http --users FILE --connections N`): a store opened on a pool holds no
/// connection of its own, and takes one from the pool for each transaction, scoped to its
/// user for that transaction only.
///
/// Connections are opened when first needed, up to ``size``; a caller finding all of them in
/// use waits (blocking its thread: stores run on ``BlockingWork`` threads) up to
/// ``waitTimeout`` and then fails with `PostgresStoreError.poolExhausted(size:)`. A
/// connection that broke (a server restart) is replaced when next handed out.
public final class PostgresConnectionPool: @unchecked Sendable, Hashable {
  /// The most connections open at once.
  public let size: Int
  /// How long a caller waits for a free connection. Default 30 s.
  public let waitTimeout: TimeInterval
  /// The URI with any password hidden.
  public let locationDescription: String
  let uri: String
  let readOnly: Bool
  private let condition = NSCondition()
  private var idle: [PostgresConnection] = []
  private var open = 0
  private var closed = false
  /// One ``PostgresGenerationFeed`` for every user of the pool (one connection of its own,
  /// beside the pool's): started by the first search that asks, on a thread of its own.
  private let generations = Mutex<(feed: PostgresGenerationFeed?, starting: Bool, closed: Bool)>(
    (nil, false, false))

  /// Opens one connection to `uri`, applies the migrations the database lacks (unless
  /// `readOnly`: then checks that none is missing), and keeps it as the pool's first.
  /// - Throws: `StoreError.schemaTooNew`, `StoreError.migrationRequired`, `PostgresError`.
  public init(uri: String, size: Int, readOnly: Bool = false, waitTimeout: TimeInterval = 30) throws {
    self.uri = uri
    self.size = max(1, size)
    self.readOnly = readOnly
    self.waitTimeout = waitTimeout
    locationDescription = StoreLocation.redacted(uri)
    let first = try SessionSlot.readerConnection(uri)
    try PostgresMigrator.prepare(first, database: locationDescription, readOnly: readOnly)
    idle = [first]
    open = 1
  }

  /// Connections open now (idle or in use).
  public var openConnections: Int {
    condition.lock()
    defer { condition.unlock() }
    return open
  }

  /// Runs `body` with a connection of the pool, waiting for one when all are in use.
  func use<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
    let pooled = try checkOut()
    var healthy = true
    defer { checkIn(pooled, healthy: healthy) }
    do {
      return try body(pooled)
    } catch {
      healthy = pooled.isHealthy
      throw error
    }
  }

  private func checkOut() throws -> PostgresConnection {
    let deadline = Date(timeIntervalSinceNow: waitTimeout)
    condition.lock()
    while true {
      if closed {
        condition.unlock()
        throw StoreError.closed(path: locationDescription)
      }
      if let pooled = idle.popLast() {
        condition.unlock()
        if pooled.isHealthy { return pooled }
        // Replaced outside the lock; the slot stays counted as open meanwhile.
        do {
          return try SessionSlot.readerConnection(uri)
        } catch {
          release(slot: ())
          throw error
        }
      }
      if open < size {
        open += 1
        condition.unlock()
        do {
          return try SessionSlot.readerConnection(uri)
        } catch {
          release(slot: ())
          throw error
        }
      }
      guard condition.wait(until: deadline) else {
        condition.unlock()
        throw PostgresStoreError.poolExhausted(size: size)
      }
    }
  }

  /// Gives back a slot whose connection could not be (re)opened.
  private func release(slot: Void) {
    condition.lock()
    open -= 1
    condition.signal()
    condition.unlock()
  }

  private func checkIn(_ pooled: PostgresConnection, healthy: Bool) {
    condition.lock()
    if closed || !healthy {
      open -= 1
    } else {
      idle.append(pooled)
    }
    condition.signal()
    condition.unlock()
  }

  /// The newest embedding generation of `user` known to the pool's feed, without asking the
  /// database: nil until the feed follows them (the caller reads the generation itself).
  /// The first call starts the feed in the background; each call follows `user`, whose
  /// counter the feed reads within a quarter of a second.
  public func followedGeneration(of user: String) -> Int64? {
    let (feed, start) = generations.withLock { state -> (PostgresGenerationFeed?, Bool) in
      if state.closed { return (nil, false) }
      if state.feed == nil && !state.starting && !state.closed {
        state.starting = true
        return (nil, true)
      }
      return (state.feed, false)
    }
    if let feed {
      feed.follow(user)
      return feed.generation(of: user)
    }
    if start {
      let uri = self.uri
      let thread = Thread { [weak self] in
        let started = try? PostgresGenerationFeed(uri: uri)
        guard let self else { return started?.stop() ?? () }
        let kept = self.generations.withLock { state -> Bool in
          state.starting = false
          guard let started, !state.closed else { return false }
          state.feed = started
          return true
        }
        if !kept { started?.stop() }
      }
      thread.name = "engram-pg-feed-start"
      thread.start()
    }
    return nil
  }

  /// Stops following `user` (their store closed).
  public func unfollowGeneration(of user: String) {
    generations.withLock { $0.feed }?.unfollow(user)
  }

  /// The pool's generation feed, once started.
  public var generationFeed: PostgresGenerationFeed? { generations.withLock { $0.feed } }

  /// Closes the idle connections and refuses further use; connections in use close when
  /// given back.
  public func close() {
    generations.withLock { state in
      state.closed = true
      return state.feed
    }?.stop()
    condition.lock()
    closed = true
    open -= idle.count
    idle.removeAll()
    condition.broadcast()
    condition.unlock()
  }

  public static func == (lhs: PostgresConnectionPool, rhs: PostgresConnectionPool) -> Bool { lhs === rhs }
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
