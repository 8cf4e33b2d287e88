import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramVectors

@Suite("VectorIndex exact search and writes", .timeLimit(.minutes(5)), .watchdog)
struct VectorIndexTests {
  static func makeIndex(n: Int, dimension: Int, seed: UInt64, threads: Int = 1) throws -> (
    VectorIndex, [Int64], [Float]
  ) {
    var random = SplitMix64(seed: seed)
    let vectors = random.vectors(n, dimension)
    let ids = (0..<n).map { Int64($0 * 7 + 3) }
    let index = try VectorIndex(
      configuration: .init(dimension: dimension, threads: threads), ids: ids, metadata: sampleMetadata(n),
      vectors: vectors)
    return (index, ids, vectors)
  }

  @Test(arguments: [(1, 1), (5, 3), (100, 10), (1000, 10), (1000, 1), (257, 50), (40_000, 5)])
  func exactTopKMatchesBruteForce(n: Int, k: Int) throws {
    let dimension = n > 10_000 ? 16 : 37
    let (index, ids, vectors) = try Self.makeIndex(
      n: n, dimension: dimension, seed: UInt64(n * 31 + k), threads: 2)
    var random = SplitMix64(seed: 99)
    for _ in 0..<5 {
      let query = random.vector(dimension)
      let hits = try index.search(query, k: k)
      let truth = referenceTopK(ids: ids, vectors: vectors, dimension: dimension, query: query, k: k)
      #expect(hits.count == truth.count)
      for (hit, expected) in zip(hits, truth) {
        #expect(abs(Double(hit.score) - expected.score) < 1e-4)
      }
      #expect(recall(hits, truth) == 1)
      #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.score >= $1.score })
    }
  }

  @Test(arguments: [VectorPrecision.float32, .int8])
  func threadedScanEqualsSingleThreaded(precision: VectorPrecision) throws {
    // 40,000 rows: two threads, each taking several parts in turn; every fifth row repeats
    // an earlier one, so equal scores fall in different parts and must still order by id.
    var random = SplitMix64(seed: 404)
    let n = 40_000
    let dimension = 16
    var vectors = random.vectors(n, dimension)
    for row in stride(from: 5, to: n, by: 5) {
      for j in 0..<dimension { vectors[row * dimension + j] = vectors[(row / 5) * dimension + j] }
    }
    let ids = (0..<n).map { Int64($0 * 3 + 1) }
    func index(threads: Int) throws -> VectorIndex {
      try VectorIndex(
        configuration: .init(dimension: dimension, precision: precision, threads: threads), ids: ids,
        metadata: sampleMetadata(n), vectors: vectors)
    }
    let one = try index(threads: 1)
    let two = try index(threads: 2)
    for probe in 0..<5 {
      let query = probe.isMultiple(of: 2) ? random.vector(dimension) : Array(vectors[0..<dimension])
      #expect(try two.search(query, k: 25) == one.search(query, k: 25), "probe \(probe)")
    }
  }

  @Test func kLargerThanLiveRowsReturnsAll() throws {
    let (index, ids, _) = try Self.makeIndex(n: 12, dimension: 8, seed: 1)
    index.remove(ids: [ids[0], ids[5]])
    let hits = try index.search([Float](repeating: 1, count: 8), k: 100)
    #expect(hits.count == 10)
    #expect(Set(hits.map(\.id)) == Set(ids).subtracting([ids[0], ids[5]]))
  }

  @Test func tiesOrderByAscendingID() throws {
    let index = try VectorIndex(configuration: .init(dimension: 19))
    var random = SplitMix64(seed: 5)
    let shared = random.vector(19)
    // Same vector under scrambled ids, interleaved with others, across kernel strides.
    let tied: [Int64] = [90, 4, 77, 12, 3, 55, 41]
    for id in tied { try index.add(id: id, vector: shared, metadata: .init(kind: 1)) }
    for id in Int64(1000)..<1010 {
      try index.add(id: id, vector: random.vector(19), metadata: .init(kind: 1))
    }
    let hits = try index.search(shared, k: 5)
    #expect(hits.map(\.id) == [3, 4, 12, 41, 55])
    #expect(Set(hits.map(\.score)).count == 1)
    let all = try index.search(shared, k: 7)
    #expect(all.map(\.id) == tied.sorted())
  }

