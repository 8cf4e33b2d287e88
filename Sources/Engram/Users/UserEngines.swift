import Foundation
import Synchronization

#if os(Linux)
  /// glibc's `malloc_trim` (declared in `malloc.h`, which the Glibc module does not export).
  @_silgen_name("malloc_trim") private func engramMallocTrim(_ pad: Int) -> Int32
#endif

/// Many users' memories in one process: a request's user (chosen by its bearer token
/// through a ``UsersFile``, never by what the request says) gets a lease on that user's
/// engine, opened on first use and kept in a cache bounded by bytes.
///
/// - **Cache**: the engines' ``MemoryEngine/estimatedResidentBytes`` sum to at most
///   ``Limits/cacheBytes`` whenever some engine can go: the least recently used engine with
///   no lease in flight is closed first (on a ``BlockingWork`` thread, after the request
///   that pushed it out is answered). An engine with a lease in flight is never closed.
/// - **Fairness**: each user has at most ``Limits/concurrentRequestsPerUser`` leases at
///   once and a token bucket of ``Limits/requestsPerSecondPerUser`` (bursts up to
///   ``Limits/burstPerUser``); past either, ``lease(user:)`` fails at once with
///   ``UserEnginesError/busy(user:retryAfter:)`` (HTTP: `503` with `Retry-After`), so one
///   busy user cannot take every connection and thread from the others.
///
/// The engines are opened by `open` (for example on one SQLite file, a file per user, or
/// a PostgreSQL database through a shared `PostgresConnectionPool` of EngramPostgres).
public final class UserEngines: Sendable {
  /// Bounds of the cache and of each user's share.
  public struct Limits: Sendable, Hashable {
    /// The most bytes the open engines may hold (their estimates). Default 512 MiB.
    public var cacheBytes = 512 << 20
    /// Leases one user may hold at once. Default 8.
    public var concurrentRequestsPerUser = 8
    /// Requests per second one user may make on average. Default 100.
    public var requestsPerSecondPerUser = 100.0
    /// Requests one user may make at once after a quiet spell. Default 200.
    public var burstPerUser = 200.0

    /// The defaults.
    public init() {}
  }

  /// The limits.
  public let limits: Limits
  private let users: UsersFile?
  private let opener: @Sendable (String) async throws -> MemoryEngine
  private let state = Mutex(State())
  private let closing = Mutex<(next: Int, tasks: [Int: Task<Void, Never>])>((0, [:]))
  private let lastTrim = Mutex<ContinuousClock.Instant?>(nil)

  private struct Entry {
    var engine: MemoryEngine
    var bytes: Int
    var lastUsed: UInt64
  }

  private struct Bucket {
    var tokens: Double
    var updated: ContinuousClock.Instant
  }

  private struct State {
    var engines: [String: Entry] = [:]
    var opening: [String: Opening] = [:]
    var inFlight: [String: Int] = [:]
    var buckets: [String: Bucket] = [:]
    var clock: UInt64 = 0
    var bytes = 0
    var closed = false
    var opened = 0
    var evicted = 0
  }

  /// A cache whose engines `open` opens, one per user id; `users` (when given) lets
  /// ``lease(token:)`` choose the user by token. `open` is awaited on the request's task: it
  /// runs its blocking work (the engine's open) off the cooperative pool itself.
  public init(
    users: UsersFile? = nil, limits: Limits = Limits(),
    open: @escaping @Sendable (_ user: String) async throws -> MemoryEngine
  ) {
    self.users = users
    self.limits = limits
    opener = open
  }

  /// The users the users file lists (0 without one).
  public var userCount: Int { users?.entries.count ?? 0 }

  /// The user whose token `token` is, by the users file (constant time in the token).
  public func user(forToken token: String) -> String? {
    users?.user(forToken: token)
  }

  /// A lease on the engine of the user whose token is `token`.
  /// - Throws: ``UserEnginesError/unknownToken`` when no user has it; as ``lease(user:)``.
  public func lease(token: String) async throws -> EngineLease {
    guard let user = user(forToken: token) else { throw UserEnginesError.unknownToken }
    return try await lease(user: user)
  }

