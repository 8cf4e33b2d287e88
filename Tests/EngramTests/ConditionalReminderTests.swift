import EngramCore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram

/// A checker that answers every condition with `outcome` and counts what it was asked.
final class FixedConditions: ReminderConditionChecking {
  let outcome: AgentItemConditionOutcome
  let asked = Mutex<[String]>([])

  init(_ state: AgentItemConditionOutcome.State, reason: String) {
    outcome = AgentItemConditionOutcome(state, reason: reason)
  }

  func check(_ reminder: AgentItem, at now: Date) async -> AgentItemConditionOutcome {
    asked.withLock { $0.append(reminder.condition ?? "") }
    return outcome
  }
}

/// The condition a reminder is kept with, as the agent stores it (the engine never reads it).
let snowOnSaturday = #"{"about":"snow","kind":"weather","negated":false,"text":"it snows on Saturday"}"#

/// A reminder kept with a condition on `engine`: stored and read back as written, checked just
/// before its hand-over (fired with the reason when it holds, delivered without firing when it
/// does not, fired with a note when it cannot be checked), a released claim forgets the outcome.
func checkConditionalReminders(_ engine: MemoryEngine, at base: Date) async throws {
  let records = engine.agentRecords
  let plain = try await records.addItem(kind: .reminder, title: "plain", due: base - 30)
  let held = try await records.addItem(
    kind: .reminder, title: "held", due: base - 20, condition: snowOnSaturday)
  let failed = try await records.addItem(
    kind: .reminder, title: "failed", due: base - 10, condition: snowOnSaturday)
  #expect(try await records.item(held)?.condition == snowOnSaturday)
  #expect(try await records.item(held)?.conditionOutcome == nil)
  #expect(try await records.item(plain)?.condition == nil)

  // A checker that lets the first through and holds back the second.
  final class Split: ReminderConditionChecking {
    let held: Int64
    init(held: Int64) { self.held = held }
    func check(_ reminder: AgentItem, at now: Date) async -> AgentItemConditionOutcome {
      reminder.id == held
        ? AgentItemConditionOutcome(.held, reason: "the forecast says snow")
        : AgentItemConditionOutcome(.failed, reason: "the forecast does not say snow")
    }
  }
  let handed = Mutex<[String]>([])
  let delivered = try await engine.reminders.deliver(at: base, conditions: Split(held: held)) { item in
    handed.withLock { $0.append(item.title) }
  }
  #expect(handed.withLock { $0 } == ["plain", "held"])
  #expect(delivered.map(\.title) == ["plain", "held"])
  #expect(
    delivered.last?.conditionOutcome == AgentItemConditionOutcome(.held, reason: "the forecast says snow"))
  #expect(try await records.item(held)?.conditionOutcome?.state == .held)
  let skipped = try #require(try await records.item(failed))
  #expect(skipped.deliveredAt != nil)
  #expect(
    skipped.conditionOutcome == AgentItemConditionOutcome(.failed, reason: "the forecast does not say snow"))
  #expect(skipped.conditionOutcome?.fired == false)
  #expect(try await records.item(plain)?.conditionOutcome == nil)
  // Moved to a new time, it is due again and its outcome is forgotten.
  let moved = try await records.updateItem(failed, due: base + 60)
  #expect(moved.deliveredAt == nil && moved.conditionOutcome == nil)

  // A hand-over that fails releases the claim and forgets the outcome.
  struct Refused: Error {}
  await #expect(throws: Refused.self) {
    _ = try await engine.reminders.deliver(
      at: base + 120, conditions: FixedConditions(.held, reason: "it snows")
    ) { _ in throw Refused() }
  }
  let released = try #require(try await records.item(failed))
  #expect(released.deliveredAt == nil && released.conditionOutcome == nil)

  // Without a checker it fires, saying its condition was not checked; never dropped.
  let unchecked = try await records.deliverDueReminders(at: base + 120)
  #expect(unchecked.map(\.id) == [failed])
  #expect(unchecked.first?.conditionOutcome?.state == .unchecked)
  #expect(try await records.item(failed)?.conditionOutcome?.state == .unchecked)

  // Only a dated reminder keeps a condition, and only a JSON object.
  await #expect(throws: AgentRecordError.misplacedCondition(kind: .event)) {
    try await records.addItem(kind: .event, title: "e", due: base, condition: snowOnSaturday)
  }
  await #expect(throws: AgentRecordError.misplacedCondition(kind: .reminder)) {
    try await records.addItem(kind: .reminder, title: "undated", condition: snowOnSaturday)
  }
  await #expect(throws: AgentRecordError.invalidJSON(field: "condition")) {
    try await records.addItem(kind: .reminder, title: "r", due: base, condition: "if it snows")
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ConditionalReminderTests {
  let base = Date(timeIntervalSince1970: 1_750_000_000)

  @Test func aConditionIsKeptCheckedWhenDueAndItsOutcomeStoredOnSQLite() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    try await checkConditionalReminders(engine, at: base)
  }
}
