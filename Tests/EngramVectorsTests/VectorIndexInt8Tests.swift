import CEngramKernels
import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramVectors

@Suite("VectorIndex int8 mode and kernels", .timeLimit(.minutes(5)), .watchdog)
struct VectorIndexInt8Tests {
  static func meanRecall(vectors: [Float], queries: [[Float]], dimension: Int, k: Int) throws -> Double {
    let n = vectors.count / dimension
    let ids = (0..<n).map { Int64($0) }
    let index = try VectorIndex(
      configuration: .init(dimension: dimension, precision: .int8), ids: ids,
      metadata: Array(repeating: .init(kind: 1), count: n), vectors: vectors)
    var total = 0.0
    for query in queries {
      let hits = try index.search(query, k: k)
      #expect(hits.count == k)
      total += recall(
        hits, referenceTopK(ids: ids, vectors: vectors, dimension: dimension, query: query, k: k))
    }
    return total / Double(queries.count)
  }

  @Test func recallOnRandomUnitVectors() throws {
    var random = SplitMix64(seed: 123)
    let dimension = 64
    let vectors = random.vectors(4000, dimension)
    let queries = (0..<30).map { _ in random.vector(dimension) }
    #expect(try Self.meanRecall(vectors: vectors, queries: queries, dimension: dimension, k: 10) >= 0.99)
  }

  @Test func recallOnClusteredVectors() throws {
    let dimension = 48
    let vectors = clusteredVectors(n: 4000, dimension: dimension, clusters: 20, noise: 0.35, seed: 9)
    // Queries are perturbed rows, so the neighbors crowd within one tight cluster.
    var random = SplitMix64(seed: 10)
    let queries = (0..<30).map { q in
      (0..<dimension).map { vectors[q * 97 * dimension + $0] + 0.1 * random.nextGaussian() }
    }
    #expect(try Self.meanRecall(vectors: vectors, queries: queries, dimension: dimension, k: 10) >= 0.99)
  }

  /// int8 and float32 indexes over the same rows, the int8 one's certified searches traced.
  static func compareWithFloat32(
    vectors: [Float], queries: [[Float]], dimension: Int, ks: [Int], threads: Int = 1
  ) throws -> (secondPasses: Int, searches: Int, stoppedEarly: Int) {
    let n = vectors.count / dimension
    let ids = (0..<n).map { Int64(n - $0) }  // descending, so id order differs from row order
    let metadata = [VectorMetadata](repeating: .init(kind: 1), count: n)
    let int8 = try VectorIndex(
      configuration: .init(dimension: dimension, precision: .int8, threads: threads), ids: ids,
      metadata: metadata, vectors: vectors)
    let float32 = try VectorIndex(
      configuration: .init(dimension: dimension, threads: threads), ids: ids, metadata: metadata,
      vectors: vectors)
    var secondPasses = 0
    var searches = 0
    var stoppedEarly = 0
    for query in queries {
      let unit = try int8.normalizedQueries(query, count: 1)
      for k in ks {
        let traced = try unit.withUnsafeBufferPointer {
          try int8.searchInt8Certified(int8.snapshot(), query: $0.baseAddress!, k: k)
        }
        #expect(traced.hits == (try float32.search(query, k: k)), "k \(k)")
        #expect(try int8.search(query, k: k) == traced.hits)
        if traced.secondPass { secondPasses += 1 }
        if traced.reranked < min(n, max(k * int8.configuration.rerankFactor, k + 32)) { stoppedEarly += 1 }
        searches += 1
      }
    }
    return (secondPasses, searches, stoppedEarly)
  }

  @Test func int8ResultsAreTheExactFloat32Results() throws {
    var random = SplitMix64(seed: 321)
    let dimension = 64
    let vectors = random.vectors(6000, dimension)
    let queries = (0..<20).map { _ in random.vector(dimension) }
    let traced = try Self.compareWithFloat32(
      vectors: vectors, queries: queries, dimension: dimension, ks: [1, 10, 40], threads: 2)
    // On spread-out rows the bound proves the candidates enough without a second pass, and
    // often proves the first stage of them (k + 32) enough to re-rank.
    #expect(traced.secondPasses < traced.searches)
    #expect(traced.stoppedEarly > 0)
  }

