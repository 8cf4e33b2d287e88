import EngramCore
import EngramTestSupport
import EngramVectors
import Foundation
import Testing

/// The approximate tier: calibrated recall, sound exactness claims, filters that still return
/// k hits, incremental writes, compaction and the size threshold.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ApproximateIndexTests {
  static let dimension = 32
  static let n = 6000

  /// Rows from 60 clusters (so lists mean something), ids 1..., sessions 0..<50.
  static func makeIndex(
    n: Int = ApproximateIndexTests.n, threshold: Int = 1000, target: Double = 0.95,
    build: BuildPolicy = .inline,
    noise: Float = 0.6, seed: UInt64 = 11
  ) throws -> (VectorIndex, [Float]) {
    let vectors = clusteredVectors(n: n, dimension: dimension, clusters: 60, noise: noise, seed: seed)
    let ids = (0..<n).map { Int64($0 + 1) }
    let metadata = (0..<n).map { (row: Int) -> VectorMetadata in
      let kind: UInt8 = row % 100 == 0 ? 2 : 0
      return VectorMetadata(kind: kind, session: Int64(row % 50), timestamp: Int64(row))
    }
    let configuration = VectorIndex.Configuration(
      dimension: dimension,
      approximate: ApproximateConfiguration(threshold: threshold, targetRecall: target, build: build))
    let index = try VectorIndex(configuration: configuration, ids: ids, metadata: metadata, vectors: vectors)
    return (index, vectors)
  }

  static func queries(_ count: Int, seed: UInt64 = 99) -> [[Float]] {
    // The first rows of the index's seed (same centres), moved by fresh noise.
    let flat = clusteredVectors(n: count, dimension: dimension, clusters: 60, noise: 0.6, seed: 11)
    var random = SplitMix64(seed: seed)
    return (0..<count).map { q in
      (0..<dimension).map { flat[q * dimension + $0] + 0.3 * random.nextGaussian() }
    }
  }

  static func recall(_ found: [VectorHit], _ truth: [VectorHit]) -> Double {
    Double(Set(found.map(\.id)).intersection(truth.map(\.id)).count) / Double(truth.count)
  }

  @Test func buildsCalibratesAndMeetsTheTargetOnFreshQueries() throws {
    let (index, _) = try Self.makeIndex()
    let status = try #require(index.approximateStatus)
    #expect(status.serving)
    #expect(status.lists == Int((2 * Double(Self.n).squareRoot()).rounded()))
    #expect(status.calibratedRecall >= 0.95)
    #expect(status.probes >= 1 && status.probes < status.lists)
    var sum = 0.0
    let queries = Self.queries(200)
    for query in queries {
      let approximate = try index.search(query, k: 10, filter: nil, exact: false)
      let exact = try index.search(query, k: 10, filter: nil, exact: true)
      #expect(approximate.tier == .approximate)
      #expect(exact.tier == .exact && exact.isExact)
      #expect(approximate.hits.count == 10)
      sum += Self.recall(approximate.hits, exact.hits)
      // The plain search uses the approximate tier too.
      #expect(try index.search(query, k: 10) == approximate.hits)
    }
    // Calibrated on rows, measured on fresh queries: allow the sampling error of 128 queries.
    #expect(sum / Double(queries.count) >= 0.9)
  }

  @Test func aHigherTargetProbesMoreAndRecallsMore() throws {
    let (index, _) = try Self.makeIndex(target: 0.8)
    let low = try #require(index.approximateStatus)
    let high = try #require(try index.calibrateApproximate(targetRecall: 0.999))
    #expect(high.probes > low.probes)
    #expect(high.calibratedRecall >= 0.999)
    #expect(throws: VectorIndexError.self) { try index.calibrateApproximate(targetRecall: 0) }
  }

  @Test func exactClaimsAreTrueAndTightClustersProveThem() throws {
    // Tight, well-separated clusters: the list bound proves most results exact.
    let (index, _) = try Self.makeIndex(noise: 0.05)
    var proven = 0
    for query in Self.queries(100) {
      let result = try index.search(query, k: 5, filter: nil, exact: false)
      let exact = try index.search(query, k: 5, filter: nil, exact: true)
      if result.isExact {
        proven += 1
        #expect(result.hits.map(\.id) == exact.hits.map(\.id))
      }
    }
    #expect(proven > 0)
    // Diffuse data: claims are rarer but never false.
    let (diffuse, _) = try Self.makeIndex(noise: 3)
    for query in Self.queries(100) {
      let result = try diffuse.search(query, k: 10, filter: nil, exact: false)
      if result.isExact {
        #expect(
          result.hits.map(\.id) == (try diffuse.search(query, k: 10, filter: nil, exact: true)).hits.map(\.id)
        )
      }
    }
  }

  @Test(arguments: [
    VectorFilter(kinds: [2]),  // 1%: scored exactly
    VectorFilter(sessions: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22]),  // 40%
    VectorFilter(timeRange: 0...5999, ids: nil),
  ])
  func filteredSearchReturnsKAdmittedHits(filter: VectorFilter) throws {
    let (index, _) = try Self.makeIndex()
    var sum = 0.0
    let queries = Self.queries(100)
    for query in queries {
      let result = try index.search(query, k: 10, filter: filter, exact: false)
      let exact = try index.search(query, k: 10, filter: filter, exact: true)
      #expect(result.hits.count == 10)
      for hit in result.hits {
        let metadata = try #require(index.entry(for: hit.id)).metadata
        #expect(filter.kinds?.contains(metadata.kind) ?? true)
        #expect(filter.sessions?.contains(metadata.session) ?? true)
      }
      sum += Self.recall(result.hits, exact.hits)
    }
    #expect(sum / Double(queries.count) >= 0.9)
  }

  @Test func aFilterWhoseRowsAreFarStillGetsK() throws {
    let (index, _) = try Self.makeIndex()
    // Only 12 rows of session 7 with timestamps below 700: mostly outside the nearest lists.
    let filter = VectorFilter(sessions: [7], timeRange: 0...699)
    for query in Self.queries(20) {
      let result = try index.search(query, k: 10, filter: filter, exact: false)
      #expect(result.hits.count == 10)
      #expect(result.hits == (try index.search(query, k: 10, filter: filter, exact: true)).hits)
    }
  }

  @Test func insertsAndDeletesWithoutRebuildThenReclusterOnDrift() throws {
    let (index, vectors) = try Self.makeIndex()
    let before = try #require(index.approximateStatus)
    // New rows: found by their own vectors, through the lists.
    var random = SplitMix64(seed: 5)
    let fresh = (0..<200).map { _ in random.vector(Self.dimension) }
    for (offset, vector) in fresh.enumerated() {
      try index.add(id: 100_000 + Int64(offset), vector: vector, metadata: VectorMetadata(kind: 1))
    }
    let after = try #require(index.approximateStatus)
    #expect(after.clusteredRows == before.clusteredRows)
    #expect(after.appendedRows == 200)
    for (offset, vector) in fresh.enumerated() {
      let result = try index.search(vector, k: 1, filter: nil, exact: false)
      #expect(result.tier == .approximate)
      #expect(result.hits.first?.id == 100_000 + Int64(offset))
    }
    // Deleted rows never come back.
    let removed = (1...300).map { Int64($0) }
    #expect(index.remove(ids: removed) == 300)
    for row in 0..<300 {
      let query = Array(vectors[(row * Self.dimension)..<((row + 1) * Self.dimension)])
      let hits = try index.search(query, k: 10, filter: nil, exact: false).hits
      #expect(hits.allSatisfy { $0.id > 300 })
    }
    // As many rows again (200 + 5800 appended to 6000): the write that crosses it
    // re-clusters (inline policy).
    let batch = clusteredVectors(n: 5800, dimension: Self.dimension, clusters: 60, noise: 0.6, seed: 12)
    try index.add(
      ids: (0..<5800).map { 200_000 + Int64($0) },
      metadata: Array(repeating: VectorMetadata(kind: 0), count: 5800),
      vectors: batch)
    let reclustered = try #require(index.approximateStatus)
    #expect(reclustered.clusteredRows == index.count)
    #expect(reclustered.appendedRows == 0)
  }

  @Test func compactionKeepsTheListsOverTheLiveRows() throws {
    let (index, vectors) = try Self.makeIndex()
    index.remove(ids: (1...Int64(Self.n)).filter { $0 % 2 == 0 })
    #expect(index.compact() == Self.n / 2)
    let status = try #require(index.approximateStatus)
    #expect(status.serving)
    for row in stride(from: 0, to: Self.n, by: 37) {
      let query = Array(vectors[(row * Self.dimension)..<((row + 1) * Self.dimension)])
      let hits = try index.search(query, k: 10, filter: nil, exact: false).hits
      #expect(hits.allSatisfy { $0.id % 2 == 1 })
      if row % 2 == 0 { #expect(hits.first?.id == Int64(row + 1)) }
    }
  }

  @Test func belowTheThresholdTheExactScanServes() throws {
    let (index, _) = try Self.makeIndex(threshold: Self.n + 1)
    #expect(index.approximateStatus == nil)
    let result = try index.search(Self.queries(1)[0], k: 5, filter: nil, exact: false)
    #expect(result.tier == .exact && result.isExact)
    // Manual: never builds on its own, serves once asked.
    let (manual, _) = try Self.makeIndex(build: .manual)
    #expect(manual.approximateStatus == nil)
    manual.rebuildApproximateIndex()
    #expect(manual.approximateStatus?.serving == true)
  }

  @Test func backgroundBuildPublishesLists() async throws {
    let (index, _) = try Self.makeIndex(build: .background)
    for _ in 0..<600 where index.approximateStatus == nil { try await Task.sleep(for: .milliseconds(50)) }
    #expect(index.approximateStatus?.serving == true)
  }

  /// Drift under the background policy: the write that crosses it returns at once, searches
  /// keep serving from the previous lists, rows written during the build join the new lists.
  @Test func driftReclustersInTheBackgroundWhileSearchesServe() async throws {
    let (index, _) = try Self.makeIndex(build: .background)
    for _ in 0..<600 where index.approximateStatus == nil { try await Task.sleep(for: .milliseconds(50)) }
    let first = try #require(index.approximateStatus)
    #expect(first.clusteredRows == Self.n)
    let d = Self.dimension
    let batch = clusteredVectors(n: Self.n, dimension: d, clusters: 60, noise: 0.6, seed: 13)
    try index.add(
      ids: (0..<Self.n).map { 300_000 + Int64($0) },
      metadata: Array(repeating: VectorMetadata(kind: 0), count: Self.n), vectors: batch)
    var random = SplitMix64(seed: 21)
    let late = (0..<50).map { _ in random.vector(d) }
    for (offset, vector) in late.enumerated() {
      try index.add(id: 400_000 + Int64(offset), vector: vector, metadata: VectorMetadata(kind: 1))
      let served = try index.search(vector, k: 1, filter: nil, exact: false)
      #expect(served.tier == .approximate && served.hits.first?.id == 400_000 + Int64(offset))
    }
    for _ in 0..<1200 where (index.approximateStatus?.clusteredRows ?? 0) < 2 * Self.n {
      try await Task.sleep(for: .milliseconds(50))
    }
    let status = try #require(index.approximateStatus)
    #expect(status.clusteredRows >= 2 * Self.n)
    #expect(status.clusteredRows + status.appendedRows == index.count)
    #expect(status.lists == Int((2 * Double(status.clusteredRows).squareRoot()).rounded()))
    // The approximate tier promises its calibrated recall (0.95), not every row: lists are
    // chosen by int8 centroid scores, and for a random row far from every centroid those
    // scores lie so close that its own list (nearest in float32) can fall just outside the
    // probed ones (one of 50 once, under the full parallel run's interleaving).
    var found = 0
    for (offset, vector) in late.enumerated()
    where try index.search(vector, k: 1, filter: nil, exact: false).hits.first?.id == 400_000 + Int64(offset)
    {
      found += 1
    }
    #expect(found >= 48, "\(found) of 50 rows written during the build found after it")
    let row = 17
    let query = Array(batch[(row * d)..<((row + 1) * d)])
    #expect(try index.search(query, k: 1, filter: nil, exact: false).hits.first?.id == 300_000 + Int64(row))
  }

  @Test func badSettingsAreRefused() {
    #expect(throws: VectorIndexError.invalidConfiguration(field: "approximate.threshold", value: 0)) {
      try VectorIndex(
        configuration: .init(dimension: 4, approximate: ApproximateConfiguration(threshold: 0)))
    }
    #expect(throws: VectorIndexError.self) {
      try VectorIndex(
        configuration: .init(dimension: 4, approximate: ApproximateConfiguration(targetRecall: 1.5)))
    }
  }

  @Test func listsPersistBesideTheSnapshotAndReopenMapped() throws {
    let (index, _) = try Self.makeIndex()
    index.remove(ids: [5, 6, 7])
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ann-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("v.snapshot")
    try index.write(snapshotTo: file, token: 7)
    #expect(FileManager.default.fileExists(atPath: file.path + ".lists"))
    let configuration = VectorIndex.Configuration(
      dimension: Self.dimension, approximate: ApproximateConfiguration(threshold: 1000, build: .manual))
    let reopened = try VectorIndex.open(snapshot: file, expectedToken: 7, configuration: configuration)
    let before = try #require(index.approximateStatus)
    let after = try #require(reopened.approximateStatus)
    #expect(after.lists == before.lists && after.probes == before.probes)
    #expect(after.calibratedRecall == before.calibratedRecall)
    for query in Self.queries(50) {
      let old = try index.search(query, k: 10, filter: nil, exact: false)
      let new = try reopened.search(query, k: 10, filter: nil, exact: false)
      #expect(new.tier == .approximate)
      #expect(new.hits == old.hits)
    }
    // Appends after the open copy the mapped list they join.
    try reopened.add(
      id: 777_777, vector: Self.queries(1, seed: 3)[0], metadata: VectorMetadata(kind: 1))
    #expect(
      try reopened.search(Self.queries(1, seed: 3)[0], k: 1, filter: nil, exact: false).hits.first?.id
        == 777_777)
  }

  @Test func listsOfAnotherSnapshotAreIgnored() throws {
    let (index, _) = try Self.makeIndex()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ann-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("v.snapshot")
    try index.write(snapshotTo: file, token: 1)
    let lists = try Data(contentsOf: URL(fileURLWithPath: file.path + ".lists"))
    // As after a crash between the two renames: a newer snapshot beside older lists.
    index.remove(ids: [1])
    try index.write(snapshotTo: file, token: 2)
    try lists.write(to: URL(fileURLWithPath: file.path + ".lists"))
    let configuration = VectorIndex.Configuration(
      dimension: Self.dimension, approximate: ApproximateConfiguration(threshold: 1000, build: .manual))
    let reopened = try VectorIndex.open(snapshot: file, expectedToken: 2, configuration: configuration)
    #expect(reopened.approximateStatus == nil)
    #expect(try reopened.search(Self.queries(1)[0], k: 3, filter: nil, exact: false).tier == .exact)
    // A damaged lists file is ignored too (the snapshot itself opens).
    var damaged = try Data(contentsOf: URL(fileURLWithPath: file.path + ".lists"))
    try index.write(snapshotTo: file, token: 2)
    damaged = try Data(contentsOf: URL(fileURLWithPath: file.path + ".lists"))
    damaged[5000] ^= 0xFF
    try damaged.write(to: URL(fileURLWithPath: file.path + ".lists"))
    let again = try VectorIndex.open(snapshot: file, expectedToken: 2, configuration: configuration)
    #expect(again.approximateStatus == nil)
    #expect(again.count == index.count)
  }
}
