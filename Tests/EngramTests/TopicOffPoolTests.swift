import Dispatch
import EngramCore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram

/// The engine's topic types run their blocking store work off the thread of the task that
/// calls them: callers await them and never wrap them in `BlockingWork.run`.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct TopicOffPoolTests {
  /// One thread of its own for the tasks that prefer it: what blocks it shows, whatever the
  /// shared cooperative pool is doing in other tests.
  final class OneThreadExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "topic-off-pool-test")

    func enqueue(_ job: consuming ExecutorJob) {
      let job = UnownedJob(job)
      let executor = asUnownedTaskExecutor()
      queue.async { job.runSynchronously(on: executor) }
    }
  }

  /// Topic calls waiting for a write lock another connection holds leave their task's thread
  /// free: with every caller on one thread, a task that only sleeps there resumes while the
  /// lock is still held. (When a topic call ran its transaction on the caller's thread, the
  /// first waiting call held that thread until the lock was released.) The lock is held until
  /// the sleeper has looked, or for 20 seconds when it cannot: no deadline depends on how soon
  /// a loaded machine resumes a task.
  @Test func callsWaitingForTheWriteLockLeaveTheCallersThreadFree() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    var configuration = hashingConfiguration()
    configuration.busyTimeout = .seconds(60)
    let engine = try MemoryEngine(path: path, configuration: configuration)
    let other = try MemoryEngine(path: path, configuration: configuration)
    defer {
      engine.close()
      other.close()
    }
    // Due before the lock is taken: delivering it waits for the lock to claim it.
    try await engine.agentRecords.addItem(kind: .reminder, title: "due", due: Date(timeIntervalSinceNow: -60))
    let holding = Mutex(false)
    let looked = Mutex(false)
    let released = Mutex(false)
    // The other connection takes the write lock and keeps it until the sleeper has looked.
    let holder = Task {
      try await BlockingWork.run {
        try other.store.writeTransaction { _ in
          holding.withLock { $0 = true }
          let deadline = Date().addingTimeInterval(20)
          while !looked.withLock({ $0 }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
          released.withLock { $0 = true }
        }
      }
    }
    while !holding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
    let resumedWhileHeld = try await withTaskExecutorPreference(OneThreadExecutor()) {
      try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<9 {
          group.addTask {
            switch index % 8 {
            case 0: try await engine.userPreferences.set("key\(index)", "value")
            case 1: _ = try await engine.conversation.startSession(name: "s\(index)")
            case 2: try await engine.maintenance.setEmbedderSpec("hashing:256")
            case 3: _ = try await engine.memories.forget(kind: .memory, id: Int64(index))
            case 4: try await engine.agentRecords.addItem(kind: .reminder, title: "r\(index)", due: Date())
            case 5:
              try await engine.agentRecords.saveRoutine(
                Routine(name: "r\(index)", steps: [Routine.Step(text: "what time is it")], createdAt: Date()))
            case 6: try await engine.agentRecords.setSkillEnabled(false, id: "calculator")
            default: _ = try await engine.reminders.deliver(at: Date())
            }
          }
        }
        try await Task.sleep(for: .milliseconds(300))
        let resumedWhileHeld = !released.withLock { $0 }
        looked.withLock { $0 = true }
        try await group.waitForAll()
        return resumedWhileHeld
      }
    }
    try await holder.value
    #expect(resumedWhileHeld)
    #expect(try await engine.userPreferences.get("key0") == "value")
    #expect(try await engine.maintenance.metaValue("embedder_spec") == "hashing:256")
    let reminders = try await engine.agentRecords.items(kind: .reminder)
    #expect(reminders.map(\.title) == ["due", "r4"])
    #expect(reminders.first?.deliveredAt != nil)
    #expect(try await engine.agentRecords.routines().map(\.name) == ["r5"])
    #expect(try await engine.agentRecords.skillFlags() == ["calculator": false])
  }
}