  @Test func stagedRerankOnMisleadingRowsStaysExact() throws {
    // Rows crowded on a narrow arc, queries whose quantized tangent leans a code step off: the
    // int8 order misleads, so a stage that stopped on a wrong proof (the best left-out
    // candidate's score not bounding every row left out, or the bound left out) would miss
    // exact top-k rows ranked lower by int8. The default rerank factor gives several stages.
    let n = 3000
    var vectors: [Float] = []
    var random = SplitMix64(seed: 4)
    for i in 0..<n {
      let theta = 0.09 + Double(i) * 2e-5 + 1e-6 * Double(random.nextGaussian())
      vectors += [Float(cos(theta)), Float(sin(theta))]
    }
    let queries = [12.5, 12.4, 12.6, 13.5].map { step in
      let phi = atan(step / 127.0)
      return [Float(cos(phi)), Float(sin(phi))]
    }
    let traced = try Self.compareWithFloat32(
      vectors: vectors, queries: queries, dimension: 2, ks: [1, 5, 10, 30, 64])
    #expect(traced.searches == 20)
  }

  @Test func crowdedRowsTakeTheSecondPassAndStayExact() throws {
    // Rows a hair apart around one direction: the int8 scores cannot separate them, so the
    // certificate fails and the second pass must find the exact top-k among them all.
    var random = SplitMix64(seed: 77)
    let dimension = 32
    let center = random.vector(dimension)
    var vectors: [Float] = []
    for _ in 0..<3000 { vectors += center.map { $0 + 0.0001 * random.nextGaussian() } }
    let clustered = clusteredVectors(n: 3000, dimension: dimension, clusters: 8, noise: 0.2, seed: 5)
    let queries = [center, center.map { $0 + 0.01 * random.nextGaussian() }, Array(clustered[0..<dimension])]
    let traced = try Self.compareWithFloat32(
      vectors: vectors + clustered, queries: queries, dimension: dimension, ks: [1, 10, 50])
    #expect(traced.secondPasses > 0)
  }

  @Test func misleadingInt8RankingStaysExact() throws {
    // Unit rows on a narrow arc and a query whose tangent sits exactly between two int8
    // codes: the quantized query leans a whole code step to one side, so the best int8
    // scores are not the best exact ones. Few candidates (rerank factor 1) make the
    // certificate, not luck, responsible for the exact answer.
    let phi = atan(12.5 / 127.0)
    let n = 2000
    var vectors: [Float] = []
    for i in 0..<n {
      let theta = 0.09 + Double(i) * 1e-5
      vectors += [Float(cos(theta)), Float(sin(theta))]
    }
    let ids = (0..<n).map { Int64($0 + 1) }
    let metadata = [VectorMetadata](repeating: .init(kind: 1), count: n)
    let int8 = try VectorIndex(
      configuration: .init(dimension: 2, precision: .int8, rerankFactor: 1), ids: ids, metadata: metadata,
      vectors: vectors)
    let float32 = try VectorIndex(
      configuration: .init(dimension: 2), ids: ids, metadata: metadata, vectors: vectors)
    let query = [Float(cos(phi)), Float(sin(phi))]
    for k in [1, 10, 30] {
      #expect(try int8.search(query, k: k) == float32.search(query, k: k), "k \(k)")
    }
  }

