import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// `doctor` checks the approximate tier's lists beside the snapshot (header, stamp,
/// every byte) and `--repair` rebuilds them.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct DoctorListsTests {
  func configuration() -> EngramConfiguration {
    var configuration = hashingConfiguration(dimension: 64)
    configuration.approximate = ApproximateConfiguration(
      threshold: 300, targetRecall: 0.9, lists: 16, build: .inline, calibrationQueries: 64)
    return configuration
  }

  /// 400 turns: the lists are built inside the ingest and saved with the snapshot on close.
  func populate(_ path: String) async throws {
    let engine = try MemoryEngine(path: path, configuration: configuration())
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let turns = (0..<400).map { index in
      ConversationTurn(
        role: "user", content: "topic \(index % 40) note \(index): word\(index % 40) thing\(index)",
        speaker: "Ann", timestamp: start.addingTimeInterval(Double(index) * 60))
    }
    let file = ConversationFile(
      sessions: [ConversationSession(name: "s", startedAt: start, turns: turns)], format: .jsonl)
    _ = try await engine.conversation.ingest(file, path: "generated")
    await engine.close()
  }

  @Test func intactListsPassAndDamagedOnesAreFoundAndRebuilt() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    try await populate(path)
    let listsPath = path + ".vectors.lists"
    #expect(FileManager.default.fileExists(atPath: listsPath))

    do {
      let engine = try MemoryEngine(path: path, configuration: configuration())
      defer { engine.close() }
      let report = try await engine.doctor()
      let check = try #require(report.checks.first { $0.name == "lists" })
      #expect(check.ok && check.detail.hasPrefix("16 lists over 400 rows"), "\(check)")
    }

    // A flipped bit in the code sums (the file's last bytes): an open uses them unread.
    var bytes = try Data(contentsOf: URL(fileURLWithPath: listsPath))
    bytes[bytes.count - 2] ^= 0x10
    try bytes.write(to: URL(fileURLWithPath: listsPath))
    let engine = try MemoryEngine(path: path, configuration: configuration())
    defer { engine.close() }
    let report = try await engine.doctor()
    #expect(!report.healthy)
    let check = try #require(report.checks.first { $0.name == "lists" })
    #expect(!check.ok && check.detail.contains("damaged"), "\(check)")
    let repaired = try await engine.doctor(repair: true)
    #expect(repaired.healthy, "\(repaired.checks)")
    #expect(
      repaired.repairs.contains { $0.hasPrefix("lists: rebuilt 16 lists over 400 rows") },
      "\(repaired.repairs)")
    #expect(repaired.checks.first { $0.name == "lists" }?.detail.hasPrefix("16 lists over 400 rows") == true)
  }

  @Test func listsLeftWithoutTheirSnapshotAreFoundAndRebuiltWithIt() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    try await populate(path)
    let engine = try MemoryEngine(path: path, configuration: configuration())
    defer { engine.close() }
    try FileManager.default.removeItem(atPath: path + ".vectors")
    let report = try await engine.doctor()
    #expect(report.checks.first { $0.name == "lists" }?.ok == false)
    let repaired = try await engine.doctor(repair: true)
    #expect(repaired.healthy, "\(repaired.checks)")
    #expect(FileManager.default.fileExists(atPath: path + ".vectors"))
    #expect(repaired.checks.first { $0.name == "lists" }?.detail.hasPrefix("16 lists over 400 rows") == true)
  }
}
