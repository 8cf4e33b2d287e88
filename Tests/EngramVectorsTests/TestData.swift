import EngramCore
import EngramVectors
import Foundation

/// Gaussian test data from the shared seeded generator.
extension SplitMix64 {
  mutating func vector(_ dimension: Int) -> [Float] {
    (0..<dimension).map { _ in nextGaussian() }
  }
  mutating func vectors(_ n: Int, _ dimension: Int) -> [Float] {
    (0..<(n * dimension)).map { _ in nextGaussian() }
  }
}

/// Clustered synthetic set: rows are noisy copies of a few random centers.
func clusteredVectors(n: Int, dimension: Int, clusters: Int, noise: Float, seed: UInt64) -> [Float] {
  var random = SplitMix64(seed: seed)
  let centers = (0..<clusters).map { _ in random.vector(dimension) }
  var out = [Float]()
  out.reserveCapacity(n * dimension)
  for _ in 0..<n {
    let center = centers[Int.random(in: 0..<clusters, using: &random)]
    for j in 0..<dimension { out.append(center[j] + noise * random.nextGaussian()) }
  }
  return out
}

/// Brute-force cosine top-k in Double, ties by id.
func referenceTopK(
  ids: [Int64], vectors: [Float], dimension: Int, query: [Float], k: Int, allow: (Int) -> Bool = { _ in true }
) -> [(id: Int64, score: Double)] {
  func norm(_ v: ArraySlice<Float>) -> Double { v.reduce(0) { $0 + Double($1) * Double($1) }.squareRoot() }
  let qn = norm(query[...])
  var all: [(id: Int64, score: Double)] = []
  for (row, id) in ids.enumerated() where allow(row) {
    let slice = vectors[(row * dimension)..<((row + 1) * dimension)]
    var dot = 0.0
    for (j, x) in slice.enumerated() { dot += Double(x) * Double(query[j]) }
    all.append((id, dot / (norm(slice) * qn)))
  }
  all.sort { $0.score > $1.score || ($0.score == $1.score && $0.id < $1.id) }
  return Array(all.prefix(k))
}

/// Metadata cycling through kinds, sessions and scopes predictably.
func sampleMetadata(_ n: Int) -> [VectorMetadata] {
  (0..<n).map { (row: Int) -> VectorMetadata in
    let kind = UInt8(row % 3)
    let session = Int64(row % 10)
    let scope = Int64(row % 4)
    let timestamp = Int64(1000 + row)
    return VectorMetadata(kind: kind, session: session, scope: scope, timestamp: timestamp)
  }
}

func recall(_ found: [VectorHit], _ truth: [(id: Int64, score: Double)]) -> Double {
  guard !truth.isEmpty else { return 1 }
  let expected = Set(truth.map(\.id))
  return Double(found.filter { expected.contains($0.id) }.count) / Double(truth.count)
}
