import Dispatch
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramCore

/// `BlockingWork`'s threads are its own: a job that waits never holds up the next one, the
/// pool stays within its maximum, and idle threads end.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct BlockingThreadPoolTests {
  /// Jobs that each wait for a job submitted after them all finish: every job that finds no
  /// idle thread starts one, so the last job runs while the others still wait.
  @Test func jobsWaitingForALaterJobEachGetAThread() async {
    let pool = BlockingThreadPool(maximum: 64, idleLifetime: 30)
    let gate = DispatchSemaphore(value: 0)
    let finished = Mutex(0)
    let waiters = 12
    // Submitted here, not from child tasks, which a loaded run may start late.
    for _ in 0..<waiters {
      pool.submit {
        gate.wait()
        finished.withLock { $0 += 1 }
      }
    }
    #expect(pool.counts.threads == waiters)
    pool.submit { for _ in 0..<waiters { gate.signal() } }
    #expect(await eventually(within: .seconds(60)) { finished.withLock { $0 } == waiters })
    #expect(pool.counts.threads <= waiters + 1)
  }

  /// With room for one thread, jobs run one at a time in the order they came.
  @Test func aPoolOfOneRunsJobsInOrder() async {
    let pool = BlockingThreadPool(maximum: 1, idleLifetime: 30)
    let order = Mutex<[Int]>([])
    let running = Mutex((now: 0, most: 0))
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      for index in 0..<500 {
        pool.submit {
          running.withLock {
            $0.now += 1; $0.most = max($0.most, $0.now)
          }
          order.withLock { $0.append(index) }
          running.withLock { $0.now -= 1 }
          if index == 499 { continuation.resume() }
        }
      }
    }
    #expect(order.withLock { $0 } == Array(0..<500))
    #expect(running.withLock { $0.most } == 1)
    #expect(pool.counts.threads <= 1)
  }

  /// A thread with nothing to do for the idle lifetime ends; a job after that starts another.
  @Test func idleThreadsEndAndANewJobStartsOne() async {
    let pool = BlockingThreadPool(maximum: 4, idleLifetime: 0.05)
    await withCheckedContinuation { continuation in pool.submit { continuation.resume() } }
    #expect(await eventually(within: .seconds(60)) { pool.counts.threads == 0 })
    let value = await withCheckedContinuation { continuation in
      pool.submit { continuation.resume(returning: 7) }
    }
    #expect(value == 7)
  }

  /// `BlockingWork.run` returns the body's value and rethrows its error.
  @Test func runReturnsValuesAndRethrows() async throws {
    struct Failure: Error {}
    #expect(try await BlockingWork.run { () throws -> Int in 41 + 1 } == 42)
    await #expect(throws: Failure.self) { try await BlockingWork.run { () throws -> Int in throw Failure() } }
  }
}
