import EngramCore

extension StoreSession {
  /// The decoded vector of each owner's embedding, in the order given (nil for an owner
  /// without one), read in this session's transaction: what a vector index that holds int8
  /// codes only re-ranks its few candidates with.
  ///
  /// This default reads one owner at a time through `embedding(ownerKind:ownerID:)` (a
  /// primary-key lookup each in SQLite); the PostgreSQL session reads them all in one query.
  /// - Complexity: O(owners) lookups.
  public func embeddingVectors(owners: [(kind: ItemKind, id: Int64)]) throws -> [[Float]?] {
    try owners.map { owner in try embedding(ownerKind: owner.kind, ownerID: owner.id)?.vector }
  }
}