  @Test(arguments: [1, 3, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 383, 384, 385, 1001])
  func int8KernelMatchesScalarOnOddLengths(length: Int) {
    var random = SplitMix64(seed: UInt64(length))
    // Codes in -127...127 (the quantizer's range, where every path is exact), with the
    // extremes, which stress the u8 bias of the VNNI path and the i16 pairs of the AVX2 path.
    let a = (0..<length).map { i in i % 7 == 0 ? -127 : Int8.random(in: -127...127, using: &random) }
    let b = (0..<length).map { i in i % 5 == 0 ? Int8.max : Int8.random(in: -127...127, using: &random) }
    let expected = zip(a, b).reduce(Int32(0)) { $0 + Int32($1.0) * Int32($1.1) }
    for path in 0...2 {
      #expect(engram_dot_i8_path(a, b, length, Int32(path)) == expected, "path \(path) length \(length)")
    }
    // The scalar and VNNI paths are exact for -128 too.
    let low = a.enumerated().map { $0.offset % 7 == 0 ? Int8.min : $0.element }
    let lowExpected = zip(low, b).reduce(Int32(0)) { $0 + Int32($1.0) * Int32($1.1) }
    for path in [0, 2] where path == 0 || engram_cpu_has_avx512_vnni() != 0 {
      #expect(engram_dot_i8_path(low, b, length, Int32(path)) == lowExpected, "path \(path) length \(length)")
    }
    // The row kernel (4-row and tail loops) on rows that exclude -128, as quantized codes do.
    let rows = 6
    let codes = (0..<(rows * length)).map { _ in Int8.random(in: -127...127, using: &random) }
    let query = (0..<length).map { _ in Int8.random(in: -127...127, using: &random) }
    let sums = (0..<rows).map { r in
      codes[(r * length)..<((r + 1) * length)].reduce(Int32(0)) { $0 + Int32($1) }
    }
    var out = [Int32](repeating: 0, count: rows)
    engram_dot_i8_rows(query, codes, length, rows, sums, &out)
    for r in 0..<rows {
      let reference = (0..<length).reduce(Int32(0)) { $0 + Int32(query[$1]) * Int32(codes[r * length + $1]) }
      #expect(out[r] == reference, "row \(r) length \(length)")
    }
  }

  @Test(arguments: [1, 7, 15, 16, 17, 100, 385])
  func float32RowKernelMatchesScalar(length: Int) {
    var random = SplitMix64(seed: UInt64(length) + 1000)
    let rows = 7
    let data = random.vectors(rows, length)
    let query = random.vector(length)
    var out = [Float](repeating: 0, count: rows)
    engram_dot_f32_rows(query, data, length, rows, &out)
    var gathered = [Float](repeating: 0, count: rows)
    let order: [Int32] = [6, 5, 4, 3, 2, 1, 0]
    engram_dot_f32_gather(query, data, length, order, rows, &gathered)
    for r in 0..<rows {
      let reference = (0..<length).reduce(0.0) { $0 + Double(query[$1]) * Double(data[r * length + $1]) }
      #expect(abs(Double(out[r]) - reference) < 1e-3, "row \(r)")
      // Bit-equal across the row, gather and single-dot paths keeps ties exact.
      #expect(gathered[rows - 1 - r] == out[r])
      let single = data[(r * length)..<((r + 1) * length)].withUnsafeBufferPointer {
        engram_dot_f32(query, $0.baseAddress!, length)
      }
      #expect(single == out[r])
    }
  }

  @Test func int8SearchHonorsTombstonesAndSmallK() throws {
    var random = SplitMix64(seed: 77)
    let vectors = random.vectors(300, 20)
    let ids = (0..<300).map { Int64($0) }
    let index = try VectorIndex(
      configuration: .init(dimension: 20, precision: .int8), ids: ids,
      metadata: Array(repeating: .init(kind: 0), count: 300), vectors: vectors)
    let query = Array(vectors[0..<20])
    #expect(try index.search(query, k: 1).first?.id == 0)
    index.remove(id: 0)
    #expect(try index.search(query, k: 1).first?.id != 0)
    #expect(try index.search(query, k: 1000).count == 299)
    index.compact()
    #expect(try index.search(query, k: 1000).count == 299)
  }
}
