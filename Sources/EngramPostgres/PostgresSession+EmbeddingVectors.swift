import EngramCore
import EngramStore

extension PostgresSession {
  /// The decoded vector of each owner's embedding, in the order given (nil for an owner
  /// without one), in one query over the `(user_scope, owner_kind, owner_id)` key.
  public func embeddingVectors(owners: [(kind: ItemKind, id: Int64)]) throws -> [[Float]?] {
    guard !owners.isEmpty else { return [] }
    let result = try connection.execute(
      """
      SELECT k.position, e.vector, e.dimension
      FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS k(kind, id, position)
      JOIN embeddings e ON e.user_scope = $1 AND e.owner_kind = k.kind AND e.owner_id = k.id
      """,
      [
        scope, .text("{" + owners.map(\.kind.rawValue).joined(separator: ",") + "}"),
        Self.idArray(owners.map(\.id)),
      ])
    var vectors = [[Float]?](repeating: nil, count: owners.count)
    for row in result.rows {
      guard let position = try row.int64(0), position >= 1, position <= owners.count else { continue }
      let dimension = Int(try row.int64(2) ?? 0)
      let bytes = try row.bytes(1) ?? []
      guard dimension > 0 else { continue }
      var vector = [Float](repeating: 0, count: dimension)
      let decoded = vector.withUnsafeMutableBufferPointer { destination in
        bytes.withUnsafeBytes { EmbeddingCodec.decode($0, dimension: dimension, into: destination) }
      }
      if decoded { vectors[Int(position) - 1] = vector }
    }
    return vectors
  }
}
