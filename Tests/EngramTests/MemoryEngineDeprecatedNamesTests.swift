import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// The engine's top-level names of 0.1.0 still work for one release: each forwards to the
/// grouped name it was renamed to (`conversation`, `memories`, `userPreferences`, `transfer`,
/// `maintenance`).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct MemoryEngineDeprecatedNamesTests {
  /// What the old names return, gathered where using them is allowed (a deprecated witness
  /// called through a protocol keeps this file free of deprecation warnings).
  protocol OldNames {
    func exercise(_ engine: MemoryEngine, exportPath: String) async throws -> OldNamesResult
  }

  struct OldNamesResult {
    var session: Int64
    var turn: Int64
    var recentTurnIDs: [Int64]
    var memory: Int64
    var reported: (id: Int64, isNew: Bool)
    var updated: Int64
    var readBack: String?
    var listed: [Int64]
    var preference: String?
    var preferenceKeys: [String]
    var exportedLines: Int
    var calendarStartsRight: Bool
    var tableCounts: [String: Int]
    var countsByKind: [MemoryKind: Int]
    var metaCreatedAt: String?
    var forgotten: Bool
    var forgetReport: ForgetReport?
  }

  struct DeprecatedCalls: OldNames {
    @available(*, deprecated)
    func exercise(_ engine: MemoryEngine, exportPath: String) async throws -> OldNamesResult {
      let session = try engine.startSession(name: "s", title: "S")
      let turn = try await engine.appendTurn(role: "user", content: "hello there", session: session)
      let recent = try engine.recentTurns(limit: 5, session: session).map(\.id)
      try engine.endSession(session)
      let memory = try await engine.remember("Alice likes tea", kind: .preference)
      let reported = try await engine.rememberReporting("Alice likes tea", kind: .preference)
      let updated = try await engine.updateMemory(memory, content: "Alice likes green tea")
      let readBack = try engine.memory(updated)?.content
      let listed = try engine.memories(kind: .preference).compactMap(\.id)
      try engine.setPreference("units", "metric", pinned: true)
      let preference = try engine.preference("units")
      let keys = try engine.preferences().map(\.key)
      let lines = try engine.export(to: exportPath)
      let calendar = try engine.calendarText().hasPrefix("BEGIN:VCALENDAR")
      let counts = try engine.tableCounts()
      let byKind = try engine.memoryCountsByKind()
      let createdAt = try engine.metaValue("created_at")
      let report = try engine.forgetReporting(kind: .memory, id: updated, dryRun: true)
      let forgotten = try engine.forget(kind: .memory, id: updated)
      return OldNamesResult(
        session: session, turn: turn, recentTurnIDs: recent, memory: memory, reported: reported,
        updated: updated, readBack: readBack, listed: listed, preference: preference, preferenceKeys: keys,
        exportedLines: lines, calendarStartsRight: calendar, tableCounts: counts, countsByKind: byKind,
        metaCreatedAt: createdAt, forgotten: forgotten, forgetReport: report)
    }
  }

  @Test func oldNamesForwardToTheGroupedOnes() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let old: any OldNames = DeprecatedCalls()
    let result = try await old.exercise(engine, exportPath: folder.path("export.jsonl"))
    #expect(result.recentTurnIDs == [result.turn])
    #expect(result.reported.id == result.memory && !result.reported.isNew)
    #expect(result.updated != result.memory)
    #expect(result.readBack == "Alice likes green tea")
    #expect(result.listed == [result.updated])
    #expect(result.preference == "metric" && result.preferenceKeys == ["units"])
    #expect(result.exportedLines > 2 && result.calendarStartsRight)
    #expect(result.tableCounts["memories"] == 2)
    #expect(result.countsByKind[.preference] == 2)
    #expect(result.metaCreatedAt != nil)
    #expect(result.forgetReport != nil && result.forgotten)
    // The grouped names see what the old ones did.
    #expect(try engine.memories.get(result.updated) == nil)
    #expect(try engine.userPreferences.get("units") == "metric")
    #expect(try engine.conversation.recentTurns(limit: 5).map(\.id) == [result.turn])
    #expect(try engine.maintenance.metaValue("created_at") == result.metaCreatedAt)
  }
}
