import EngramTestSupport
import EngramVectors
import Foundation
import Testing

/// A selective filter on the approximate tier scores exactly the rows it admits, through
/// appends, deletes and compaction, whatever the scores look like; the clustering may share
/// its GEMM blocks among threads.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ApproximateFilterTests {
  typealias Fixture = ApproximateIndexTests

  /// The same hits, in the same order, as the exact filtered scan.
  static func expectExact(_ index: VectorIndex, _ filter: VectorFilter, queries: [[Float]], k: Int = 10)
    throws
  {
    for query in queries {
      let result = try index.search(query, k: k, filter: filter, exact: false)
      let exact = try index.search(query, k: k, filter: filter, exact: true)
      #expect(result.isExact)
      #expect(result.hits.map(\.id) == exact.hits.map(\.id))
      #expect(result.hits.count == exact.hits.count)
    }
  }

  @Test func aSelectiveFilterIsExactThroughAppendsDeletesAndCompaction() throws {
    let (index, _) = try Fixture.makeIndex()
    let filter = VectorFilter(kinds: [2])  // 1% of the rows
    try Self.expectExact(index, filter, queries: Fixture.queries(60))

    // Rows appended after the lists were built (kind 2, near the queries) are found.
    let fresh = Fixture.queries(30, seed: 4)
    try index.add(
      ids: (0..<30).map { 500_000 + Int64($0) },
      metadata: Array(repeating: VectorMetadata(kind: 2), count: 30), vectors: fresh.flatMap { $0 })
    for (offset, vector) in fresh.enumerated() {
      let result = try index.search(vector, k: 10, filter: filter, exact: false)
      #expect(result.hits.first?.id == 500_000 + Int64(offset))
    }
    try Self.expectExact(index, filter, queries: Fixture.queries(40, seed: 5))

    // Deleted rows never come back; compaction renumbers the rows.
    let removed: [Int64] = stride(from: 0, to: Fixture.n, by: 200).map { (row: Int) -> Int64 in Int64(row + 1)
    }
    #expect(index.remove(ids: removed) == removed.count)
    for query in Fixture.queries(40, seed: 6) {
      let hits = try index.search(query, k: 10, filter: filter, exact: false).hits
      #expect(hits.allSatisfy { !removed.contains($0.id) })
    }
    try Self.expectExact(index, filter, queries: Fixture.queries(40, seed: 7))
    #expect(index.compact() == removed.count)
    #expect(try #require(index.approximateStatus).serving)
    try Self.expectExact(index, filter, queries: Fixture.queries(40, seed: 8))
  }

  @Test func crowdedScoresStayExact() throws {
    // Tight clusters: many admitted rows score close to the k-th.
    let (index, _) = try Fixture.makeIndex(noise: 0.02)
    try Self.expectExact(index, VectorFilter(kinds: [2]), queries: Fixture.queries(50), k: 10)
    try Self.expectExact(
      index, VectorFilter(sessions: [3], timeRange: 0...2999), queries: Fixture.queries(50), k: 5)
    // Fewer admitted rows than k: all of them, best first.
    let few = VectorFilter(kinds: [2], timeRange: 0...399)
    for query in Fixture.queries(10) {
      let result = try index.search(query, k: 10, filter: few, exact: false)
      #expect(result.hits.count == 4)
      #expect(result.hits == (try index.search(query, k: 10, filter: few, exact: true)).hits)
    }
  }

  @Test func twoBuildThreadsBuildListsThatMeetTheTarget() throws {
    let vectors = clusteredVectors(
      n: Fixture.n, dimension: Fixture.dimension, clusters: 60, noise: 0.6, seed: 11)
    let index = try VectorIndex(
      configuration: VectorIndex.Configuration(
        dimension: Fixture.dimension,
        approximate: ApproximateConfiguration(threshold: 1000, build: .inline, buildThreads: 2)),
      ids: (0..<Fixture.n).map { Int64($0 + 1) },
      metadata: Array(repeating: VectorMetadata(kind: 0), count: Fixture.n), vectors: vectors)
    let status = try #require(index.approximateStatus)
    #expect(status.serving && status.calibratedRecall >= 0.95)
    var sum = 0.0
    for query in Fixture.queries(100) {
      let found = try index.search(query, k: 10, filter: nil, exact: false)
      sum += Fixture.recall(found.hits, try index.search(query, k: 10, filter: nil, exact: true).hits)
    }
    #expect(sum / 100 >= 0.9)
    #expect(throws: VectorIndexError.invalidConfiguration(field: "approximate.buildThreads", value: 0)) {
      try VectorIndex(
        configuration: .init(dimension: 4, approximate: ApproximateConfiguration(buildThreads: 0)))
    }
  }
}
