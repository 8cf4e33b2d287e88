import Foundation

/// Runs blocking work (SQLite statements, BLAS products, libpq round trips) on threads of its
/// own, off Swift concurrency's cooperative pool, whose few threads must never wait: the layers
/// that block (the engine's database work, the embedder's forward pass) await it instead of
/// running inline, as GRDB does with its database queues.
///
/// The threads are the pool's own, not Dispatch's: on Linux a Dispatch concurrent queue shares
/// the worker pool that also runs every Swift task, and that pool adds a thread at most once a
/// second, and only while fewer of its threads are runnable than there are cores. Jobs that
/// wait (a busy database lock, a sleep) then queue behind computing tasks for as long as those
/// run. Here a job that finds no idle thread starts one (up to 64),
/// and a thread idle for a while ends.
public enum BlockingWork {
  /// The process's pool of blocking threads.
  static let pool = BlockingThreadPool(maximum: 64, idleLifetime: 10)

  /// Runs `body` on a blocking thread and returns its value (or rethrows its error).
  public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      pool.submit { continuation.resume(with: Result { try body() }) }
    }
  }

  /// Runs non-throwing `body` on a blocking thread and returns its value.
  public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
      pool.submit { continuation.resume(returning: body()) }
    }
  }

  /// Starts `job` on a blocking thread and returns at once: for a task executor whose jobs
  /// may block (the tests' off-pool executor).
  public static func start(_ job: @escaping @Sendable () -> Void) {
    pool.submit(job)
  }
}

/// Threads that run submitted jobs in the order they came: a job that finds no idle thread
/// starts a new one while there are fewer than `maximum` (after that it waits for the first
/// thread to come free); a thread with nothing to do for `idleLifetime` seconds ends.
final class BlockingThreadPool: @unchecked Sendable {
  typealias Job = @Sendable () -> Void

  /// The most threads the pool runs at once.
  let maximum: Int
  /// How long, in seconds, a thread waits for a job before it ends.
  let idleLifetime: TimeInterval

  // Guarded by `condition`.
  private let condition = NSCondition()
  private var jobs: [Job] = []
  private var head = 0
  private var idle = 0
  private var threads = 0

  init(maximum: Int, idleLifetime: TimeInterval) {
    precondition(maximum > 0, "a pool needs at least one thread")
    self.maximum = maximum
    self.idleLifetime = idleLifetime
  }

  /// The threads running now and how many of them wait for a job.
  var counts: (threads: Int, idle: Int) {
    condition.lock()
    defer { condition.unlock() }
    return (threads, idle)
  }

  /// Queues `job` for the first free thread, starting one when none is idle.
  func submit(_ job: @escaping Job) {
    condition.lock()
    jobs.append(job)
    let waiting = jobs.count - head
    let start = waiting > idle && threads < maximum
    if start { threads += 1 }
    if idle > 0 { condition.signal() }
    condition.unlock()
    if start {
      let thread = Thread { [self] in work() }
      thread.name = "engram.blocking"
      thread.start()
    }
  }

  /// A thread's life: takes jobs in order until none comes for `idleLifetime`.
  private func work() {
    condition.lock()
    while true {
      while head == jobs.count {
        idle += 1
        let signalled = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
        idle -= 1
        if !signalled && head == jobs.count {
          threads -= 1
          condition.unlock()
          return
        }
      }
      let job = jobs[head]
      head += 1
      if head == jobs.count {
        jobs.removeAll(keepingCapacity: true)
        head = 0
      } else if head >= 256 && head * 2 >= jobs.count {
        jobs.removeFirst(head)
        head = 0
      }
      condition.unlock()
      job()
      condition.lock()
    }
  }
}
