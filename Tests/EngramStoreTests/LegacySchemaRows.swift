import EngramCore
import Foundation

@testable import EngramStore

/// Rows written and read the way the store did at an older version (before migration 6, no
/// `user_id` column; columns later migrations added left out), for the tests that build a
/// database at an older version and migrate it.
extension Connection {
  /// Inserts `record` into a table without `user_id`; returns its id.
  @discardableResult
  func legacyInsert<R: StoredRecord>(_ record: R) throws -> Int64 {
    // Columns later migrations added are left out (their parameters stay unused).
    let existing = try legacyColumns(R.tableName)
    let kept = R.columns.enumerated().filter { existing.contains($0.element) }
    // From migration 6 on, rows belong to the connection's user.
    let owned = existing.contains("user_id")
    let names = kept.map(\.element) + ["id"] + (owned ? ["user_id"] : [])
    let placeholders =
      (kept.map { "?\($0.offset + 1)" } + ["?\(R.columns.count + 1)"]
      + (owned ? ["?\(R.columns.count + 2)"] : []))
      .joined(separator: ", ")
    let statement = try prepare(
      "INSERT INTO \(R.tableName) (\(names.joined(separator: ", "))) VALUES (\(placeholders))")
    try statement.bind(try record.encoded())
    try statement.bind(record.id, at: R.columns.count + 1)
    if owned { try statement.bind(user, at: R.columns.count + 2) }
    try statement.execute()
    return lastInsertRowID
  }

  /// Every row of `type`, in id order, from a table without `user_id`.
  func legacyList<R: StoredRecord>(_ type: R.Type) throws -> [R] {
    let existing = try legacyColumns(R.tableName)
    let list = (["id"] + R.columns.map { existing.contains($0) ? $0 : "NULL" }).joined(separator: ", ")
    return try prepare("SELECT \(list) FROM \(R.tableName) ORDER BY id").map { try R(row: $0) }
  }

  /// The columns `table` has at this database's version.
  func legacyColumns(_ table: String) throws -> Set<String> {
    Set(try prepare("SELECT name FROM pragma_table_info('\(table)')").map { $0.string(at: 0) })
  }

  /// Stores an embedding row in a table without `user_id`.
  func legacyInsertEmbedding(_ row: EmbeddingRow) throws {
    let statement = try prepare(
      """
      INSERT INTO embeddings (owner_kind, owner_id, model, dimension, vector, created_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6)
      """)
    try statement.bind(try row.encoded())
    try statement.execute()
  }

  /// Stores an embedding row as the store did from migration 6 to 7: the model named in
  /// every row, the vector plain float32 (migration 8 admits NULL and packed vectors).
  func insertEmbeddingBeforeMigration8(_ row: EmbeddingRow) throws {
    let statement = try prepare(
      """
      INSERT INTO embeddings (owner_kind, owner_id, model, dimension, vector, created_at, user_id)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
      """)
    try statement.bind(try row.encoded())
    try statement.bind(user, at: 7)
    try statement.execute()
  }

  /// The owner ids a keyword search of `table` finds, best first (the full-text index alone,
  /// as before users).
  func legacySearch(_ query: String, table: String) throws -> [Int64] {
    guard let expression = FTSQuery.matchExpression(for: query) else { return [] }
    let statement = try prepare(
      "SELECT rowid FROM \(table)_fts WHERE \(table)_fts MATCH ?1 ORDER BY bm25(\(table)_fts), rowid")
    try statement.bind(expression, at: 1)
    return try statement.map { $0.int64(at: 0) }
  }
}
