import EngramStore
import Foundation
import Synchronization

/// Follows users' embedding generations as other processes (and machines) change them:
/// `LISTEN engram_embeddings` on a connection of its own, so a change is known within
/// milliseconds of its commit without asking the database; the generations read from the
/// table whenever the feed (re)connects, so notifications missed while it was away (a
/// restart, a network cut) are caught up from the counter itself.
///
/// While connected, the feed also reads the counters every ``catchUpInterval``: a
/// notification that never came (the connection broke unnoticed, a server that dropped it)
/// delays a change by at most that long.
///
/// A feed follows one user (``init(uri:user:catchUpInterval:)``: a store with connections of
/// its own) or any number (``init(uri:catchUpInterval:)`` and ``follow(_:)``: one feed, and
/// one connection, for every user of a ``PostgresConnectionPool``).
/// ``generation(of:)`` is the newest generation known: an index loaded at a lower one is stale.
/// The worker thread holds the feed until ``stop()`` is called.
public final class PostgresGenerationFeed: Sendable {
  /// The user followed by a one-user feed (nil: a feed of many users).
  public let user: String?
  private let uri: String
  private let state = Mutex(State())
  private let running = Atomic<Bool>(true)
  private let connected = Atomic<Bool>(false)
  private let reconnections = Atomic<Int>(0)
  private let continuation: AsyncStream<Int64>.Continuation
  /// Each generation a one-user feed learns of, in order (a slow reader skips ahead).
  public let changes: AsyncStream<Int64>
  private let finished = Mutex<Bool>(false)

  private struct State {
    /// The newest generation of each followed user whose counter was read.
    var generations: [String: Int64] = [:]
    /// Followed users whose counter is not read yet.
    var pending: Set<String> = []
  }

  /// The `application_name` of the feed's connections.
  public static let applicationName = "engram-generation-feed"

  /// How often a connected feed reads the generation counters besides listening.
  public let catchUpInterval: Duration

  /// The channel the schema's triggers notify, with payload `GENERATION:USER`.
  public static let channel = "engram_embeddings"

  /// Starts following `user`'s generation on the database at `uri`.
  /// - Throws: `PostgresError` when the first connection fails (later failures are retried).
  public init(uri: String, user: String, catchUpInterval: Duration = .seconds(1)) throws {
    self.uri = uri
    self.user = user
    self.catchUpInterval = catchUpInterval
    (changes, continuation) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
    state.withLock { $0.generations[user] = 0 }
    // The first connection proves the database reachable and reads the generation; the
    // worker opens its own (and catches up again after its LISTEN: nothing falls between).
    try catchUp(try Self.connect(uri: uri), everyone: true)
    start()
  }

  /// Starts a feed of many users on the database at `uri`, following none yet: ``follow(_:)``
  /// adds one.
  /// - Throws: `PostgresError` when the first connection fails (later failures are retried).
  public init(uri: String, catchUpInterval: Duration = .seconds(1)) throws {
    self.uri = uri
    user = nil
    self.catchUpInterval = catchUpInterval
    (changes, continuation) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
    _ = try Self.connect(uri: uri)
    start()
  }

  private func start() {
    let worker = Thread { [self] in self.follow() }
    worker.name = "engram-pg-generation-feed"
    worker.start()
  }

  deinit { stop() }

  /// The newest generation of the one user followed (0 for a feed of many users).
  public var generation: Int64 {
    guard let user else { return 0 }
    return state.withLock { $0.generations[user] } ?? 0
  }

  /// The newest generation of `user` known to the feed: nil while the feed is not
  /// connected, or `user` is not followed, or their counter is not read yet (within a
  /// quarter of a second of ``follow(_:)``).
  public func generation(of user: String) -> Int64? {
    guard isConnected else { return nil }
    return state.withLock { $0.generations[user] }
  }

  /// Follows `user` too (their counter is read on the feed's thread, within a quarter of a
  /// second).
  public func follow(_ user: String) {
    state.withLock { state in
      if state.generations[user] == nil { state.pending.insert(user) }
    }
  }

