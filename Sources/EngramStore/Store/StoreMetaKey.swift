/// Meta keys every store keeps about itself (they describe the store, or one user's vector
/// snapshot, not the memory: an export leaves them out and an import never writes them).
public enum StoreMetaKey {
  /// The store's identity (a UUID drawn when it was created).
  public static let databaseID = "database_id"
  /// The configured embedding model and dimension.
  public static let embeddingModel = "embedding_model"
  /// The configured embedding dimension.
  public static let embeddingDimension = "embedding_dimension"
  /// The epoch redrawn at every change of the embeddings.
  public static let embeddingEpoch = Connection.embeddingEpochKey
  /// The generation up to which the embedding change log was pruned.
  public static let embeddingChangesFloor = Connection.embeddingChangesFloorKey
  /// The default user's vector snapshot stamp.
  public static let vectorSnapshot = Connection.vectorSnapshotKey

  /// The vector snapshot stamp key of `user` (`vector_snapshot` for the default user,
  /// `vector_snapshot:<user>` for another).
  public static func vectorSnapshot(user: String) -> String {
    user == StoreUser.defaultID ? vectorSnapshot : vectorSnapshot + ":" + user
  }

  /// Whether `key` describes the store itself rather than the memory.
  public static func isLocal(_ key: String) -> Bool {
    [databaseID, embeddingModel, embeddingDimension, embeddingEpoch, embeddingChangesFloor, vectorSnapshot]
      .contains(key) || key.hasPrefix(vectorSnapshot + ":")
  }
}
