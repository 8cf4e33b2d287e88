import EngramCore
import EngramStore
import Foundation

/// Delivers reminders when they come due: the one part chat, the web app, `engram reminders`
/// and MCP deliver through (`engine.reminders`; docs/agenda.md "Delivery").
///
/// A reminder is claimed on its own, in its own transaction (`delivered_at` set only where it
/// is still empty), just before it is handed over, never a batch up front: two processes never
/// deliver one reminder twice, and a hand-over that fails releases that reminder's claim (it is
/// due again) and leaves the reminders after it unclaimed.
public struct ReminderDelivery: Sendable {
  let open: OpenState
  let store: any MemoryStore

  /// The reminders due at or before `now` and never delivered, soonest first, at most `limit`
  /// (unclaimed: a look, as `engram reminders --due --peek` takes).
  public func due(at now: Date, limit: Int = 1000) throws -> [AgentItem] {
    try open.check()
    let time = now
    return try store.readTransaction {
      try $0.agentItems(
        kind: .reminder, dueFrom: nil, to: time.addingTimeInterval(0.001), undeliveredOnly: true,
        limit: max(0, limit))
    }
  }

  /// Hands each reminder due at or before `now` and never delivered to `handOver`, soonest
  /// first, at most `limit`, claiming each just before its hand-over (one another process
  /// claimed first is skipped).
  /// - Returns: the reminders handed over, as stored (delivered at `now`).
  /// - Throws: a store error, or the error of `handOver`: that reminder's claim is released
  ///   first and the ones after it are left as they were.
  public func deliver(
    at now: Date, limit: Int = 1000, handOver: (AgentItem) async throws -> Void
  ) async throws -> [AgentItem] {
    let time = now
    let candidates = try await BlockingWork.run { try self.due(at: time, limit: limit) }
    var delivered: [AgentItem] = []
    for candidate in candidates {
      guard let id = candidate.id else { continue }
      guard let claimed = try await BlockingWork.run({ try self.claim(id, at: time) }) else { continue }
      do {
        try await handOver(claimed)
      } catch {
        try? await BlockingWork.run { try self.release(id, claimedAt: time) }
        throw error
      }
      delivered.append(claimed)
    }
    return delivered
  }

  /// Claims and returns the reminders due at or before `now` and never delivered, soonest
  /// first, at most `limit`: for a caller whose hand-over is the return itself (a chat's
  /// lines, a web reply). Looks on a reader first: most times nothing is due, and then the
  /// write lock is never taken.
  public func deliver(at now: Date, limit: Int = 1000) throws -> [AgentItem] {
    var delivered: [AgentItem] = []
    for candidate in try due(at: now, limit: limit) {
      if let id = candidate.id, let claimed = try claim(id, at: now) { delivered.append(claimed) }
    }
    return delivered
  }

  /// Claims reminder `id` (delivered at `now`); nil when it is not due or already delivered.
  func claim(_ id: Int64, at now: Date) throws -> AgentItem? {
    try open.check()
    return try store.writeTransaction { try $0.claimReminder(id, at: now) }
  }

  /// Releases the claim of reminder `id` made at `claimedAt`.
  func release(_ id: Int64, claimedAt: Date) throws {
    try open.check()
    try store.writeTransaction { try $0.releaseReminder(id, claimedAt: claimedAt) }
  }
}
