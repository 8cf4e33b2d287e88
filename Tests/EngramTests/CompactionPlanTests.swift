import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Issue 15: the dry run is a planning query whose numbers the real run keeps, and the real
/// run goes through many sessions in bounded transactions of whole sessions.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct CompactionPlanTests {
  /// `sessions` old sessions ingested as JSONL: informative turns, greetings, and every
  /// seventh session made of greetings only.
  static func fill(_ engine: MemoryEngine, folder: TemporaryFolder, sessions: Int) async throws {
    var lines: [String] = []
    for session in 0..<sessions {
      let texts =
        session % 7 == 3
        ? ["Hi!", "Hey", "Thanks!", "Cool."]
        : [
          "Hi!", "We booked flights to Lisbon number \(session) for the conference", "Wow!",
          "I need to renew my passport before February \(session)", "Thanks!", "Nice!",
          "Ben rented a car for the drive to Sintra on day \(session)",
        ]
      for (offset, text) in texts.enumerated() {
        lines.append(
          #"{"role":"user","content":"\#(text)","session":"trip-\#(session)","timestamp":\#(1_600_000_000 + session * 3600 + offset * 60)}"#
        )
      }
    }
    let file = folder.path("turns.jsonl")
    try writeFile(lines.joined(separator: "\n"), to: file)
    _ = try await engine.conversation.ingest(path: file)
  }

  @Test func theDryRunPlansExactlyWhatTheRealRunDoesAndChangesNothing() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    try await Self.fill(engine, folder: folder, sessions: 14)
    let before = try await engine.maintenance.tableCounts()
    let generation = try engine.database.read { try $0.embeddingGeneration() }

    let plan = try await engine.compact(dryRun: true)
    #expect(try await engine.maintenance.tableCounts() == before)
    #expect(try engine.database.read { try $0.embeddingGeneration() } == generation)
    // 12 sessions lose their 4 greetings; the 2 greeting-only ones keep the one they quote.
    #expect(plan.sessionsSummarized == 14 && plan.turnsDeleted == 12 * 4 + 2 * 3)
    #expect(plan.plan.contains("summarize trip-3: 4 turns, quote 1, delete 3 low-information"))
    #expect(plan.plan.contains("summarize trip-0: 7 turns, quote 1, delete 4 low-information"))

    let report = try await engine.compact()
    #expect(report.plan == plan.plan)
    #expect(report.turnsDeleted == plan.turnsDeleted)
    #expect(report.embeddingsQuantized == plan.embeddingsQuantized)
    #expect(report.rowsAfter["messages"] == before["messages"]! - plan.turnsDeleted)
    #expect(report.rowsAfter["summaries"] == 14)
    #expect(try await engine.doctor().healthy)
  }

  @Test func sessionsBeyondOneTransactionAreAllCompactedAndSearchable() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let sessions = Compactor.sessionsPerTransaction * 2 + 5
    try await Self.fill(engine, folder: folder, sessions: sessions)
    let report = try await engine.compact()
    #expect(report.summariesCreated == sessions)
    let uncovered = try engine.database.read {
      try $0.scalarInt("SELECT count(*) FROM messages WHERE summary_id IS NULL")
    }
    #expect(uncovered == 0)
    // Every session has its one summary, found by its words, in the last transaction too.
    for session in [0, sessions - 1] {
      let found = try await engine.search(
        "Lisbon conference passport Sintra", k: 3,
        filters: SearchFilters(kinds: [.summary], session: "trip-\(session)"))
      #expect(found.count == 1)
    }
    let turns = try await engine.search(
      "passport February 131", k: 3, filters: SearchFilters(kinds: [.message]))
    #expect(turns.first?.text == "I need to renew my passport before February 131")
    #expect(try await engine.doctor().healthy)
    #expect(try await engine.compact().sessionsSummarized == 0)
  }
}
