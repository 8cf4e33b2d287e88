import Engram
import Foundation
import Synchronization

@testable import EngramAgent

/// A real engine on a temporary database (the hashing embedder), closed and removed when
/// released: what skills read and write in these tests (no fake memory: a skill's effect is
/// checked in the engine's own tables).
final class TestMemory {
  let folder: AgentTemporaryFolder
  let engine: MemoryEngine

  init() throws {
    folder = try AgentTemporaryFolder()
    engine = try openEngine(folder.path("memory.sqlite"))
  }

  /// Stores `text` as a memory (a fact unless `kind` says otherwise) said at `date`; returns its id.
  @discardableResult
  func remember(
    _ text: String, kind: MemoryKind = .fact, at date: Date = wallClock(2025, 6, 11, 10, in: Zones.shanghai)
  ) async throws -> Int64 {
    try await engine.memories.remember(text, kind: kind, at: date)
  }

  /// The stored reminder, event or note with `id`.
  func item(_ id: Int64) async throws -> AgentItem? { try await engine.agentRecords.item(id) }

  deinit { engine.close() }
}

enum Zones {
  static let shanghai = TimeZone(identifier: "Asia/Shanghai")!
  static let newYork = TimeZone(identifier: "America/New_York")!
  static let tokyo = TimeZone(identifier: "Asia/Tokyo")!
  static let london = TimeZone(identifier: "Europe/London")!
}

/// The instant of a wall-clock time in `zone`.
func wallClock(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, in zone: TimeZone)
  -> Date
{
  var calendar = Calendar(identifier: .gregorian)
  calendar.timeZone = zone
  return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
}

/// A retrieved item as the engine returns one: a memory (a fact unless `memoryKind` says
/// otherwise) said at the fixed clock's instant, 10:00 on 11 June 2025 in Shanghai, by default.
func testHit(
  id: Int64, text: String, kind: ItemKind = .memory, memoryKind: MemoryKind? = nil,
  date: Date = wallClock(2025, 6, 11, 10, in: Zones.shanghai), speaker: String? = nil, cosine: Double? = nil
) -> SearchHit {
  SearchHit(
    kind: kind, id: id, text: text, speaker: speaker, timestamp: date, cosine: cosine,
    memoryKind: kind == .memory ? memoryKind ?? .fact : nil)
}

func context(_ text: String, memory: TestMemory, clock: AgentClock? = nil) -> SkillContext {
  SkillContext(
    userText: text,
    clock: clock ?? .fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai),
    engine: memory.engine)
}
