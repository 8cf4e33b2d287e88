import EngramCore
import Foundation
import Testing

/// Runs every test of a suite on threads of their own instead of Swift concurrency's
/// cooperative pool: for synchronous tests whose work blocks (a PostgreSQL round trip, a
/// `CREATE DATABASE`), which would otherwise hold the pool's few threads (two on a 2-core
/// machine) and stall every other test of the run until they finish.
///
/// The test's body gets a task executor preference (SE-0417): a synchronous test, and the
/// nonisolated async code it reaches, run on ``OffPoolExecutor``'s queue, whose threads may
/// block (the engine's `BlockingWork` threads).
public struct OffPoolTrait: SuiteTrait, TestTrait, TestScoping {
  /// Applies to every test in the suite and its nested suites.
  public var isRecursive: Bool { true }

  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    guard !test.isSuite else { return try await function() }
    try await withTaskExecutorPreference(OffPoolExecutor.shared) { try await function() }
  }
}

extension Trait where Self == OffPoolTrait {
  /// Runs the suite's tests off the cooperative pool (see ``OffPoolTrait``).
  public static var offPool: Self { OffPoolTrait() }
}

/// A task executor on ``BlockingWork``'s threads, which may block (the pool starts another
/// thread when none is idle).
public final class OffPoolExecutor: TaskExecutor {
  public static let shared = OffPoolExecutor()

  private static let key = "engram.test-off-pool"

  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    BlockingWork.start {
      let thread = Thread.current
      thread.threadDictionary[Self.key] = true
      job.runSynchronously(on: executor)
      thread.threadDictionary.removeObject(forKey: Self.key)
    }
  }

  /// Whether the calling code runs on one of this executor's jobs.
  public static var isCurrent: Bool {
    Thread.current.threadDictionary[key] as? Bool == true
  }
}
