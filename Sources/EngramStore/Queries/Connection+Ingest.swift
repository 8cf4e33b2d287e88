import EngramCore

/// A turn an earlier ingest stored: its row and whether it has its embedding yet.
public struct IngestedTurn: Sendable, Hashable {
  /// The message's row id.
  public var id: Int64
  /// Whether the message has an embedding (an ingest stopped before embedding it has not).
  public var embedded: Bool

  /// Creates a description.
  public init(id: Int64, embedded: Bool) {
    self.id = id
    self.embedded = embedded
  }
}

// Named queries of idempotent ingest and remember.
extension Connection {
  /// The stored turns among `keys` (this user's `source_key`s), by key.
  public func ingestedTurns(sourceKeys keys: [Int64]) throws -> [Int64: IngestedTurn] {
    let statement = try cachedStatement(
      """
      SELECT m.id, EXISTS (SELECT 1 FROM embeddings e WHERE e.owner_kind = 'message' AND e.owner_id = m.id)
      FROM messages m WHERE m.user_id = ?1 AND m.source_key = ?2
      """)
    var found: [Int64: IngestedTurn] = [:]
    for key in keys {
      try statement.bind(user, at: 1)
      try statement.bind(key, at: 2)
      if let turn = try statement.first({ IngestedTurn(id: $0.int64(at: 0), embedded: $0.bool(at: 1)) }) {
        found[key] = turn
      }
    }
    return found
  }

  /// This user's current (not superseded) memory of `kind` whose text is exactly `content`
  /// (for the same `scopeUser`), if any, found through `memories_content_prefix`. The `+` keeps
  /// SQLite from propagating `content = ?3` into the prefix test (which then always holds and
  /// no longer selects the index: every memory's text was compared).
  public func identicalMemory(content: String, kind: MemoryKind, scopeUser: String?) throws -> Int64? {
    let statement = try cachedStatement(
      """
      SELECT id FROM memories
      WHERE user_id = ?1 AND substr(content, 1, 64) = substr(?3, 1, 64)
        AND kind = ?2 AND +content = ?3 AND superseded_by IS NULL AND scope_user IS ?4 ORDER BY id LIMIT 1
      """)
    try statement.bind(user, at: 1)
    try statement.bind(kind.rawValue, at: 2)
    try statement.bind(content, at: 3)
    try statement.bind(scopeUser, at: 4)
    return try statement.first { $0.int64(at: 0) }
  }
}