  @Test func upsertReplacesAndRemoveHides() throws {
    let index = try VectorIndex(configuration: .init(dimension: 4))
    try index.add(id: 1, vector: [1, 0, 0, 0], metadata: .init(kind: 0))
    try index.add(id: 2, vector: [0, 1, 0, 0], metadata: .init(kind: 0))
    #expect(throws: VectorIndexError.duplicateID(1)) {
      try index.add(id: 1, vector: [0, 0, 1, 0], metadata: .init(kind: 0))
    }
    try index.upsert(id: 1, vector: [0, 0, 1, 0], metadata: .init(kind: 2))
    #expect(index.count == 2)
    #expect(index.tombstoneCount == 1)
    #expect(try index.search([0, 0, 1, 0], k: 1).first?.id == 1)
    #expect(try index.search([1, 0, 0, 0], k: 2).map(\.id).contains(1))
    #expect(abs(try index.search([1, 0, 0, 0], k: 2).first { $0.id == 1 }!.score) < 1e-6)
    #expect(index.entry(for: 1)?.metadata.kind == 2)
    #expect(index.remove(id: 2))
    #expect(!index.remove(id: 2))
    #expect(try index.search([0, 1, 0, 0], k: 10).map(\.id) == [1])
    #expect(!index.contains(2))
  }

  @Test func aSmallIndexGrowsByAnEighthAndALargeOneDoubles() throws {
    #expect(VectorIndex.grownCapacity(200) == 241)
    #expect(VectorIndex.grownCapacity(16) == 34)
    #expect(VectorIndex.grownCapacity(1 << 16) == 1 << 17)
    // Loaded with room for nothing more, one write makes room for an eighth more, not double.
    let configuration = VectorIndex.Configuration(dimension: 8, initialCapacity: 16)
    var random = SplitMix64(seed: 3)
    let index = try VectorIndex(
      configuration: configuration, ids: Array(0..<200),
      metadata: Array(repeating: .init(kind: 0), count: 200),
      vectors: (0..<200).flatMap { _ in random.vector(8) })
    let loaded = index.memoryBytes
    try index.add(id: 200, vector: random.vector(8), metadata: .init(kind: 0))
    let grown = index.memoryBytes
    // Doubling would add 200 rows of 8 floats and their columns (about 13 KB).
    let doubled = 200 * (8 * 4 + 33)
    #expect(grown > loaded && grown - loaded < doubled / 2)
    #expect(try index.search(random.vector(8), k: 201).count == 201)
  }

  @Test func compactionPreservesResultsAndReclaims() throws {
    let (index, ids, vectors) = try Self.makeIndex(n: 600, dimension: 24, seed: 8)
    let removed = Set(ids.enumerated().filter { $0.offset % 3 == 0 }.map(\.element))
    #expect(index.remove(ids: Array(removed)) == removed.count)
    var random = SplitMix64(seed: 12)
    let queries = (0..<8).map { _ in random.vector(24) }
    let before = try queries.map { try index.search($0, k: 20) }
    for hits in before { #expect(hits.allSatisfy { !removed.contains($0.id) }) }
    let bytesBefore = index.memoryBytes
    #expect(index.compact() == removed.count)
    #expect(index.tombstoneCount == 0)
    #expect(index.count == 600 - removed.count)
    let after = try queries.map { try index.search($0, k: 20) }
    #expect(before == after)
    #expect(index.memoryBytes <= bytesBefore)
    // Writes after compaction still work and removed ids stay gone.
    try index.add(id: -1, vector: Array(vectors[0..<24]), metadata: .init(kind: 1))
    let hits = try index.search(Array(vectors[0..<24]), k: 3)
    #expect(hits.first?.id == -1)
    #expect(!hits.contains { $0.id == ids[0] })
  }

  @Test func badInputsAreTypedAndLeaveIndexUnchanged() throws {
    let (index, _, _) = try Self.makeIndex(n: 10, dimension: 6, seed: 2)
    let good: [Float] = [1, 2, 3, 4, 5, 6]
    #expect(throws: VectorIndexError.dimensionMismatch(id: 77, expected: 6, actual: 5)) {
      try index.add(id: 77, vector: [1, 2, 3, 4, 5], metadata: .init(kind: 1))
    }
    #expect(throws: VectorIndexError.nonFiniteComponent(id: 78, index: 2)) {
      try index.add(id: 78, vector: [1, 2, .nan, 4, 5, 6], metadata: .init(kind: 1))
    }
    #expect(throws: VectorIndexError.nonFiniteComponent(id: 79, index: 5)) {
      try index.add(id: 79, vector: [1, 2, 3, 4, 5, .infinity], metadata: .init(kind: 1))
    }
    #expect(throws: VectorIndexError.zeroVector(id: 80)) {
      try index.add(id: 80, vector: [0, 0, 0, 0, 0, 0], metadata: .init(kind: 1))
    }
    // A batch with one bad row adds nothing.
    #expect(throws: VectorIndexError.nonFiniteComponent(id: 82, index: 0)) {
      try index.add(
        ids: [81, 82], metadata: [.init(kind: 1), .init(kind: 1)],
        vectors: good + [-.infinity, 1, 1, 1, 1, 1])
    }
    #expect(throws: VectorIndexError.duplicateID(5)) {
      try index.add(
        ids: [5, 5], metadata: [.init(kind: 1), .init(kind: 1)], vectors: good + good)
    }
    #expect(throws: VectorIndexError.batchShapeMismatch(ids: 2, metadata: 1, components: 12)) {
      try index.add(ids: [90, 91], metadata: [.init(kind: 1)], vectors: good + good)
    }
    #expect(index.count == 10)
    #expect(!index.contains(81))
    #expect(!index.contains(82))
    #expect(throws: VectorIndexError.invalidK(0)) { try index.search(good, k: 0) }
    #expect(throws: VectorIndexError.invalidK(-3)) { try index.search(batch: [good], k: -3) }
    #expect(throws: VectorIndexError.dimensionMismatch(id: nil, expected: 6, actual: 7)) {
      try index.search(good + [1], k: 1)
    }
    #expect(throws: VectorIndexError.nonFiniteComponent(id: nil, index: 0)) {
      try index.search([.nan, 1, 1, 1, 1, 1], k: 1)
    }
    #expect(throws: VectorIndexError.zeroVector(id: nil)) { try index.search([0, 0, 0, 0, 0, 0], k: 1) }
    #expect(throws: VectorIndexError.invalidDimension(0)) {
      try VectorIndex(configuration: .init(dimension: 0))
    }
    #expect(throws: VectorIndexError.invalidConfiguration(field: "threads", value: 0)) {
      try VectorIndex(configuration: .init(dimension: 4, threads: 0))
    }
  }

  @Test func storedVectorsAreUnitNormalized() throws {
    let index = try VectorIndex(configuration: .init(dimension: 3))
    try index.add(
      id: 9, vector: [3, 0, 4], metadata: .init(kind: 1, session: 2, scope: 3, timestamp: 4))
    let entry = try #require(index.entry(for: 9))
    #expect(abs(entry.vector[0] - 0.6) < 1e-6 && abs(entry.vector[2] - 0.8) < 1e-6)
    #expect(entry.metadata == VectorMetadata(kind: 1, session: 2, scope: 3, timestamp: 4))
    #expect(abs(try index.search([30, 0, 40], k: 1)[0].score - 1) < 1e-6)
  }

  @Test func batchSearchMatchesSingleQueries() throws {
    let (index, ids, _) = try Self.makeIndex(n: 5000, dimension: 32, seed: 21, threads: 2)
    index.remove(ids: Array(ids.prefix(100)))
    var random = SplitMix64(seed: 4)
    let queries = (0..<300).map { _ in random.vector(32) }
    let batch = try index.search(batch: queries, k: 7)
    #expect(batch.count == 300)
    for (query, hits) in zip(queries, batch) {
      let single = try index.search(query, k: 7)
      #expect(hits.map(\.id) == single.map(\.id))
      for (a, b) in zip(hits, single) { #expect(abs(a.score - b.score) < 1e-4) }
    }
  }

  @Test func concurrentSearchesAndInserts() async throws {
    let dimension = 16
    let (index, _, _) = try Self.makeIndex(n: 2000, dimension: dimension, seed: 3, threads: 2)
    try await withThrowingTaskGroup(of: Int.self) { group in
      for writer in 0..<2 {
        group.addTask {
          var random = SplitMix64(seed: UInt64(100 + writer))
          for batch in 0..<40 {
            let base = Int64(1_000_000 * (writer + 1) + batch * 10)
            let ids = (0..<10).map { base + Int64($0) }
            try index.upsert(ids: ids, metadata: sampleMetadata(10), vectors: random.vectors(10, dimension))
            if batch % 5 == 4 { index.remove(ids: [ids[0]]) }
            if batch == 20 { index.compact() }
          }
          return 0
        }
      }
      for reader in 0..<4 {
        group.addTask {
          var random = SplitMix64(seed: UInt64(200 + reader))
          var seen = 0
          for _ in 0..<60 {
            let hits = try index.search(
              random.vector(dimension), k: 5, filter: reader == 3 ? .init(kinds: [1]) : nil)
            seen += hits.count
          }
          return seen
        }
      }
      var total = 0
      for try await count in group { total += count }
      #expect(total == 4 * 60 * 5)
    }
    #expect(index.count == 2000 + 2 * 400 - 2 * 8)
  }
}
