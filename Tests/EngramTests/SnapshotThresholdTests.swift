import EngramEmbeddings
import EngramTestSupport
import EngramVectors
import Foundation
import Testing

@testable import Engram

/// Issue 20: a memory below `EngramConfiguration.snapshotMinimumRows` keeps no `.vectors`
/// snapshot (its index loads from the embeddings table), one that grows past it writes
/// one, and one that shrinks below it removes its file; search is the same either way.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct SnapshotThresholdTests {
  /// A hashing configuration keeping a snapshot from `minimum` rows.
  static func configuration(minimum: Int) -> EngramConfiguration {
    var configuration = EngramConfiguration(embedder: try! HashingEmbedder(dimension: 64))
    configuration.snapshotMinimumRows = minimum
    return configuration
  }

  /// Whether the snapshot file or its lists exist beside `engine`'s database.
  static func snapshotFiles(_ engine: MemoryEngine) throws -> (snapshot: Bool, lists: Bool) {
    let url = try #require(engine.snapshotURL)
    return (
      FileManager.default.fileExists(atPath: url.path),
      FileManager.default.fileExists(atPath: url.path + ".lists")
    )
  }

  static func remember(_ engine: MemoryEngine, _ range: Range<Int>) async throws -> [Int64] {
    var ids: [Int64] = []
    for index in range {
      ids.append(
        try await engine.memories.remember(
          "fact \(index) about topic\(index % 5) and item\(index)", kind: .fact))
    }
    return ids
  }

  /// Ids and scores of every mode's top 5 for a few queries.
  static func results(_ engine: MemoryEngine) async throws -> [String] {
    var lines: [String] = []
    for query in ["topic1 item3", "topic4", "fact 7 about"] {
      for mode in SearchMode.allCases {
        let hits = try await engine.search(query, k: 5, mode: mode, recordAccess: false)
        lines.append("\(mode) \(query): " + hits.map { "\($0.id)=\($0.score)" }.joined(separator: " "))
      }
    }
    return lines
  }

  @Test func theDefaultIsAThousandRowsAndANegativeOneIsRefused() throws {
    let folder = try TemporaryFolder()
    #expect(EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)).snapshotMinimumRows == 1_000)
    #expect(throws: EngramError.self) {
      _ = try MemoryEngine(path: folder.path("m.sqlite"), configuration: Self.configuration(minimum: -1))
    }
  }

  @Test func aSmallMemoryKeepsNoSnapshotAndSearchesTheSameAfterReopen() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let writer = try MemoryEngine(
      path: path, configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    _ = try await Self.remember(writer, 0..<30)
    let before = try await Self.results(writer)
    try writer.saveSnapshot()
    await writer.close()
    #expect(try Self.snapshotFiles(writer) == (false, false))

    let reader = try MemoryEngine(path: path, configuration: Self.configuration(minimum: 1_000))
    defer { reader.close() }
    #expect(reader.indexSource == .database)
    #expect(try reader.index.count == 30)
    #expect(try await Self.results(reader) == before)
    let report = try await reader.doctor()
    #expect(report.checks.allSatisfy { $0.ok }, "\(report.checks)")
  }

  @Test func crossingTheThresholdWritesTheSnapshot() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let small = try MemoryEngine(path: path, configuration: Self.configuration(minimum: 10))
    _ = try await Self.remember(small, 0..<9)
    await small.close()
    #expect(try Self.snapshotFiles(small).snapshot == false)

    let growing = try MemoryEngine(path: path, configuration: Self.configuration(minimum: 10))
    #expect(growing.indexSource == .database)
    _ = try await Self.remember(growing, 9..<12)
    let before = try await Self.results(growing)
    await growing.close()
    #expect(try Self.snapshotFiles(growing).snapshot)

    let reader = try MemoryEngine(path: path, configuration: Self.configuration(minimum: 10))
    defer { reader.close() }
    #expect(reader.indexSource == .snapshot)
    #expect(try reader.index.count == 12)
    #expect(try await Self.results(reader) == before)
  }

  @Test func shrinkingBelowTheThresholdRemovesTheSnapshot() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let setup = try MemoryEngine(path: path, configuration: Self.configuration(minimum: 10))
    let ids = try await Self.remember(setup, 0..<12)
    await setup.close()
    let url = try #require(setup.snapshotURL)
    #expect(FileManager.default.fileExists(atPath: url.path))
    let stale = url.appendingPathExtension("old")
    try FileManager.default.copyItem(at: url, to: stale)

    let shrinking = try MemoryEngine(path: path, configuration: Self.configuration(minimum: 10))
    #expect(shrinking.indexSource == .snapshot)
    for id in ids.prefix(3) { #expect(try await shrinking.memories.forget(kind: .memory, id: id)) }
    let before = try await Self.results(shrinking)
    await shrinking.close()
    #expect(try Self.snapshotFiles(shrinking) == (false, false))

    let reopened = try MemoryEngine(path: path, configuration: Self.configuration(minimum: 10))
    #expect(reopened.indexSource == .database)
    #expect(try reopened.index.count == 9)
    #expect(try await Self.results(reopened) == before)
    await reopened.close()

    // The file from before the shrink, put back (as a backup restore might): its rows are
    // not the database's, so it is ignored and the index comes from the table.
    try FileManager.default.moveItem(at: stale, to: url)
    let restored = try MemoryEngine(path: path, configuration: Self.configuration(minimum: 10))
    defer { restored.close() }
    #expect(restored.indexSource == .database)
    #expect(try restored.index.count == 9)
    for id in ids.prefix(3) { #expect(try !restored.index.contains(VectorKey.make(.memory, id))) }
    #expect(try await Self.results(restored) == before)
  }

  @Test func aReadOnlyEngineLeavesAStaleSnapshotInPlace() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let setup = try MemoryEngine(path: path, configuration: Self.configuration(minimum: 0))
    _ = try await Self.remember(setup, 0..<5)
    await setup.close()
    var configuration = Self.configuration(minimum: 10)
    configuration.readOnly = true
    let reader = try MemoryEngine(path: path, configuration: configuration)
    #expect(reader.indexSource == .snapshot)
    await reader.close()
    #expect(try Self.snapshotFiles(reader).snapshot)
  }

  @Test func theApproximateTierKeepsItsSnapshotAndListsBelowTheMinimum() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("ann.sqlite")
    var configuration = Self.configuration(minimum: 20_000)
    configuration.approximate = ApproximateConfiguration(
      threshold: 300, targetRecall: 0.9, lists: 16, build: .inline, calibrationQueries: 64)
    let engine = try MemoryEngine(path: path, configuration: configuration)
    let turns = (0..<400).map { index in
      ConversationTurn(
        role: "user", content: "topic \(index % 40) note \(index): word\(index % 40) thing\(index)")
    }
    _ = try await engine.conversation.ingest(
      ConversationFile(
        sessions: [ConversationSession(name: "s", startedAt: nil, turns: turns)], format: .jsonl),
      path: "generated")
    await engine.close()
    #expect(try Self.snapshotFiles(engine) == (true, true))

    let reopened = try MemoryEngine(path: path, configuration: configuration)
    defer { reopened.close() }
    #expect(reopened.indexSource == .snapshot)
    #expect(reopened.maintenance.vectorIndexStatistics.approximate?.serving == true)
  }
}
