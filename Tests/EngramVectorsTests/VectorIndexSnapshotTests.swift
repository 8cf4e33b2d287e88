import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramVectors

@Suite("VectorIndex snapshots", .timeLimit(.minutes(5)), .watchdog)
struct VectorIndexSnapshotTests {
  static func temporaryURL(_ name: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-vectors-\(UUID().uuidString)-\(name)")
  }

  static func fixture() throws -> VectorIndex {
    var random = SplitMix64(seed: 31)
    let n = 500
    let index = try VectorIndex(
      configuration: .init(dimension: 10), ids: (0..<n).map { Int64($0) * 3 }, metadata: sampleMetadata(n),
      vectors: random.vectors(n, 10))
    index.remove(ids: [0, 3, 6])
    return index
  }

  @Test func roundTripPreservesSearchesAndMetadata() throws {
    let index = try Self.fixture()
    let url = Self.temporaryURL("round-trip")
    defer { try? FileManager.default.removeItem(at: url) }
    try index.write(snapshotTo: url, token: 42)
    for precision in [VectorPrecision.float32, .int8] {
      let reopened = try VectorIndex.open(
        snapshot: url, expectedToken: 42, configuration: .init(dimension: 10, precision: precision))
      #expect(reopened.count == index.count)
      #expect(reopened.tombstoneCount == 0)
      #expect(!reopened.contains(3))
      #expect(reopened.entry(for: 9)?.metadata == index.entry(for: 9)?.metadata)
      var random = SplitMix64(seed: 1)
      for _ in 0..<5 {
        let query = random.vector(10)
        #expect(try reopened.search(query, k: 8).map(\.id) == index.search(query, k: 8).map(\.id))
        let filter = VectorFilter(kinds: [2], sessions: [2, 5])
        #expect(try reopened.search(query, k: 8, filter: filter) == index.search(query, k: 8, filter: filter))
      }
      // A reopened index accepts writes.
      try reopened.add(id: -5, vector: [Float](repeating: 1, count: 10), metadata: .init(kind: 1))
      #expect(reopened.contains(-5))
    }
    let plain = try VectorIndex.open(snapshot: url, expectedToken: 42)
    #expect(plain.dimension == 10)
  }

