import EngramCore
import EngramStore
import Foundation

// Embeddings, their generation and change log, and keyword search: one user's.
extension PostgresSession {
  /// Inserts or replaces the embedding of (`ownerKind`, `ownerID`); returns its row id.
  @discardableResult
  public func upsertEmbedding(_ row: EmbeddingRow) throws -> Int64 {
    try row.validate(against: try embeddingModel())
    let values = try row.encoded().map(\.postgres)
    return try connection.execute(
      """
      INSERT INTO embeddings (user_scope, owner_kind, owner_id, model, dimension, vector, created_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (user_scope, owner_kind, owner_id) DO UPDATE SET
        model = excluded.model, dimension = excluded.dimension, encoding = excluded.encoding,
        vector = excluded.vector, created_at = excluded.created_at
      RETURNING id
      """, [scope] + values)[0].int64(0) ?? 0
  }

  /// Converts the float32 embeddings of `ownerIDs` to int8 codes; returns how many changed.
  public func quantizeEmbeddings(ownerKind: ItemKind, ownerIDs: [Int64]) throws -> Int {
    var converted = 0
    for ownerID in ownerIDs {
      let found = try connection.execute(
        """
        SELECT id, vector FROM embeddings
        WHERE user_scope = $1 AND owner_kind = $2 AND owner_id = $3 AND encoding = 'f32'
        """, [scope, .text(ownerKind.rawValue), .int(ownerID)])
      guard found.count == 1, let id = try found[0].int64(0), let bytes = try found[0].bytes(1) else {
        continue
      }
      let floats = bytes.withUnsafeBytes { raw in
        (0..<(raw.count / 4)).map {
          Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)))
        }
      }
      let codes = floats.withUnsafeBufferPointer { EmbeddingCodec.encodeInt8($0) }
      converted += try run(
        "UPDATE embeddings SET encoding = 'i8', vector = $3 WHERE user_scope = $1 AND id = $2",
        [.int(id), .bytes(codes)])
    }
    return converted
  }

  /// The user's embedding generation: bumped by every statement that changes the user's
  /// embeddings (0 before the first).
  public func embeddingGeneration() throws -> Int64 {
    try scalarInt("SELECT generation FROM embedding_generation WHERE user_scope = $1") ?? 0
  }

  static let embeddingEntrySelect = """
    SELECT \(EmbeddingEntry.selectColumns)
    FROM embeddings e
    LEFT JOIN messages m ON e.owner_kind = 'message' AND m.user_scope = e.user_scope AND m.id = e.owner_id
    LEFT JOIN memories mm ON e.owner_kind = 'memory' AND mm.user_scope = e.user_scope AND mm.id = e.owner_id
    LEFT JOIN summaries s ON e.owner_kind = 'summary' AND s.user_scope = e.user_scope AND s.id = e.owner_id
    WHERE e.user_scope = $1
    """

  /// Calls `body` for every embedding of the user (of `ownerKinds`), in id order, with its
  /// owner's metadata and its decoded vector (empty when it cannot be decoded).
  public func forEachEmbedding(
    ownerKinds: Set<ItemKind> = Set(ItemKind.allCases),
    _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void
  ) throws {
    let kinds = ItemKind.allCases.filter(ownerKinds.contains).map(\.rawValue)
    try forEachEmbeddingEntry(
      "\(Self.embeddingEntrySelect) AND e.owner_kind = ANY($2::text[]) ORDER BY e.id",
      [.text("{" + kinds.joined(separator: ",") + "}")], body)
  }

  /// Calls `body` for every embedding with an id above `id`, as `forEachEmbedding` does.
  public func forEachEmbedding(
    idAbove id: Int64, _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void
  ) throws {
    try forEachEmbeddingEntry("\(Self.embeddingEntrySelect) AND e.id > $2 ORDER BY e.id", [.int(id)], body)
  }

  /// Calls `body` for the current embedding of each id in `ids` and each owner in `owners`.
  public func forEachEmbedding(
    ids: Set<Int64>, owners: Set<EmbeddingChanges.OwnerKey>,
    _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void
  ) throws {
    guard !ids.isEmpty || !owners.isEmpty else { return }
    let ownerKeys = owners.map { "\($0.kind.rawValue):\($0.id)" }
    try forEachEmbeddingEntry(
      """
      \(Self.embeddingEntrySelect) AND (e.id = ANY($2::bigint[])
        OR e.owner_kind || ':' || e.owner_id = ANY($3::text[]))
      ORDER BY e.id
      """, [Self.idArray(ids), .text("{" + ownerKeys.joined(separator: ",") + "}")], body)
  }

  private func forEachEmbeddingEntry(
    _ sql: String, _ arguments: [PostgresValue],
    _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void
  ) throws {
    var scratch: [Float] = []
    for row in try connection.execute(sql, [scope] + arguments).rows {
      try EmbeddingEntry.read(try row.valueRow(), scratch: &scratch, body)
    }
  }

  // MARK: Keyword index

  /// Rewrites every indexed row's terms (`fts_text`) from its text: the repair for rows
  /// written without them, or after the terms' rules change.
  public func rebuildFTS() throws {
    try transaction {
      for row in try connection.execute(
        "SELECT id, speaker, content, created_at FROM messages WHERE user_scope = $1", [scope]
      ).rows {
        let text = PostgresFullText.indexText(
          ofMessage: row.string(2) ?? "", speaker: row.string(1), time: try row.int64(3) ?? 0)
        try run(
          "UPDATE messages SET fts_text = $3 WHERE user_scope = $1 AND id = $2",
          [.int(try row.int64(0) ?? 0), .text(text)])
      }
      for table in ["memories", "summaries"] {
        for row in try connection.execute("SELECT id, content FROM \(table) WHERE user_scope = $1", [scope])
          .rows
        {
          try run(
            "UPDATE \(table) SET fts_text = $3 WHERE user_scope = $1 AND id = $2",
            [.int(try row.int64(0) ?? 0), .text(PostgresFullText.indexText(of: row.string(1) ?? ""))])
        }
      }
    }
  }
}
