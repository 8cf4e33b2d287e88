import EngramCore
import Foundation

@testable import EngramStore

/// Rows written and read the way the store did before migration 6 (no `user_id` column),
/// for the tests that build a database at an older version and migrate it.
extension Connection {
  /// Inserts `record` into a table without `user_id`; returns its id.
  @discardableResult
  func legacyInsert<R: StoredRecord>(_ record: R) throws -> Int64 {
    let names = R.columns + ["id"]
    let placeholders = (1...names.count).map { "?\($0)" }.joined(separator: ", ")
    let statement = try prepare(
      "INSERT INTO \(R.tableName) (\(names.joined(separator: ", "))) VALUES (\(placeholders))")
    try record.bind(to: statement)
    try statement.bind(record.id, at: R.columns.count + 1)
    try statement.execute()
    return lastInsertRowID
  }

  /// Every row of `type`, in id order, from a table without `user_id`.
  func legacyList<R: StoredRecord>(_ type: R.Type) throws -> [R] {
    try prepare("SELECT \(R.selectList) FROM \(R.tableName) ORDER BY id").map { try R(row: $0) }
  }

  /// Stores an embedding row in a table without `user_id`.
  func legacyInsertEmbedding(_ row: EmbeddingRow) throws {
    let statement = try prepare(
      """
      INSERT INTO embeddings (owner_kind, owner_id, model, dimension, vector, created_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6)
      """)
    try row.bind(to: statement)
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
    try row.bind(to: statement)
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
