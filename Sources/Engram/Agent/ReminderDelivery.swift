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
///
/// Every method is async and runs its store work off the cooperative thread pool.
public struct ReminderDelivery: Sendable {
  let open: OpenState
  /// The agent-record and record queries of the store: all delivery reads and writes.
  let store: StoreRole<any AgentRecordQueries & RecordQueries>

  /// The reminders due at or before `now` and never delivered, soonest first, at most `limit`
  /// (unclaimed: a look, as `engram reminders --due --peek` takes).
  public func due(at now: Date, limit: Int = 1000) async throws -> [AgentItem] {
    try await store.readOffPool(open) {
      try $0.agentItems(
        kind: .reminder, dueFrom: nil, to: now.addingTimeInterval(0.001), undeliveredOnly: true,
        limit: max(0, limit))
    }
  }

  /// Hands each reminder due at or before `now` and never delivered to `handOver`, soonest
  /// first, at most `limit`, claiming each just before its hand-over (one another process
  /// claimed first is skipped). Looks on a reader first: most times nothing is due, and then
  /// the write lock is never taken.
  ///
  /// A reminder kept with a condition (``AgentItem/condition``) is checked by `conditions` once
  /// claimed: when it holds, the reminder is handed over with the reason in
  /// ``AgentItem/conditionOutcome``; when it does not, it is delivered without firing (never
  /// handed over) and the reason is stored; when it cannot be checked (or `conditions` is nil),
  /// it is handed over with an outcome that says so: never dropped silently.
  /// - Returns: the reminders handed over, as stored (delivered at `now`).
  /// - Throws: a store error, or the error of `handOver`: that reminder's claim is released
  ///   first and the ones after it are left as they were.
  public func deliver(
    at now: Date, limit: Int = 1000, conditions: (any ReminderConditionChecking)? = nil,
    handOver: (AgentItem) async throws -> Void
  ) async throws -> [AgentItem] {
    var delivered: [AgentItem] = []
    for candidate in try await due(at: now, limit: limit) {
      guard let id = candidate.id else { continue }
      guard var claimed = try await claim(id, at: now) else { continue }
      if claimed.condition != nil {
        let outcome =
          await conditions?.check(claimed, at: now)
          ?? AgentItemConditionOutcome(.unchecked, reason: Self.noCheckerReason)
        claimed.conditionOutcome = outcome
        try await record(claimed)
        guard outcome.fired else { continue }
      }
      do {
        try await handOver(claimed)
      } catch {
        try? await release(id, claimedAt: now)
        throw error
      }
      delivered.append(claimed)
    }
    return delivered
  }

  /// Claims and returns the reminders due at or before `now` and never delivered, soonest
  /// first, at most `limit`: for a caller whose hand-over is the return itself (a chat's
  /// lines, a web reply). A reminder with a condition is checked by `conditions` as
  /// ``deliver(at:limit:conditions:handOver:)`` does (without `conditions`, it is returned with
  /// an outcome that says it could not be checked); one whose condition failed is not returned.
  public func deliver(
    at now: Date, limit: Int = 1000, conditions: (any ReminderConditionChecking)? = nil
  ) async throws -> [AgentItem] {
    try await deliver(at: now, limit: limit, conditions: conditions) { _ in }
  }

  /// The outcome's reason when nothing could check a condition.
  static let noCheckerReason = "nothing here can check conditions"

  /// Stores what `item`'s condition came to, if it is still the claim `item` holds (its
  /// `deliveredAt` as stored).
  func record(_ item: AgentItem) async throws {
    try await store.writeOffPool(open) { session in
      guard let id = item.id, var stored = try session.fetch(AgentItem.self, id: id),
        stored.deliveredAt == item.deliveredAt
      else { return }
      stored.conditionOutcome = item.conditionOutcome
      try session.update(stored)
    }
  }

  /// Claims reminder `id` (delivered at `now`); nil when it is not due or already delivered.
  func claim(_ id: Int64, at now: Date) async throws -> AgentItem? {
    try await store.writeOffPool(open) { try $0.claimReminder(id, at: now) }
  }

  /// Releases the claim of reminder `id` made at `claimedAt`.
  func release(_ id: Int64, claimedAt: Date) async throws {
    try await store.writeOffPool(open) { try $0.releaseReminder(id, claimedAt: claimedAt) }
  }
}

/// Checks a reminder's condition just before its hand-over (``ReminderDelivery``). The engine
/// keeps a condition as text it does not read; the agent's front ends supply the checker
/// (`engram reminders`, chat and the web app check with the agent's `ConditionChecker`).
public protocol ReminderConditionChecking: Sendable {
  /// What `reminder`'s condition (``AgentItem/condition``) comes to at `now`: `.held` (it
  /// fires, and why), `.failed` (it is delivered without firing, and why) or `.unchecked` (it
  /// fires with a note saying why the condition could not be checked). Never throws: a check
  /// that cannot be made is `.unchecked`.
  func check(_ reminder: AgentItem, at now: Date) async -> AgentItemConditionOutcome
}