  /// A lease on `user`'s engine, opening it when it is not cached; release it (or drop it)
  /// when the request is answered.
  /// - Throws: ``UserEnginesError/busy(user:retryAfter:)`` past the user's limits,
  ///   ``UserEnginesError/closed`` after ``close()``, and what opening the engine throws.
  public func lease(user: String) async throws -> EngineLease {
    let now = ContinuousClock.now
    enum Step {
      case ready(MemoryEngine)
      /// This lease opens the engine; others wait on `Opening`.
      case open(Opening)
      case wait(Opening)
    }
    let step = try state.withLock { state throws -> Step in
      guard !state.closed else { throw UserEnginesError.closed }
      var bucket = state.buckets[user] ?? Bucket(tokens: limits.burstPerUser, updated: now)
      let elapsed =
        Double((now - bucket.updated).components.seconds)
        + Double((now - bucket.updated).components.attoseconds) / 1e18
      bucket.tokens = min(limits.burstPerUser, bucket.tokens + elapsed * limits.requestsPerSecondPerUser)
      bucket.updated = now
      guard bucket.tokens >= 1 else {
        state.buckets[user] = bucket
        let wait = (1 - bucket.tokens) / max(limits.requestsPerSecondPerUser, 1e-9)
        throw UserEnginesError.busy(user: user, retryAfter: .milliseconds(Int64((wait * 1000).rounded(.up))))
      }
      let running = state.inFlight[user] ?? 0
      guard running < limits.concurrentRequestsPerUser else {
        state.buckets[user] = bucket
        throw UserEnginesError.busy(user: user, retryAfter: .seconds(1))
      }
      bucket.tokens -= 1
      state.buckets[user] = bucket
      state.inFlight[user] = running + 1
      state.clock += 1
      if var entry = state.engines[user] {
        entry.lastUsed = state.clock
        state.engines[user] = entry
        return .ready(entry.engine)
      }
      if let opening = state.opening[user] { return .wait(opening) }
      let opening = Opening()
      state.opening[user] = opening
      return .open(opening)
    }
    let opening: Opening
    switch step {
    case .ready(let engine):
      return EngineLease(user: user, engine: engine, owner: self)
    case .open(let mine):
      // Opened by this request, in its own task (no unstructured task: a server's handlers
      // keep running on their own executor even when the cooperative pool is busy).
      let opener = self.opener
      do {
        mine.finish(.success(try await opener(user)))
      } catch {
        mine.finish(.failure(error))
      }
      opening = mine
    case .wait(let other):
      opening = other
    }
    do {
      let engine = try await opening.value()
      let bytes = engine.estimatedResidentBytes
      let evicted = state.withLock { state -> [MemoryEngine] in
        state.opening[user] = nil
        state.clock += 1
        if state.engines[user] == nil {
          state.engines[user] = Entry(engine: engine, bytes: bytes, lastUsed: state.clock)
          state.bytes += bytes
          state.opened += 1
        }
        return Self.evict(&state, budget: limits.cacheBytes)
      }
      close(evicted)
      return EngineLease(user: user, engine: engine, owner: self)
    } catch {
      state.withLock { state in
        state.opening[user] = nil
        state.inFlight[user] = max(0, (state.inFlight[user] ?? 1) - 1)
      }
      throw error
    }
  }

  /// Ends one lease of `user`: re-measures their engine and closes what the budget no
  /// longer holds.
  func release(user: String, engine: MemoryEngine) {
    // Measured before the lock (it reads the index and, for SQLite, the files' sizes).
    let bytes = engine.estimatedResidentBytes
    let evicted = state.withLock { state -> [MemoryEngine] in
      let left = max(0, (state.inFlight[user] ?? 1) - 1)
      state.inFlight[user] = left == 0 ? nil : left
      if var entry = state.engines[user], entry.engine === engine {
        state.bytes += bytes - entry.bytes
        entry.bytes = bytes
        state.engines[user] = entry
      }
      return Self.evict(&state, budget: limits.cacheBytes)
    }
    close(evicted)
  }

  /// Removes least recently used engines with no lease in flight until the estimates fit
  /// `budget` (or none can go).
  private static func evict(_ state: inout State, budget: Int) -> [MemoryEngine] {
    guard state.bytes > budget else { return [] }
    var idle = state.engines.filter { (state.inFlight[$0.key] ?? 0) == 0 }
      .sorted { $0.value.lastUsed < $1.value.lastUsed }[...]
    var evicted: [MemoryEngine] = []
    while state.bytes > budget, let (user, entry) = idle.popFirst() {
      state.engines[user] = nil
      state.bytes -= entry.bytes
      state.evicted += 1
      evicted.append(entry.engine)
    }
    return evicted
  }