  /// Stops following `user` (a one-user feed keeps its user).
  public func unfollow(_ user: String) {
    guard user != self.user else { return }
    state.withLock { state in
      state.generations[user] = nil
      state.pending.remove(user)
    }
  }

  /// The users followed (those whose counter is read and those waiting for it).
  public var followedUsers: Set<String> {
    state.withLock { Set($0.generations.keys).union($0.pending) }
  }

  /// Whether the feed's connection is up (false while it reconnects).
  public var isConnected: Bool { connected.load(ordering: .acquiring) }

  /// How many times the feed lost its connection and came back.
  public var reconnectionCount: Int { reconnections.load(ordering: .relaxed) }

  /// Stops following (the worker ends within a quarter of a second).
  public func stop() {
    running.store(false, ordering: .releasing)
    let alreadyFinished = finished.withLock { finished in
      defer { finished = true }
      return finished
    }
    if !alreadyFinished { continuation.finish() }
  }

  private static func connect(uri: String) throws -> PostgresConnection {
    let connection = try PostgresConnection(url: uri)
    // Named, so an operator sees (and a test finds) the feed's backends.
    try connection.execute("SET application_name = '\(applicationName)'")
    try connection.listen(channel)
    return connection
  }

  /// Reads the generations from the table (after LISTEN, so no change falls between): of
  /// every followed user (`everyone`), or of those waiting for their first read.
  private func catchUp(_ connection: PostgresConnection, everyone: Bool) throws {
    let users = state.withLock { state -> [String] in
      everyone ? Array(state.generations.keys) + Array(state.pending) : Array(state.pending)
    }
    guard !users.isEmpty else { return }
    let list = "{" + users.map { "\"" + Self.arrayEscaped($0) + "\"" }.joined(separator: ",") + "}"
    let result = try connection.execute(
      "SELECT user_scope, generation FROM embedding_generation WHERE user_scope = ANY($1::text[])",
      [.text(list)])
    var found: [String: Int64] = [:]
    for row in result.rows {
      if let scope = row.string(0) { found[scope] = try row.int64(1) ?? 0 }
    }
    // A user without a row has generation 0.
    for user in users { advance(user, to: found[user] ?? 0, read: true) }
  }

  /// `text` inside a double-quoted element of a PostgreSQL array literal.
  private static func arrayEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
  }

  /// Raises `user`'s generation to `generation` when they are followed; `read` (a counter
  /// read) also ends their wait for a first read.
  private func advance(_ user: String, to generation: Int64, read: Bool) {
    let raised = state.withLock { state -> Bool in
      if read, state.pending.remove(user) != nil {
        state.generations[user] = max(state.generations[user] ?? 0, generation)
        return true
      }
      guard let current = state.generations[user], generation > current else { return false }
      state.generations[user] = generation
      return true
    }
    if raised, user == self.user { continuation.yield(generation) }
  }

  private func follow() {
    var connection: PostgresConnection?
    var delay = 0.0
    var first = true
    var lastCatchUp = ContinuousClock.now
    while running.load(ordering: .acquiring) {
      guard let current = connection else {
        // The feed's own thread (started in init), never a cooperative one: it may sleep.
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        delay = min(max(delay * 2, 0.05), 2)
        if let fresh = try? Self.connect(uri: uri), (try? catchUp(fresh, everyone: true)) != nil {
          connection = fresh
          lastCatchUp = .now
          connected.store(true, ordering: .releasing)
          if !first { reconnections.add(1, ordering: .relaxed) }
          first = false
          delay = 0
        }
        continue
      }
      do {
        for notification in try current.notifications(timeout: .milliseconds(250)) {
          let payload = notification.payload
          guard let colon = payload.firstIndex(of: ":"), let generation = Int64(payload[..<colon]) else {
            continue
          }
          advance(String(payload[payload.index(after: colon)...]), to: generation, read: false)
        }
        if !current.isHealthy { throw PostgresError(kind: .connection, message: "the connection closed") }
        if ContinuousClock.now - lastCatchUp >= catchUpInterval {
          try catchUp(current, everyone: true)
          lastCatchUp = .now
        } else {
          try catchUp(current, everyone: false)
        }
      } catch {
        connected.store(false, ordering: .releasing)
        connection = nil
      }
    }
  }
}
