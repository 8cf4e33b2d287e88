import EngramCore
import EngramTestSupport
import Testing

@testable import EngramVectors

@Suite("VectorIndex filtered search", .timeLimit(.minutes(5)), .watchdog)
struct VectorFilterTests {
  static let dimension = 12
  static let n = 3000

  static func fixture() throws -> (VectorIndex, [Int64], [Float], [VectorMetadata]) {
    var random = SplitMix64(seed: 44)
    let vectors = random.vectors(n, dimension)
    let ids = (0..<n).map { Int64(10_000 - $0) }
    let metadata = sampleMetadata(n)
    let index = try VectorIndex(
      configuration: .init(dimension: dimension), ids: ids, metadata: metadata, vectors: vectors)
    return (index, ids, vectors, metadata)
  }

  static let filters: [(String, VectorFilter, @Sendable (VectorMetadata, Int64) -> Bool)] = [
    ("kind", VectorFilter(kinds: [2]), { m, _ in m.kind == 2 }),
    ("kinds", VectorFilter(kinds: [0, 1]), { m, _ in m.kind != 2 }),
    ("session", VectorFilter(sessions: [3]), { m, _ in m.session == 3 }),
    ("scope", VectorFilter(scopes: [1, 2]), { m, _ in m.scope == 1 || m.scope == 2 }),
    ("time", VectorFilter(timeRange: 1500...1700), { m, _ in (1500...1700).contains(m.timestamp) }),
    (
      "ids", VectorFilter(ids: [10_000, 9_000, 8_000, 7_777, 42]),
      { _, id in [10_000, 9_000, 8_000, 7_777].contains(id) }
    ),
    (
      "combined", VectorFilter(kinds: [1], sessions: [1, 4], timeRange: 1000...3000),
      { m, _ in m.kind == 1 && (m.session == 1 || m.session == 4) && m.timestamp <= 3000 }
    ),
  ]

  @Test(arguments: 0..<filters.count)
  func filterMatchesReference(case index: Int) throws {
    let (vectorIndex, ids, vectors, metadata) = try Self.fixture()
    let (name, filter, allow) = Self.filters[index]
    var random = SplitMix64(seed: UInt64(index))
    for k in [1, 10, 500] {
      let query = random.vector(Self.dimension)
      let hits = try vectorIndex.search(query, k: k, filter: filter)
      let truth = referenceTopK(
        ids: ids, vectors: vectors, dimension: Self.dimension, query: query, k: k
      ) { allow(metadata[$0], ids[$0]) }
      #expect(hits.count == truth.count, "\(name) k=\(k)")
      #expect(recall(hits, truth) == 1, "\(name) k=\(k)")
      #expect(hits.allSatisfy { hit in allow(metadata[ids.firstIndex(of: hit.id)!], hit.id) }, "\(name)")
    }
  }

  @Test func onePercentFilterReturnsKWhenKMatch() throws {
    var random = SplitMix64(seed: 7)
    let n = 5000
    let vectors = random.vectors(n, Self.dimension)
    let ids = (0..<n).map { Int64($0) }
    // 1% of rows are summaries in session 77.
    let metadata = (0..<n).map { row in
      row % 100 == 0
        ? VectorMetadata(kind: 2, session: 77)
        : VectorMetadata(kind: 0, session: Int64(row % 50))
    }
    let index = try VectorIndex(
      configuration: .init(dimension: Self.dimension, precision: .int8), ids: ids, metadata: metadata,
      vectors: vectors)
    let query = random.vector(Self.dimension)
    for filter in [VectorFilter(kinds: [2]), VectorFilter(sessions: [77])] {
      let hits = try index.search(query, k: 10, filter: filter)
      let truth = referenceTopK(ids: ids, vectors: vectors, dimension: Self.dimension, query: query, k: 10) {
        $0 % 100 == 0
      }
      #expect(hits.count == 10)
      #expect(hits.map(\.id) == truth.map(\.id))
    }
    let all = try index.search(query, k: 1000, filter: VectorFilter(kinds: [2]))
    #expect(all.count == 50)
  }

  @Test func filterSkipsRemovedAndReplacedRows() throws {
    let (index, ids, _, _) = try Self.fixture()
    let summaries = ids.enumerated().filter { $0.offset % 3 == 2 }.map(\.element)
    index.remove(ids: Array(summaries.prefix(900)))
    let query = [Float](repeating: 1, count: Self.dimension)
    let hits = try index.search(query, k: 1000, filter: VectorFilter(kinds: [2]))
    #expect(hits.count == 100)
    #expect(Set(hits.map(\.id)) == Set(summaries.suffix(100)))
    // Re-kinding a row through upsert moves it between posting lists.
    try index.upsert(id: summaries[950], vector: query, metadata: .init(kind: 1))
    let after = try index.search(query, k: 1000, filter: VectorFilter(kinds: [2]))
    #expect(after.count == 99)
    #expect(try index.search(query, k: 1, filter: VectorFilter(kinds: [1])).first?.id == summaries[950])
    #expect(try index.search(query, k: 5, filter: VectorFilter(sessions: [12_345])).isEmpty)
    #expect(try index.search(query, k: 5, filter: VectorFilter(ids: [])).isEmpty)
  }
}
