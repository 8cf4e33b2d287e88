import EngramCore

/// What a vector-index snapshot file holds, as the writer that wrote it recorded in the
/// database (meta `vector_snapshot`): the file's token, the embedding generation whose rows
/// it holds, and the highest embedding id among them.
///
/// A snapshot whose token matches the stamp holds exactly the state at `generation`; the
/// rows added since are those with an id above `maxEmbeddingID`, and every other change
/// since is in `embedding_changes` (migration 5), so a reader can bring it up to date.
public struct VectorSnapshotStamp: Sendable, Hashable {
  /// The token written in the snapshot file's header.
  public var token: UInt64
  /// The embedding generation of the rows it holds.
  public var generation: Int64
  /// The highest embedding id at that generation (0 when there was none).
  public var maxEmbeddingID: Int64

  /// Creates a stamp.
  public init(token: UInt64, generation: Int64, maxEmbeddingID: Int64) {
    self.token = token
    self.generation = generation
    self.maxEmbeddingID = maxEmbeddingID
  }

  /// The meta value: "token:generation:maxEmbeddingID" (token in hexadecimal).
  package var metaValue: String {
    String(token, radix: 16) + ":" + String(generation) + ":" + String(maxEmbeddingID)
  }

  package init?(metaValue: String) {
    let parts = metaValue.split(separator: ":")
    guard parts.count == 3, let token = UInt64(parts[0], radix: 16), let generation = Int64(parts[1]),
      let maxID = Int64(parts[2])
    else { return nil }
    self.init(token: token, generation: generation, maxEmbeddingID: maxID)
  }
}

/// The embedding changes since a generation, other than appends (see `embedding_changes`).
public struct EmbeddingChanges: Sendable, Hashable {
  /// Embedding ids deleted, updated or inserted below the highest id.
  public var embeddingIDs: Set<Int64>
  /// Their owners (before and after an update that moved a row).
  public var owners: Set<OwnerKey>

  package init(embeddingIDs: Set<Int64>, owners: Set<OwnerKey>) {
    self.embeddingIDs = embeddingIDs
    self.owners = owners
  }

  /// An owner of an embedding.
  public struct OwnerKey: Sendable, Hashable {
    /// The owner's table.
    public var kind: ItemKind
    /// The owner's id.
    public var id: Int64

    package init(kind: ItemKind, id: Int64) {
      self.kind = kind
      self.id = id
    }
  }
}

extension Connection {
  /// The meta key of the vector snapshot stamp (it describes this file: never exported).
  public static let vectorSnapshotKey = "vector_snapshot"
  /// The meta key of the generation up to which `embedding_changes` was pruned (it
  /// describes this file: never exported).
  public static let embeddingChangesFloorKey = "embedding_changes_floor"

  /// The distinct non-null speakers of the conversation log, in binary order.
  ///
  /// - Complexity: one read of the `speakers` table (migration 7: a row per name with its
  ///   turn count, kept by triggers), not a read of every turn.
  public func distinctSpeakers() throws -> [String] {
    try cachedStatement("SELECT speaker FROM speakers WHERE user_id = ?1 ORDER BY speaker")
      .bindingAndMap([.text(user)]) { $0.string(at: 0) }
  }

  /// `vector_snapshot`, or `vector_snapshot:<user>` for a user other than the default one.
  public var vectorSnapshotMetaKey: String { StoreMetaKey.vectorSnapshot(user: user) }

  /// Calls `body` for every embedding with an id above `id`, in id order, as
  /// `forEachEmbedding` does.
  public func forEachEmbedding(
    idAbove id: Int64, _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void
  ) throws {
    let statement = try cachedStatement(
      "\(Self.embeddingEntrySelect) WHERE e.id > ?1 AND +e.user_id = ?2 ORDER BY e.id")
    try statement.bind(id, at: 1)
    try statement.bind(user, at: 2)
    try forEachEmbeddingEntry(statement, body)
  }

