import EngramCore
import EngramStore
import Foundation

// The named queries PostgreSQL runs its own way, for one user (the others are written once
// for both stores, over SQLSession: EngramStore's Queries/ and the records' own).
extension PostgresSession {
  // MARK: Items

  /// The user's distinct speakers, in binary order (one index seek per name).
  public func distinctSpeakers() throws -> [String] {
    try connection.execute(
      """
      WITH RECURSIVE names(name) AS (
        SELECT (SELECT speaker FROM messages WHERE user_scope = $1 AND speaker IS NOT NULL
                ORDER BY speaker COLLATE "C" LIMIT 1)
        UNION ALL
        SELECT (SELECT speaker FROM messages WHERE user_scope = $1 AND speaker COLLATE "C" > names.name
                ORDER BY speaker COLLATE "C" LIMIT 1)
        FROM names WHERE names.name IS NOT NULL
      )
      SELECT name FROM names WHERE name IS NOT NULL
      """, [scope]
    ).rows.compactMap { $0.string(0) }
  }

  // MARK: Maintenance

  /// The user's row counts of the reported tables.
  public func rowCounts() throws -> [String: Int] {
    var counts: [String: Int] = [:]
    for table in reportedTables {
      counts[table] = Int(try scalarInt("SELECT count(*) FROM \(table) WHERE user_scope = $1") ?? 0)
    }
    return counts
  }

  private static let orphanCondition = """
    (owner_kind = 'message' AND NOT EXISTS (SELECT 1 FROM messages t WHERE t.user_scope = e.user_scope AND t.id = e.owner_id))
      OR (owner_kind = 'memory' AND NOT EXISTS (SELECT 1 FROM memories t WHERE t.user_scope = e.user_scope AND t.id = e.owner_id))
      OR (owner_kind = 'summary' AND NOT EXISTS (SELECT 1 FROM summaries t WHERE t.user_scope = e.user_scope AND t.id = e.owner_id))
    """

  /// The user's embeddings against their owners and `model`.
  public func embeddingCensus(model: String, dimension: Int) throws -> EmbeddingCensus {
    var missing: Int64 = 0
    for kind in ItemKind.allCases {
      missing +=
        try scalarInt(
          """
          SELECT count(*) FROM \(kind.sourceTable) t WHERE t.user_scope = $1 AND NOT EXISTS
          (SELECT 1 FROM embeddings e WHERE e.user_scope = $1 AND e.owner_kind = $2 AND e.owner_id = t.id)
          """, [.text(kind.rawValue)]) ?? 0
    }
    let orphaned =
      try scalarInt("SELECT count(*) FROM embeddings e WHERE e.user_scope = $1 AND (\(Self.orphanCondition))")
      ?? 0
    let foreign =
      try scalarInt(
        "SELECT count(*) FROM embeddings WHERE user_scope = $1 AND (model <> $2 OR dimension <> $3)",
        [.text(model), .int(Int64(dimension))]) ?? 0
    let stored = try scalarInt("SELECT count(*) FROM embeddings WHERE user_scope = $1") ?? 0
    return EmbeddingCensus(
      missing: Int(missing), orphaned: Int(orphaned), foreign: Int(foreign), stored: Int(stored))
  }

  /// Deletes the user's embeddings whose owner is gone; returns how many.
  public func deleteOrphanEmbeddings() throws -> Int {
    try run("DELETE FROM embeddings e WHERE e.user_scope = $1 AND (\(Self.orphanCondition))")
  }

  /// The user's stored turns among `keys` (ingest `source_key`s), by key.
  public func ingestedTurns(sourceKeys keys: [Int64]) throws -> [Int64: IngestedTurn] {
    guard !keys.isEmpty else { return [:] }
    var found: [Int64: IngestedTurn] = [:]
    for row in try connection.execute(
      """
      SELECT m.source_key, m.id, EXISTS (
        SELECT 1 FROM embeddings e WHERE e.user_scope = $1 AND e.owner_kind = 'message' AND e.owner_id = m.id)
      FROM messages m WHERE m.user_scope = $1 AND m.source_key = ANY($2::bigint[])
      """, [scope, Self.idArray(keys)]
    ).rows {
      found[try row.int64(0) ?? 0] = IngestedTurn(
        id: try row.int64(1) ?? 0, embedded: try row.bool(2) ?? false)
    }
    return found
  }

  /// The user's current memory of `kind` with exactly `content` (same `scopeUser`), if any.
  public func identicalMemory(content: String, kind: MemoryKind, scopeUser: String?) throws -> Int64? {
    try connection.execute(
      """
      SELECT id FROM memories WHERE user_scope = $1 AND left(content, 64) = left($3, 64) AND kind = $2
        AND content = $3 AND superseded_by IS NULL
        AND scope_user IS NOT DISTINCT FROM $4 ORDER BY id LIMIT 1
      """, [scope, .text(kind.rawValue), .text(content), scopeUser.map(PostgresValue.text) ?? .null]
    ).rows.first.flatMap { try $0.int64(0) }
  }
}
