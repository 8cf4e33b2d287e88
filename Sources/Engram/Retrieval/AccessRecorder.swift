import EngramCore
import EngramStore
import Foundation
import Synchronization

/// Counts retrievals of memories and writes them off the read path, batched: a search
/// never writes and never waits for a writer (another process's lock included).
final class AccessRecorder: Sendable {
  let store: StoreRole<any ItemQueries>
  /// Access statistics not yet written (memory id -> count, last access).
  private let pending = Mutex<Pending>(Pending())
  /// Writes access statistics in the background (blocking SQLite work stays off the
  /// cooperative pool).
  private let queue: DispatchQueue = {
    let queue = DispatchQueue(label: "engram.access-statistics", qos: .utility)
    queue.setSpecific(key: AccessRecorder.queueKey, value: ())
    return queue
  }()
  /// Marks the queue, so a close that runs on it (the last reference released by a
  /// background write) does not wait for itself.
  static let queueKey = DispatchSpecificKey<Void>()

  private struct Pending: Sendable {
    var entries: [Int64: (count: Int, last: Int64)] = [:]
    var flushScheduled = false
  }

  init(store: StoreRole<any ItemQueries>) {
    self.store = store
  }

  /// Counts a retrieval of `ids` and schedules a background write.
  func note(_ ids: [Int64]) {
    guard !ids.isEmpty else { return }
    let now = Timestamp.now()
    let schedule = pending.withLock { pending in
      for id in ids {
        let entry = pending.entries[id] ?? (0, now)
        pending.entries[id] = (entry.count + 1, max(entry.last, now))
      }
      defer { pending.flushScheduled = true }
      return !pending.flushScheduled
    }
    guard schedule else { return }
    queue.async { [self] in try? write() }
  }

  /// Writes what was gathered so far, waiting for a background write in progress.
  func flush() throws {
    if DispatchQueue.getSpecific(key: Self.queueKey) != nil { return try write() }
    try queue.sync { try write() }
  }

  /// Lets a background write in progress finish (unless called from it).
  func drain() {
    if DispatchQueue.getSpecific(key: Self.queueKey) == nil { queue.sync {} }
  }

  /// Writes the gathered statistics; on failure keeps them for the next attempt.
  func write() throws {
    let taken = pending.withLock { pending in
      defer {
        pending.entries = [:]
        pending.flushScheduled = false
      }
      return pending.entries
    }
    guard !taken.isEmpty else { return }
    do {
      // Never waits for another process's write lock: the statistics stay pending for the
      // next attempt, and a closing engine does not wait a busy timeout for them.
      try store.writeTransactionWithoutWaiting { connection in
        try connection.recordMemoryAccess(
          taken.map { (id: $0.key, count: $0.value.count, lastAccess: $0.value.last) })
      }
    } catch {
      // Kept for the next attempt (the next search schedules one, close makes a last one).
      pending.withLock { pending in
        for (id, entry) in taken {
          let existing = pending.entries[id] ?? (0, entry.last)
          pending.entries[id] = (existing.count + entry.count, max(existing.last, entry.last))
        }
      }
      throw error
    }
  }
}
