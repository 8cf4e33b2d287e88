extension StoreSession {
  /// Inserts or replaces each embedding in turn (a store that can do better overrides it).
  public func upsertEmbeddings(_ rows: [EmbeddingRow]) throws {
    for row in rows { try upsertEmbedding(row) }
  }
}
