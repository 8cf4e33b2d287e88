import EngramStore
import EngramVectors

/// The float32 rows of a vector index opened from a snapshot of int8 codes, read from the
/// store (the source of truth) by owner, in one read transaction per request.
struct StoreFloatRowSource: FloatRowSource {
  let store: StoreRole<any EmbeddingQueries>

  func floatRows(for ids: [Int64]) throws -> [[Float]?] {
    let owners = ids.map(VectorKey.split)
    return try store.readTransaction { try $0.embeddingVectors(owners: owners) }
  }
}
