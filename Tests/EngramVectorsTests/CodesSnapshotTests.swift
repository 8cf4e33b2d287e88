import EngramCore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramVectors

/// A store stand-in: the raw (unnormalized) rows by id, counting the rows it is asked for.
final class TableRowSource: FloatRowSource {
  let rows: Mutex<[Int64: [Float]]>
  let asked = Atomic<Int>(0)
  let failing = Atomic<Bool>(false)

  init(ids: [Int64], vectors: [Float], dimension: Int) {
    var table: [Int64: [Float]] = [:]
    for (row, id) in ids.enumerated() {
      table[id] = Array(vectors[(row * dimension)..<((row + 1) * dimension)])
    }
    rows = Mutex(table)
  }

  struct Unavailable: Error {}

  func floatRows(for ids: [Int64]) throws -> [[Float]?] {
    if failing.load(ordering: .relaxed) { throw Unavailable() }
    asked.wrappingAdd(ids.count, ordering: .relaxed)
    return rows.withLock { table in ids.map { table[$0] } }
  }

  func set(_ id: Int64, _ vector: [Float]?) { rows.withLock { $0[id] = vector } }
}

/// Snapshots of int8 codes (format 3): no float32 rows on disk, the same hits and scores as
/// the float32 scan, float32 re-ranks read from the source.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct CodesSnapshotTests {
  static let dimension = 24

  static func directory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("codes-\(UUID())")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Rows with exact duplicates (ties) and a few near-duplicates, ids not in row order.
  static func rows(_ n: Int, seed: UInt64) -> (ids: [Int64], vectors: [Float]) {
    var random = SplitMix64(seed: seed)
    var vectors = random.vectors(n, dimension)
    for row in stride(from: 7, to: n, by: 13) {
      // Copies of row 0..: equal scores, told apart by id only.
      for j in 0..<dimension { vectors[row * dimension + j] = vectors[(row % 7) * dimension + j] * 2 }
    }
    let ids = (0..<n).map { Int64(($0 * 7919) % 100_003 + 1) }
    return (ids, vectors)
  }

  /// A float32 index and the same rows reopened from a codes snapshot with a source.
  static func pair(n: Int, seed: UInt64, removed: Int = 0) throws -> (
    float32: VectorIndex, codes: VectorIndex, source: TableRowSource, directory: URL
  ) {
    let (ids, vectors) = rows(n, seed: seed)
    let metadata = sampleMetadata(n)
    let configuration = VectorIndex.Configuration(
      dimension: dimension, approximate: ApproximateConfiguration(enabled: false))
    let float32 = try VectorIndex(
      configuration: configuration, ids: ids, metadata: metadata, vectors: vectors)
    let gone = Array(ids.prefix(removed))
    float32.remove(ids: gone)
    let source = TableRowSource(ids: ids, vectors: vectors, dimension: dimension)
    for id in gone { source.set(id, nil) }
    let folder = try directory()
    let file = folder.appendingPathComponent("v.snapshot")
    try float32.write(snapshotTo: file, token: 5, content: .codes)
    let codes = try VectorIndex.open(
      snapshot: file, expectedToken: 5, configuration: configuration, rowSource: source)
    return (float32, codes, source, folder)
  }

  static func expectSame(
    _ a: VectorIndex, _ b: VectorIndex, queries: [[Float]], ks: [Int], filter: VectorFilter? = nil
  )
    throws
  {
    for query in queries {
      for k in ks {
        let expected = try a.search(query, k: k, filter: filter)
        let found = try b.search(query, k: k, filter: filter)
        // Same ids in the same order, bit-equal scores.
        #expect(found == expected, "k \(k) filter \(String(describing: filter))")
      }
    }
  }

  @Test func sameHitsAndScoresAsTheFloat32Scan() throws {
    let (float32, codes, source, folder) = try Self.pair(n: 3000, seed: 21, removed: 40)
    defer { try? FileManager.default.removeItem(at: folder) }
    #expect(codes.readsFloatRowsFromSource)
    #expect(codes.count == float32.count)
    var random = SplitMix64(seed: 5)
    var queries = (0..<25).map { _ in random.vector(Self.dimension) }
    // Queries equal to duplicated rows: the ties sit right at the top.
    let (_, vectors) = Self.rows(3000, seed: 21)
    queries.append(Array(vectors[(3 * Self.dimension)..<(4 * Self.dimension)]))
    try Self.expectSame(float32, codes, queries: queries, ks: [1, 10, 50, 3000, 5000])
    // Only candidates are read from the source, not the rows.
    let before = source.asked.load(ordering: .relaxed)
    _ = try codes.search(queries[0], k: 10)
    let read = source.asked.load(ordering: .relaxed) - before
    #expect(read > 0 && read < 300)
  }

  @Test func filtersAppendsDeletesAndCompaction() throws {
    let (float32, codes, source, folder) = try Self.pair(n: 2500, seed: 33, removed: 10)
    defer { try? FileManager.default.removeItem(at: folder) }
    var random = SplitMix64(seed: 6)
    let queries = (0..<12).map { _ in random.vector(Self.dimension) }
    let filters = [
      VectorFilter(kinds: [1]), VectorFilter(sessions: [3, 4]), VectorFilter(scopes: [2]),
      VectorFilter(timeRange: 1500...2600), VectorFilter(kinds: [0], sessions: [1], timeRange: 1000...1200),
      VectorFilter(ids: [8_000_001, 7920, 15_839]),
    ]
    for filter in filters {
      try Self.expectSame(float32, codes, queries: queries, ks: [1, 10, 400], filter: filter)
    }

    // Rows appended after the snapshot (some replacing file rows), rows removed from it.
    let extra = random.vectors(300, Self.dimension)
    let extraIDs = (0..<300).map { Int64(8_000_000 + $0) }
    let metadata = sampleMetadata(300)
    for index in [float32, codes] { try index.add(ids: extraIDs, metadata: metadata, vectors: extra) }
    // The store holds what the index is told (read back once a snapshot holds them as codes).
    for (offset, id) in extraIDs.enumerated() {
      source.set(id, Array(extra[(offset * Self.dimension)..<((offset + 1) * Self.dimension)]))
    }
    let replaced = (7920 as Int64)
    let replacement = random.vector(Self.dimension)
    for index in [float32, codes] {
      try index.upsert(id: replaced, vector: replacement, metadata: VectorMetadata(kind: 2, session: 9))
    }
    source.set(replaced, replacement)
    let (ids, _) = Self.rows(2500, seed: 33)
    let removed = Array(ids[100..<160])
    for index in [float32, codes] { index.remove(ids: removed) }
    for id in removed { source.set(id, nil) }
    try Self.expectSame(float32, codes, queries: queries, ks: [1, 10, 300])
    for filter in filters {
      try Self.expectSame(float32, codes, queries: queries, ks: [5, 100], filter: filter)
    }
    // A floatless batch runs the proven single search per query (float32's batch GEMM
    // rounds differently, so the reference is the single float32 search).
    #expect(try codes.search(batch: queries, k: 7) == queries.map { try float32.search($0, k: 7) })
    #expect(codes.entry(for: replaced)?.vector == float32.entry(for: replaced)?.vector)
    // Metadata alone never asks the source.
    let asked = source.asked.load(ordering: .relaxed)
    #expect(codes.metadata(for: ids[7]) == float32.entry(for: ids[7])?.metadata)
    #expect(codes.metadata(for: removed[0]) == nil)
    #expect(source.asked.load(ordering: .relaxed) == asked)
    #expect(codes.entry(for: ids[5])?.vector == float32.entry(for: ids[5])?.vector)

    // Compaction keeps the floatless prefix a prefix (the file held no removed rows).
    #expect(codes.compact() == 60)
    #expect(float32.compact() == 70)
    try Self.expectSame(float32, codes, queries: queries, ks: [1, 10, 300])

    // Written again (codes only: it holds no float32 rows) and reopened.
    let file = folder.appendingPathComponent("again.snapshot")
    try codes.write(snapshotTo: file, token: 9)
    let again = try VectorIndex.open(
      snapshot: file, expectedToken: 9, configuration: codes.configuration, rowSource: source)
    try Self.expectSame(float32, again, queries: queries, ks: [1, 10, 300])
  }

  @Test func aQuarterOfTheBytesAndCheckedByDoctor() throws {
    let (float32, _, _, folder) = try Self.pair(n: 2000, seed: 44)
    defer { try? FileManager.default.removeItem(at: folder) }
    let vectorsFile = folder.appendingPathComponent("f.snapshot")
    let codesFile = folder.appendingPathComponent("c.snapshot")
    try float32.write(snapshotTo: vectorsFile, token: 1)
    try float32.write(snapshotTo: codesFile, token: 1, content: .codes)
    func size(_ url: URL) throws -> Int {
      try #require(FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
    }
    // Payload: 2000 x 24 floats (192,000 bytes) against 2000 x (24 + 8) bytes of codes.
    #expect(try size(vectorsFile) - size(codesFile) > 120_000)

    // Without a source the codes cannot be re-ranked: refused, typed.
    #expect(throws: VectorIndexError.self) { try VectorIndex.open(snapshot: codesFile, expectedToken: 1) }
    do {
      _ = try VectorIndex.open(snapshot: codesFile, expectedToken: 1)
    } catch {
      guard case .floatRowsUnavailable = error else {
        Issue.record("unexpected \(error)")
        return
      }
    }
    // Stale tokens are refused as before.
    #expect(throws: VectorIndexError.snapshotStale(path: codesFile.path, expected: 2, found: 1)) {
      try VectorIndex.open(
        snapshot: codesFile, expectedToken: 2, rowSource: TableRowSource(ids: [], vectors: [], dimension: 1))
    }
    // doctor's full check reads every code; a flipped code byte is damage.
    try VectorIndex.verifySnapshot(codesFile, expectedToken: 1, dimension: Self.dimension)
    var bytes = try Data(contentsOf: codesFile)
    let layout = SnapshotFormat.layout(count: 2000, dimension: Self.dimension, codesOnly: true)
    bytes[layout.codes + 4321] ^= 0x40
    try bytes.write(to: codesFile)
    #expect(throws: VectorIndexError.snapshotCorrupt(path: codesFile.path, reason: .checksumMismatch)) {
      try VectorIndex.verifySnapshot(codesFile, expectedToken: 1, dimension: Self.dimension)
    }
    // The format versions: 2 holds float32 rows, 3 codes.
    #expect(try Data(contentsOf: vectorsFile)[8] == 2)
    #expect(bytes[8] == 3)
  }

  @Test func anEmptySnapshotOfCodesTakesAppends() throws {
    let folder = try Self.directory()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("empty.snapshot")
    let configuration = VectorIndex.Configuration(dimension: Self.dimension)
    try VectorIndex(configuration: configuration).write(snapshotTo: file, token: 1, content: .codes)
    let (ids, vectors) = Self.rows(200, seed: 66)
    let source = TableRowSource(ids: ids, vectors: vectors, dimension: Self.dimension)
    let codes = try VectorIndex.open(snapshot: file, expectedToken: 1, rowSource: source)
    #expect(codes.count == 0)
    let float32 = try VectorIndex(configuration: configuration)
    for index in [codes, float32] { try index.add(ids: ids, metadata: sampleMetadata(200), vectors: vectors) }
    var random = SplitMix64(seed: 2)
    try Self.expectSame(
      float32, codes, queries: (0..<5).map { _ in random.vector(Self.dimension) }, ks: [1, 20])
  }

  @Test func aFailingSourceFailsTheSearchTyped() throws {
    let (_, codes, source, folder) = try Self.pair(n: 500, seed: 55)
    defer { try? FileManager.default.removeItem(at: folder) }
    source.failing.store(true, ordering: .relaxed)
    var random = SplitMix64(seed: 1)
    do {
      _ = try codes.search(random.vector(Self.dimension), k: 5)
      Issue.record("the search succeeded without its rows")
    } catch {
      guard case .floatRowsUnavailable = error else {
        Issue.record("unexpected \(error)")
        return
      }
    }
  }

  @Test func theApproximateTierReRanksFromTheSource() throws {
    let n = 6000
    let vectors = clusteredVectors(n: n, dimension: Self.dimension, clusters: 60, noise: 0.6, seed: 11)
    let ids = (0..<n).map { Int64($0 + 1) }
    let metadata = (0..<n).map { VectorMetadata(kind: UInt8($0 % 2), session: Int64($0 % 50)) }
    let configuration = VectorIndex.Configuration(
      dimension: Self.dimension, approximate: ApproximateConfiguration(threshold: 1000, build: .inline))
    let index = try VectorIndex(configuration: configuration, ids: ids, metadata: metadata, vectors: vectors)
    let folder = try Self.directory()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("v.snapshot")
    try index.write(snapshotTo: file, token: 3, content: .codes)
    let source = TableRowSource(ids: ids, vectors: vectors, dimension: Self.dimension)
    let manual = VectorIndex.Configuration(
      dimension: Self.dimension, approximate: ApproximateConfiguration(threshold: 1000, build: .manual))
    let codes = try VectorIndex.open(
      snapshot: file, expectedToken: 3, configuration: manual, rowSource: source)
    #expect(codes.approximateStatus?.serving == true)
    var random = SplitMix64(seed: 8)
    let queries = (0..<30).map { q in
      (0..<Self.dimension).map { vectors[q * 37 * Self.dimension + $0] + 0.3 * random.nextGaussian() }
    }
    for query in queries {
      let old = try index.search(query, k: 10, filter: nil, exact: false)
      let new = try codes.search(query, k: 10, filter: nil, exact: false)
      #expect(new.tier == .approximate)
      #expect(new.hits == old.hits && new.isExact == old.isExact)
      #expect(
        try codes.search(query, k: 10, filter: nil, exact: true).hits
          == index.search(query, k: 10, filter: nil, exact: true).hits)
      let filter = VectorFilter(sessions: [4])
      #expect(
        try codes.search(query, k: 5, filter: filter, exact: false).hits
          == index.search(query, k: 5, filter: filter, exact: true).hits)
    }
    // Re-clustering a floatless index reads its rows from the source first.
    codes.rebuildApproximateIndex()
    #expect(codes.approximateStatus?.serving == true)
    for query in queries {
      let found = try codes.search(query, k: 10, filter: nil, exact: false)
      let truth = try index.search(query, k: 10, filter: nil, exact: true)
      if found.isExact { #expect(found.hits == truth.hits) }
      #expect(Set(found.hits.map(\.id)).intersection(truth.hits.map(\.id)).count >= 8)
    }
  }
}