  @Test func staleTokenAndDimensionAreTyped() throws {
    let index = try Self.fixture()
    let url = Self.temporaryURL("stale")
    defer { try? FileManager.default.removeItem(at: url) }
    try index.write(snapshotTo: url, token: 7)
    #expect(throws: VectorIndexError.snapshotStale(path: url.path, expected: 8, found: 7)) {
      try VectorIndex.open(snapshot: url, expectedToken: 8)
    }
    #expect(throws: VectorIndexError.snapshotDimensionMismatch(path: url.path, expected: 11, found: 10)) {
      try VectorIndex.open(snapshot: url, expectedToken: 7, configuration: .init(dimension: 11))
    }
  }

  @Test func corruptTruncatedAndMissingFilesAreTyped() throws {
    let index = try Self.fixture()
    let url = Self.temporaryURL("corrupt")
    defer { try? FileManager.default.removeItem(at: url) }
    try index.write(snapshotTo: url, token: 1)
    let original = try Data(contentsOf: url)

    // A damaged vector is found by the full check (doctor); an open maps the vectors
    // without reading them.
    var flipped = original
    flipped[original.count - 5] ^= 0x40
    try flipped.write(to: url)
    #expect(throws: VectorIndexError.snapshotCorrupt(path: url.path, reason: .checksumMismatch)) {
      try VectorIndex.verifySnapshot(url, expectedToken: 1, dimension: 10)
    }
    #expect(try VectorIndex.open(snapshot: url, expectedToken: 1).count == index.count)
    // A damaged row table or header is found by every open.
    var badRow = original
    badRow[4096 + 8] ^= 0x01
    try badRow.write(to: url)
    #expect(throws: VectorIndexError.snapshotCorrupt(path: url.path, reason: .checksumMismatch)) {
      try VectorIndex.open(snapshot: url, expectedToken: 1)
    }
    var badHeader = original
    badHeader[16] ^= 0x01
    try badHeader.write(to: url)
    #expect(throws: VectorIndexError.snapshotCorrupt(path: url.path, reason: .checksumMismatch)) {
      try VectorIndex.open(snapshot: url, expectedToken: 1)
    }

    try original.prefix(original.count - 100).write(to: url)
    #expect(
      throws: VectorIndexError.snapshotCorrupt(
        path: url.path, reason: .lengthMismatch(expected: original.count, actual: original.count - 100))
    ) {
      try VectorIndex.open(snapshot: url, expectedToken: 1)
    }

    try original.prefix(20).write(to: url)
    #expect(
      throws: VectorIndexError.snapshotCorrupt(
        path: url.path, reason: .lengthMismatch(expected: 64, actual: 20))
    ) {
      try VectorIndex.open(snapshot: url, expectedToken: 1)
    }

    var badMagic = original
    badMagic[0] = UInt8(ascii: "X")
    try badMagic.write(to: url)
    #expect(throws: VectorIndexError.snapshotCorrupt(path: url.path, reason: .badMagic)) {
      try VectorIndex.open(snapshot: url, expectedToken: 1)
    }

    var badVersion = original
    badVersion[8] = 9
    try badVersion.write(to: url)
    #expect(throws: VectorIndexError.snapshotCorrupt(path: url.path, reason: .unsupportedVersion(9))) {
      try VectorIndex.open(snapshot: url, expectedToken: 1)
    }

    let missing = Self.temporaryURL("missing")
    #expect(throws: VectorIndexError.snapshotIO(path: missing.path, errno: ENOENT)) {
      try VectorIndex.open(snapshot: missing, expectedToken: 1)
    }
  }

  /// Issue 37, finding 2: an open checks the row table only, so damaged vectors or codes are
  /// found before the first read that trusts them: every search, a snapshot write and an
  /// entry read fail typed (the engine rebuilds from its table), and nothing is re-stamped.
  @Test(arguments: [SnapshotContent.vectors, .codes])
  func damagedPayloadIsFoundBeforeTheFirstSearch(_ content: SnapshotContent) throws {
    var rows = SplitMix64(seed: 31)
    let ids = (0..<500).map { Int64($0) * 3 }
    let vectors = rows.vectors(ids.count, 10)
    let index = try VectorIndex(
      configuration: .init(dimension: 10), ids: ids, metadata: sampleMetadata(ids.count), vectors: vectors)
    let url = Self.temporaryURL("payload")
    let copy = Self.temporaryURL("payload-copy")
    defer {
      try? FileManager.default.removeItem(at: url)
      try? FileManager.default.removeItem(at: copy)
    }
    try index.write(snapshotTo: url, token: 5, content: content)
    let source = TableRowSource(ids: ids, vectors: vectors, dimension: 10)
    let sound = try VectorIndex.open(snapshot: url, expectedToken: 5, rowSource: source)
    var random = SplitMix64(seed: 9)
    let query = random.vector(10)
    #expect(try sound.search(query, k: 5).map(\.id) == index.search(query, k: 5).map(\.id))
    #expect(sound.payloadCheck?.isSound == true)

    // Every payload byte after the row table scrambled, as in the hostile probe.
    var file = try Data(contentsOf: url)
    let payload = SnapshotFormat.payload(
      SnapshotFormat.layout(count: index.count, dimension: 10, codesOnly: content == .codes), dimension: 10)
    var scramble = SplitMix64(seed: 77)
    for column in payload {
      for offset in column.offset..<(column.offset + index.count * column.width) {
        file[offset] = UInt8(truncatingIfNeeded: scramble.next())
      }
    }
    try file.write(to: url)

    let damaged = try VectorIndex.open(snapshot: url, expectedToken: 5, rowSource: source)
    #expect(damaged.count == index.count, "the open reads no payload")
    let corrupt = VectorIndexError.snapshotCorrupt(path: url.path, reason: .checksumMismatch)
    #expect(throws: corrupt) { try damaged.search(query, k: 5) }
    #expect(throws: corrupt) { try damaged.search(query, k: 5, filter: VectorFilter(kinds: [2])) }
    #expect(throws: corrupt) { try damaged.search(query, k: 5, exact: true) }
    #expect(throws: corrupt) { try damaged.search(batch: [query], k: 5) }
    #expect(throws: corrupt) { try damaged.verifyMappedPayload() }
    #expect(damaged.entry(for: 9) == nil)
    // Writes still land (they append), but the damaged rows are never written again.
    try damaged.add(id: -5, vector: [Float](repeating: 1, count: 10), metadata: .init(kind: 1))
    #expect(throws: corrupt) { try damaged.write(snapshotTo: copy, token: 6, content: content) }
    #expect(!FileManager.default.fileExists(atPath: copy.path))
    // The full check (doctor) agrees.
    #expect(throws: corrupt) { try VectorIndex.verifySnapshot(url, expectedToken: 5, dimension: 10) }
  }

  /// An opened snapshot finds its rows by binary search (no id map): removing, replacing
  /// and re-adding them, and filters over them, behave as on the original index.
  @Test func mappedRowsTakeRemovalsReplacementsAndFilters() throws {
    let index = try Self.fixture()
    let url = Self.temporaryURL("mapped")
    defer { try? FileManager.default.removeItem(at: url) }
    try index.write(snapshotTo: url, token: 5)
    let reopened = try VectorIndex.open(snapshot: url, expectedToken: 5)
    for target in [index, reopened] {
      #expect(target.remove(ids: [9, 12, 12, 3]) == 2)
      #expect(!target.contains(9) && !target.contains(12))
      try target.upsert(
        id: 15, vector: [Float](repeating: 1, count: 10), metadata: .init(kind: 1, session: 77))
      try target.add(id: 9, vector: [Float](repeating: -1, count: 10), metadata: .init(kind: 2))
      #expect(throws: VectorIndexError.duplicateID(18)) {
        try target.add(id: 18, vector: [Float](repeating: 1, count: 10), metadata: .init(kind: 1))
      }
    }
    #expect(reopened.count == index.count)
    #expect(reopened.entry(for: 15)?.metadata.session == 77)
    var random = SplitMix64(seed: 9)
    for _ in 0..<5 {
      let query = random.vector(10)
      #expect(try reopened.search(query, k: 10).map(\.id) == index.search(query, k: 10).map(\.id))
      for filter in [
        VectorFilter(sessions: [77]), VectorFilter(kinds: [2]), VectorFilter(ids: [9, 15, 21, 12]),
        VectorFilter(kinds: [1], sessions: [2, 77]),
      ] {
        #expect(
          try reopened.search(query, k: 10, filter: filter) == index.search(query, k: 10, filter: filter))
      }
    }
    // Written again (in id order) and reopened, the same rows come back.
    try reopened.write(snapshotTo: url, token: 6)
    let again = try VectorIndex.open(snapshot: url, expectedToken: 6)
    #expect(again.count == index.count && again.contains(9) && !again.contains(12))
  }

  @Test func emptyIndexRoundTrips() throws {
    let url = Self.temporaryURL("empty")
    defer { try? FileManager.default.removeItem(at: url) }
    try VectorIndex(configuration: .init(dimension: 5)).write(snapshotTo: url, token: 3)
    let reopened = try VectorIndex.open(snapshot: url, expectedToken: 3)
    #expect(reopened.count == 0)
    #expect(try reopened.search([1, 2, 3, 4, 5], k: 3).isEmpty)
  }
}
