import Foundation
import Synchronization

/// Follows one user's embedding generation as other processes (and machines) change it:
/// `LISTEN engram_embeddings` on a connection of its own, so a change is known within
/// milliseconds of its commit without asking the database; the generation read from the
/// table whenever the feed (re)connects, so notifications missed while it was away (a
/// restart, a network cut) are caught up from the counter itself.
///
/// While connected, the feed also reads the counter every ``catchUpInterval``: a notification
/// that never came (the connection broke unnoticed, a server that dropped it) delays a change
/// by at most that long.
///
/// ``generation`` is the newest generation known: an index loaded at a lower one is stale.
/// ``changes`` yields each new generation (newest first wins: a slow reader skips ahead).
/// The worker thread holds the feed until ``stop()`` is called.
public final class PostgresGenerationFeed: Sendable {
  /// The user followed.
  public let user: String
  private let uri: String
  private let latest = Atomic<Int64>(0)
  private let running = Atomic<Bool>(true)
  private let connected = Atomic<Bool>(false)
  private let reconnections = Atomic<Int>(0)
  private let continuation: AsyncStream<Int64>.Continuation
  /// Each generation the feed learns of, in order.
  public let changes: AsyncStream<Int64>
  private let finished = Mutex<Bool>(false)

  /// The `application_name` of the feed's connections.
  public static let applicationName = "engram-generation-feed"

  /// How often a connected feed reads the generation counter besides listening.
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
    // The first connection proves the database reachable and reads the generation; the
    // worker opens its own (and catches up again after its LISTEN: nothing falls between).
    try catchUp(try Self.connect(uri: uri))
    let worker = Thread { [self] in self.follow() }
    worker.name = "engram-pg-generation-feed"
    worker.start()
  }

  deinit { stop() }

  /// The newest generation of the user known to the feed.
  public var generation: Int64 { latest.load(ordering: .acquiring) }

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

  /// Reads the generation from the table (after LISTEN, so no change falls between).
  private func catchUp(_ connection: PostgresConnection) throws {
    let result = try connection.execute(
      "SELECT generation FROM embedding_generation WHERE user_scope = $1", [.text(user)])
    advance(to: try result.rows.first?.int64(0) ?? 0)
  }

  private func advance(to generation: Int64) {
    var current = latest.load(ordering: .acquiring)
    while generation > current {
      let (exchanged, original) = latest.compareExchange(
        expected: current, desired: generation, ordering: .acquiringAndReleasing)
      if exchanged {
        continuation.yield(generation)
        return
      }
      current = original
    }
  }

  private func follow() {
    var connection: PostgresConnection?
    var delay = 0.0
    var first = true
    var lastCatchUp = ContinuousClock.now
    let suffix = ":" + user
    while running.load(ordering: .acquiring) {
      guard let current = connection else {
        // The feed's own thread (started in init), never a cooperative one: it may sleep.
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        delay = min(max(delay * 2, 0.05), 2)
        if let fresh = try? Self.connect(uri: uri), (try? catchUp(fresh)) != nil {
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
        for notification in try current.notifications(timeout: .milliseconds(250))
        where notification.payload.hasSuffix(suffix) {
          if let generation = Int64(notification.payload.dropLast(suffix.count)) { advance(to: generation) }
        }
        if !current.isHealthy { throw PostgresError(kind: .connection, message: "the connection closed") }
        if ContinuousClock.now - lastCatchUp >= catchUpInterval {
          try catchUp(current)
          lastCatchUp = .now
        }
      } catch {
        connected.store(false, ordering: .releasing)
        connection = nil
      }
    }
  }
}
