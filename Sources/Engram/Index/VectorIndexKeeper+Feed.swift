import EngramStore

extension VectorIndexKeeper {
  /// The newest embedding generation of the store's user, and whether it came from a feed
  /// that follows it (PostgreSQL's `LISTEN/NOTIFY`, caught up from the counter on every
  /// reconnection and every second) rather than from the database: then no statement is
  /// spent on it, and the generation may lag this process's own writes by a notification.
  func newestGeneration() throws -> (generation: Int64, followed: Bool) {
    if let followed = store.followedEmbeddingGeneration() {
      return (followed, true)
    }
    return (try store.readTransaction { try $0.embeddingGeneration() }, false)
  }
}
