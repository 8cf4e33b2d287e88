import Dispatch
import EngramTestSupport
import Foundation
import Testing

/// The watchdog's own proof (docs/concurrency.md): with `ENGRAM_DEADLOCK_PROBE=1` this test
/// blocks every thread of the cooperative pool for good, so Swift Testing's time limit can no
/// longer fire; the watchdog must end the run naming this test. Off by default: `make
/// watchdog-check` runs it alone and checks the name and the failing exit.
@Suite(
  .timeLimit(.minutes(1)), .watchdog,
  .enabled(if: ProcessInfo.processInfo.environment["ENGRAM_DEADLOCK_PROBE"] == "1"))
struct WatchdogProbeTests {
  @Test func blockingEveryCooperativeThreadIsStoppedByName() async {
    let never = DispatchSemaphore(value: 0)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0...ProcessInfo.processInfo.activeProcessorCount {
        group.addTask { never.wait() }
      }
    }
  }
}