  /// Calls `body` for the current embedding of each id in `ids` and of each owner in
  /// `owners` that has one (each row once), as `forEachEmbedding` does.
  public func forEachEmbedding(
    ids: Set<Int64>, owners: Set<EmbeddingChanges.OwnerKey>,
    _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void
  ) throws {
    var keys = ids
    let byOwner = try cachedStatement("SELECT id FROM embeddings WHERE owner_kind = ?1 AND owner_id = ?2")
    for owner in owners {
      byOwner.reset()
      try byOwner.bind(owner.kind.rawValue, at: 1)
      try byOwner.bind(owner.id, at: 2)
      if let id = try byOwner.first({ $0.int64(at: 0) }) { keys.insert(id) }
    }
    guard !keys.isEmpty else { return }
    let statement = try cachedStatement(
      "\(Self.embeddingEntrySelect) WHERE e.id IN (SELECT value FROM json_each(?1)) AND +e.user_id = ?2 ORDER BY e.id"
    )
    try statement.bind("[" + keys.sorted().map(String.init).joined(separator: ",") + "]", at: 1)
    try statement.bind(user, at: 2)
    try forEachEmbeddingEntry(statement, body)
  }
}

// The vector snapshot's stamp and the change log of the embeddings (migration 5; PostgreSQL's
// per user), written once.
extension EmbeddingQueries {
  /// The stamp the last snapshot writer recorded, or nil.
  public func vectorSnapshotStamp() throws -> VectorSnapshotStamp? {
    try meta(vectorSnapshotMetaKey).flatMap(VectorSnapshotStamp.init(metaValue:))
  }

  /// Records that the snapshot file stamped `stamp.token` holds the state at
  /// `stamp.generation`, and prunes the change log up to it (the snapshot holds those
  /// changes; an older snapshot is then rebuilt instead of replayed). Call it in a write
  /// transaction, after the file is in place.
  public func recordVectorSnapshot(_ stamp: VectorSnapshotStamp) throws {
    try setMeta(vectorSnapshotMetaKey, stamp.metaValue)
    try pruneEmbeddingChanges(upTo: stamp.generation)
  }

  /// The generation up to which the change log was pruned: changes after it are all logged
  /// (without a recorded floor, the dialect's ``SQLDialect/unprunedChangeLogFloor``).
  public func embeddingChangesFloor() throws -> Int64 {
    try meta(Connection.embeddingChangesFloorKey).flatMap { Int64($0) } ?? dialect.unprunedChangeLogFloor
  }

  /// The non-append changes after `generation`, or nil when the log no longer holds them
  /// all (pruned past `generation`).
  public func embeddingChanges(after generation: Int64) throws -> EmbeddingChanges? {
    guard try embeddingChangesFloor() <= generation else { return nil }
    var changes = EmbeddingChanges(embeddingIDs: [], owners: [])
    try forEachRow(
      scoped: """
        SELECT embedding_id, owner_kind, owner_id FROM embedding_changes
        WHERE \(dialect.embeddingModelScope) AND generation > $2
        """, [.integer(generation)]
    ) { row in
      changes.embeddingIDs.insert(row.int64(at: 0))
      let kind = try row.enumValue(ItemKind.self, at: 1, table: "embedding_changes", column: "owner_kind")
      changes.owners.insert(EmbeddingChanges.OwnerKey(kind: kind, id: row.int64(at: 2)))
    }
    return changes
  }

  /// Prunes the change log up to `generation` (the vector snapshot just recorded holds those
  /// changes; a reader older than it rebuilds instead of replaying) and records the new floor.
  public func pruneEmbeddingChanges(upTo generation: Int64) throws {
    guard generation > (try embeddingChangesFloor()) else { return }
    try execute(
      scoped: "DELETE FROM embedding_changes WHERE \(dialect.embeddingModelScope) AND generation <= $2",
      [.integer(generation)])
    try setMeta(Connection.embeddingChangesFloorKey, String(generation))
  }
}
