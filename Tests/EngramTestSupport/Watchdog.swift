import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Stops the test process, naming the test, when a test runs far past its time limit.
///
/// Swift Testing's `.timeLimit` records a failure and cancels the test, but only from a task
/// on the cooperative pool: when a test blocks every cooperative thread (two on a 2-core
/// machine) that task never runs and the run hangs without a word. This watchdog is a plain
/// thread: every test in a suite marked `.watchdog` is registered with its deadline (its own
/// time limit plus `grace`), and a test still running after it ends the process with the
/// test's name, the limit and every test still running, after killing the children started
/// through ``ChildProcess`` so that nothing outlives the run. See docs/concurrency.md.
public struct WatchdogTrait: SuiteTrait, TestTrait, TestScoping {
  /// Applies to every test in the suite and its nested suites.
  public var isRecursive: Bool { true }

  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    guard !test.isSuite else { return try await function() }
    let limit = test.timeLimit ?? Watchdog.defaultLimit
    let name = Watchdog.describe(test, testCase)
    let ticket = Watchdog.shared.start(name, deadline: limit + Watchdog.grace)
    defer { Watchdog.shared.finish(ticket) }
    try await function()
  }
}

extension Trait where Self == WatchdogTrait {
  /// Ends the process with the test's name when a test overruns its time limit, even when it
  /// blocks every cooperative thread (see ``WatchdogTrait``).
  public static var watchdog: Self { WatchdogTrait() }
}

/// The registry of running tests and the thread that watches their deadlines.
public final class Watchdog: Sendable {
  /// For a test without a `.timeLimit` (every suite should carry one; `make lint` checks).
  static let defaultLimit = Duration.seconds(600)
  /// Swift Testing's own time limit fires first when the pool is free to run it.
  static let grace = Duration.seconds(30)

  public static let shared = Watchdog()

  private struct Running {
    var name: String
    var started: ContinuousClock.Instant
    var deadline: ContinuousClock.Instant
  }

  private struct State {
    var next = 0
    var running: [Int: Running] = [:]
    var watching = false
  }

  private let state = Mutex(State())

  /// Registers a running test; returns the ticket that ``finish(_:)`` takes.
  func start(_ name: String, deadline limit: Duration) -> Int {
    let now = ContinuousClock.now
    let (ticket, needsThread) = state.withLock { state -> (Int, Bool) in
      state.next += 1
      state.running[state.next] = Running(name: name, started: now, deadline: now + limit)
      return (state.next, !state.watching)
    }
    if needsThread { startThread() }
    return ticket
  }

  func finish(_ ticket: Int) {
    _ = state.withLock { $0.running.removeValue(forKey: ticket) }
  }

  private func startThread() {
    let claimed = state.withLock { state -> Bool in
      guard !state.watching else { return false }
      state.watching = true
      return true
    }
    guard claimed else { return }
    let thread = Thread { [self] in watch() }
    thread.name = "engram.test-watchdog"
    thread.start()
  }

  private func watch() {
    while true {
      // A plain thread may sleep: it is nobody's cooperative thread.
      Thread.sleep(forTimeInterval: 1)
      let now = ContinuousClock.now
      let report = state.withLock { state -> String? in
        guard let late = state.running.values.first(where: { $0.deadline < now }) else { return nil }
        let others = state.running.values.sorted { $0.started < $1.started }.map {
          "  \($0.name) (running \(Self.seconds(now - $0.started)))"
        }
        return """

          WATCHDOG: test \(late.name) has run for \(Self.seconds(now - late.started)), past its \
          time limit and \(Self.seconds(Self.grace)) of grace; its cooperative threads are \
          likely blocked (docs/concurrency.md). Stopping the test process.
          Tests still running:
          \(others.joined(separator: "\n"))

          """
      }
      guard let report else { continue }
      FileHandle.standardError.write(Data(report.utf8))
      ChildProcess.killAll()
      _exit(86)
    }
  }

  static func describe(_ test: Test, _ testCase: Test.Case?) -> String {
    let name = ([test.id.moduleName] + test.id.nameComponents).joined(separator: ".")
    let parameterized = testCase?.isParameterized == true ? " (one of its cases)" : ""
    return "\(name)\(parameterized) at \(test.sourceLocation.fileID):\(test.sourceLocation.line)"
  }

  private static func seconds(_ duration: Duration) -> String {
    "\(duration.components.seconds) s"
  }
}
