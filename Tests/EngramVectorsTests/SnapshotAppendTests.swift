import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramVectors

/// Issue 15: a lagging snapshot is brought up to date by appending to the opened index;
/// the appends go after the mapped rows (no copy of them) and never into the file.
@Suite("VectorIndex appends to an opened snapshot", .timeLimit(.minutes(5)), .watchdog)
struct SnapshotAppendTests {
  @Test func appendsGoAfterTheMappedRowsWithoutCopyingThemOrWritingTheFile() throws {
    let index = try VectorIndexSnapshotTests.fixture()
    let url = VectorIndexSnapshotTests.temporaryURL("append")
    defer { try? FileManager.default.removeItem(at: url) }
    try index.write(snapshotTo: url, token: 5)
    let bytes = try Data(contentsOf: url)
    let reopened = try VectorIndex.open(snapshot: url, expectedToken: 5)

    var random = SplitMix64(seed: 77)
    let added = random.vectors(20, 10)
    let ids = (0..<20).map { Int64(10_000 + $0) }
    try reopened.upsert(ids: ids, metadata: sampleMetadata(20), vectors: added)
    try index.upsert(ids: ids, metadata: sampleMetadata(20), vectors: added)
    let replaced = random.vector(10)
    try reopened.upsert(id: 9, vector: replaced, metadata: .init(kind: 1))
    try index.upsert(id: 9, vector: replaced, metadata: .init(kind: 1))
    #expect(reopened.remove(id: 12) && index.remove(id: 12))

    // Still the mapped store: nothing was copied.
    #expect(reopened.snapshot().rows.mapping != nil)
    #expect(try Data(contentsOf: url) == bytes)
    #expect(reopened.count == index.count)
    for _ in 0..<5 {
      let query = random.vector(10)
      #expect(try reopened.search(query, k: 10).map(\.id) == index.search(query, k: 10).map(\.id))
    }
    #expect(try reopened.search(replaced, k: 1).first?.id == 9)

    // Past the room after the mapped rows, appends copy into allocated rows, as before.
    let many = 5_000
    try reopened.add(
      ids: (0..<many).map { Int64(50_000 + $0) }, metadata: sampleMetadata(many),
      vectors: random.vectors(many, 10))
    #expect(reopened.snapshot().rows.mapping == nil)
    #expect(reopened.count == index.count + many)
    #expect(reopened.entry(for: 10_003)?.vector == index.entry(for: 10_003)?.vector)
    #expect(try Data(contentsOf: url) == bytes)
  }
}
