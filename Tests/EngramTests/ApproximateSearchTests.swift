import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// The approximate vector tier as the engine uses it: configured through
/// `EngramConfiguration.approximate`, bypassed by `search(exact:)`, reported by
/// `vectorIndexStatistics`, and close to the exact scan.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ApproximateSearchTests {
  /// 600 turns about 60 topics; the lists are built over all of them, inside the last
  /// embedding batch of the ingest (256 turns a batch: the third crosses 520 rows).
  func engine(in folder: TemporaryFolder) async throws -> MemoryEngine {
    var configuration = hashingConfiguration(dimension: 64)
    configuration.approximate = ApproximateConfiguration(
      threshold: 520, targetRecall: 0.9, lists: 16, build: .inline, calibrationQueries: 64)
    let engine = try MemoryEngine(path: folder.path("ann.sqlite"), configuration: configuration)
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let turns = (0..<600).map { index in
      ConversationTurn(
        role: "user",
        content: "topic \(index % 60) note \(index): word\(index % 60) item\(index % 7) thing\(index)",
        speaker: "Ann", timestamp: start.addingTimeInterval(Double(index) * 60))
    }
    let file = ConversationFile(
      sessions: [ConversationSession(name: "s", startedAt: start, turns: turns)], format: .jsonl)
    _ = try await engine.conversation.ingest(file, path: "generated")
    return engine
  }

  @Test func theApproximateTierServesAboveItsThresholdAndSaysSo() async throws {
    let folder = try TemporaryFolder()
    let engine = try await engine(in: folder)
    defer { engine.close() }
    let status = try #require(engine.maintenance.vectorIndexStatistics.approximate)
    #expect(status.serving)
    #expect(status.lists == 16)
    #expect(status.calibratedRecall >= 0.9)
  }

  @Test func exactSearchNeverReportsApproximateCandidatesAndApproximateOnesStayClose() async throws {
    let folder = try TemporaryFolder()
    let engine = try await engine(in: folder)
    defer { engine.close() }
    var overlap = 0
    var total = 0
    for topic in stride(from: 0, to: 60, by: 3) {
      let query = "word\(topic) item\(topic % 7)"
      let exact = try await engine.search(query, k: 10, mode: .vector, recordAccess: false, exact: true)
      #expect(exact.count == 10)
      #expect(exact.allSatisfy { !$0.provenance.contains("approximate") })
      let approximate = try await engine.search(query, k: 10, mode: .vector, recordAccess: false)
      #expect(approximate.count == 10)
      overlap += Set(approximate.map(\.id)).intersection(exact.map(\.id)).count
      total += exact.count
    }
    // Calibrated to 0.9 on the rows themselves; these queries are new text.
    #expect(Double(overlap) / Double(total) >= 0.8, "recall@10 \(Double(overlap) / Double(total))")
  }

  /// Lists built in the background by the process that crossed the threshold are finished
  /// and saved when it closes (a CLI ingest exits right after its last write), so the next
  /// process serves from them.
  @Test func listsBuiltInTheBackgroundAreSavedAtCloseAndServeTheNextOpen() async throws {
    let folder = try TemporaryFolder()
    var configuration = hashingConfiguration(dimension: 64)
    configuration.approximate = ApproximateConfiguration(
      threshold: 300, targetRecall: 0.9, lists: 16, build: .background, calibrationQueries: 64)
    let path = folder.path("background.sqlite")
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let turns = (0..<2_000).map { index in
      ConversationTurn(
        role: "user", content: "topic \(index % 60) note \(index): word\(index % 60) thing\(index)",
        speaker: "Ann", timestamp: start.addingTimeInterval(Double(index) * 60))
    }
    let file = ConversationFile(
      sessions: [ConversationSession(name: "s", startedAt: start, turns: turns)], format: .jsonl)
    do {
      let engine = try MemoryEngine(path: path, configuration: configuration)
      _ = try await engine.conversation.ingest(file, path: "generated")
      await engine.close()
    }
    let reopened = try MemoryEngine(path: path, configuration: configuration)
    defer { reopened.close() }
    let status = try #require(reopened.maintenance.vectorIndexStatistics.approximate)
    #expect(status.serving)
    #expect(status.lists == 16)
  }

  @Test func belowTheThresholdEverySearchIsExact() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(
      path: folder.path("small.sqlite"), configuration: hashingConfiguration(dimension: 64))
    defer { engine.close() }
    for index in 0..<20 {
      _ = try await engine.memories.remember("fact number \(index) about tea", kind: .fact)
    }
    #expect(engine.maintenance.vectorIndexStatistics.approximate == nil)
    let hits = try await engine.search("tea", k: 5, mode: .vector, recordAccess: false)
    #expect(hits.count == 5)
    #expect(hits.allSatisfy { !$0.provenance.contains("approximate") })
  }
}