  private func close(_ engines: [MemoryEngine]) {
    guard !engines.isEmpty else { return }
    closing.withLock { closing in
      let id = closing.next
      closing.next += 1
      // The task removes itself once done (it waits for this lock to be let go first).
      closing.tasks[id] = Task { [self] in
        for engine in engines { await engine.close() }
        await self.returnFreedMemory()
        _ = self.closing.withLock { $0.tasks.removeValue(forKey: id) }
      }
    }
  }

  /// Gives the memory of closed engines back to the system (at most every half second):
  /// the allocator otherwise keeps freed index buffers for reuse, and a cache that keeps
  /// closing and opening engines would hold far more than its budget.
  private func returnFreedMemory() async {
    let now = ContinuousClock.now
    let due = lastTrim.withLock { last -> Bool in
      guard last.map({ now - $0 >= .milliseconds(500) }) ?? true else { return false }
      last = now
      return true
    }
    guard due else { return }
    #if os(Linux)
      await BlockingWork.run { _ = engramMallocTrim(0) }
    #endif
  }

  /// What the cache holds now.
  public struct Statistics: Sendable, Hashable {
    /// Users whose engine is open.
    public var cachedUsers: Int
    /// The sum of their estimates.
    public var cachedBytes: Int
    /// Leases in flight.
    public var leases: Int
    /// Engines opened since the cache was made.
    public var opened: Int
    /// Engines closed to stay within the budget.
    public var evicted: Int
  }

  /// What the cache holds now.
  public var statistics: Statistics {
    state.withLock { state in
      Statistics(
        cachedUsers: state.engines.count, cachedBytes: state.bytes,
        leases: state.inFlight.values.reduce(0, +),
        opened: state.opened, evicted: state.evicted)
    }
  }

  /// Whether `user`'s engine is open in the cache.
  public func isCached(_ user: String) -> Bool {
    state.withLock { $0.engines[user] != nil }
  }

  /// Refuses new leases, and closes every engine (those with leases in flight too: call it
  /// once the server stopped) and waits for the closes started by evictions.
  public func close() async {
    let engines = state.withLock { state -> [MemoryEngine] in
      state.closed = true
      let engines = state.engines.values.map(\.engine)
      state.engines.removeAll()
      state.bytes = 0
      return engines
    }
    for engine in engines { await engine.close() }
    for task in closing.withLock({ Array($0.tasks.values) }) { await task.value }
  }
}

/// One request's hold on a user's engine: the engine stays open (never evicted) until
/// ``release()`` or until the lease is dropped.
public final class EngineLease: Sendable {
  /// The user (chosen by their token).
  public let user: String
  /// Their engine.
  public let engine: MemoryEngine
  private let owner: UserEngines
  private let released = Atomic<Bool>(false)

  init(user: String, engine: MemoryEngine, owner: UserEngines) {
    self.user = user
    self.engine = engine
    self.owner = owner
  }

  /// Gives the engine back to the cache; later calls do nothing.
  public func release() {
    guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
    owner.release(user: user, engine: engine)
  }

  deinit {
    release()
  }
}

/// Why ``UserEngines`` gave no lease.
public enum UserEnginesError: Error, Sendable, Hashable, CustomStringConvertible {
  /// No user has the token.
  case unknownToken
  /// The user is at their concurrency or rate limit: try again after `retryAfter`.
  case busy(user: String, retryAfter: Duration)
  /// The cache was closed.
  case closed

  /// One line for a person.
  public var description: String {
    switch self {
    case .unknownToken: return "no user has this token"
    case .busy(let user, let retryAfter):
      let seconds = max(
        1, Int(retryAfter.components.seconds) + (retryAfter.components.attoseconds > 0 ? 1 : 0))
      return "user \(user) is at their request limit; retry in \(seconds) s"
    case .closed: return "the server is shutting down"
    }
  }
}

/// An engine being opened: the request that opens it finishes it, the others of that user
/// wait for it without a task of their own.
final class Opening: Sendable {
  private let state = Mutex<
    (result: Result<MemoryEngine, any Error>?, waiters: [CheckedContinuation<MemoryEngine, any Error>])
  >((nil, []))

  /// Hands `result` to every waiter, present and future.
  func finish(_ result: Result<MemoryEngine, any Error>) {
    let waiters = state.withLock { state in
      state.result = result
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume(with: result) }
  }

  /// The opened engine (or the error opening it threw).
  func value() async throws -> MemoryEngine {
    try await withCheckedThrowingContinuation { continuation in
      let ready = state.withLock { state -> Result<MemoryEngine, any Error>? in
        if let result = state.result { return result }
        state.waiters.append(continuation)
        return nil
      }
      if let ready { continuation.resume(with: ready) }
    }
  }
}
