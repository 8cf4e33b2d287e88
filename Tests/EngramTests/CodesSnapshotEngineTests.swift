import EngramEmbeddings
import EngramTestSupport
import EngramVectors
import Foundation
import Testing

@testable import Engram

/// Issue 20: each vector stored once at full precision. The `.vectors` snapshot holds int8
/// codes (format 3), the float32 rows stay in the database only, and a memory opened from
/// the snapshot answers exactly as one loaded from the embeddings table.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct CodesSnapshotEngineTests {
  static func configuration() -> EngramConfiguration {
    SnapshotThresholdTests.configuration(minimum: 1)
  }

  @Test func theSnapshotHoldsCodesAndSearchesAsTheTableDoes() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let writer = try MemoryEngine(path: path, configuration: Self.configuration())
    let ids = try await SnapshotThresholdTests.remember(writer, 0..<80)
    #expect(try await writer.memories.forget(kind: .memory, id: ids[3]))
    await writer.close()

    let file = URL(fileURLWithPath: path + ".vectors")
    let bytes = try Data(contentsOf: file)
    #expect(bytes[8] == 3)  // format 3: codes
    // 79 rows of 64 components: header and row table in 6 pages, then codes (5,056 bytes),
    // scales and sums a page each (4-byte rows) where float32 rows would take 20,224 bytes.
    let expected = 9 * 4096 + 79 * 4
    #expect(bytes.count == expected)

    let mapped = try MemoryEngine(path: path, configuration: Self.configuration())
    #expect(mapped.indexSource == .snapshot)
    // Rows written after the snapshot and a row of it forgotten, on the mapped index.
    let late = try await SnapshotThresholdTests.remember(mapped, 80..<90)
    #expect(try await mapped.memories.forget(kind: .memory, id: ids[10]))
    #expect(try await mapped.memories.forget(kind: .memory, id: late[2]))
    let fromSnapshot = try await SnapshotThresholdTests.results(mapped)
    let report = try await mapped.doctor()
    #expect(report.healthy, "\(report.checks)")
    await mapped.close()

    // The same memory loaded from the table (no snapshot file).
    try FileManager.default.removeItem(at: file)
    try? FileManager.default.removeItem(atPath: path + ".vectors.lists")
    let loaded = try MemoryEngine(path: path, configuration: Self.configuration())
    #expect(loaded.indexSource == .database)
    #expect(try await SnapshotThresholdTests.results(loaded) == fromSnapshot)
    await loaded.close()

    // Reopened from the snapshot the last engine wrote (replayed or current).
    let again = try MemoryEngine(path: path, configuration: Self.configuration())
    defer { again.close() }
    #expect(again.indexSource == .snapshot)
    #expect(try await SnapshotThresholdTests.results(again) == fromSnapshot)
  }
}
