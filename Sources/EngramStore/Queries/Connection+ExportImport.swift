import EngramCore

/// The tables whose rows belong to one user (`user_id`, migration 6): every table but `meta`.
public let perUserTables: Set<String> = [
  "sessions", "messages", "summaries", "memories", "embeddings", "preferences", "skill_state", "traces",
  "pending_calls", "agent_items",
]

// Named queries of export and import (a table's rows as they are stored, column by column).
extension Connection {
  /// A statement over every row of `table` (this user's, for a per-user table, without the
  /// `user_id` column), ordered by `order` (column names of the schema, never user text).
  public func exportRows(of table: String, orderedBy order: String) throws -> Statement {
    guard perUserTables.contains(table) else {
      return try prepare("SELECT * FROM \(table) ORDER BY \(order)")
    }
    let columns = try prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
      .bindingAndMap([.text(table)]) { $0.string(at: 0) }
      .filter { $0 != "user_id" }
    // Ordered by row id: `+user_id` keeps the user filter from picking the per-user index,
    // whose order is not the id's (SQLite then sorted every row in memory, the embeddings'
    // vectors included: 160 MB at 100,000 turns); the rows stream in row-id order instead.
    // Tables keyed by text lead their primary key with `user_id`: that index is the order.
    let filter = order == "id" ? "+user_id" : "user_id"
    // An embedding's NULL model is the database's (migration 8): exports name it, as before.
    let selected = columns.map { column in
      table == "embeddings" && column == "model"
        ? "coalesce(model, (SELECT value FROM meta WHERE key = 'embedding_model')) AS model" : column
    }
    let statement = try prepare(
      "SELECT \(selected.joined(separator: ", ")) FROM \(table) WHERE \(filter) = ?1 ORDER BY \(order)")
    try statement.bind([.text(user)])
    return statement
  }

  /// The first row whose reference points at no row (`PRAGMA foreign_key_check`), if any: its
  /// table, its rowid, and the table it refers to. An import checks this before it commits,
  /// so it can name the export line instead of failing with SQLite's bare constraint error.
  public func firstDanglingReference() throws -> DanglingReference? {
    // SQLite counts unresolved deferred references: the whole-database scan runs only when
    // one is there, so a sound import does not pay for it.
    guard unresolvedDeferredReferences else { return nil }
    let statement = try prepare("PRAGMA foreign_key_check")
    return try statement.first { row in
      DanglingReference(
        table: row.string(at: 0), rowid: row.isNull(at: 1) ? nil : row.int64(at: 1), parent: row.string(at: 2)
      )
    }
  }

  /// How many of this user's rows of `table` have a rowid below `rowid` (nil for a table that
  /// is not per-user: only those hold references).
  public func userRows(in table: String, before rowid: Int64) throws -> Int? {
    guard perUserTables.contains(table) else { return nil }
    let count = try scalarInt(
      "SELECT count(*) FROM \(table) WHERE user_id = ?1 AND rowid < ?2", [.text(user), .integer(rowid)])
    return count.map(Int.init)
  }

  /// Checks foreign keys at commit instead of per statement (an import inserts rows in
  /// table order, not in reference order).
  public func deferForeignKeys() throws {
    try execute("PRAGMA defer_foreign_keys = ON")
  }

  /// Inserts one row of `table` from exported columns (names checked by the caller:
  /// ASCII letters and underscores); `replacing` replaces a row with the same key. A row of
  /// a per-user table belongs to this connection's user.
  /// - Throws: `StoreError.invalidColumnValue` for a `user_id` column (an export names no
  ///   user); `SQLiteError`.
  public func insertExportedRow(
    into table: String, columns: [String], values: [SQLValue], replacing: Bool
  ) throws {
    var columns = columns
    var values = values
    if perUserTables.contains(table) {
      guard !columns.contains("user_id") else {
        throw StoreError.invalidColumnValue(
          table: table, column: "user_id", value: "(an export names no user)")
      }
      columns.append("user_id")
      values.append(.text(user))
    }
    if table == "embeddings" { try storeSmaller(embeddingColumns: columns, values: &values) }
    let placeholders = (1...max(columns.count, 1)).map { "?\($0)" }.joined(separator: ", ")
    let verb = replacing ? "INSERT OR REPLACE" : "INSERT"
    try run("\(verb) INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))", values)
  }

  /// Whether this user's `table` holds a row exactly as `insertExportedRow` would store
  /// these values (a re-import of an export already imported).
  public func exportedRowExists(in table: String, columns: [String], values: [SQLValue]) throws -> Bool {
    var columns = columns
    var values = values
    if perUserTables.contains(table) {
      columns.append("user_id")
      values.append(.text(user))
    }
    if table == "embeddings" { try storeSmaller(embeddingColumns: columns, values: &values) }
    let conditions = columns.enumerated().map { "\($0.element) IS ?\($0.offset + 1)" }.joined(
      separator: " AND ")
    return try scalarInt("SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(conditions))", values) == 1
  }

  /// An imported embedding row as `EmbeddingRow.encodeStored(to:)` writes one: a plain float32
  /// vector packed when smaller, the database's model as NULL. Anything else is left for the
  /// table's checks to judge.
  func storeSmaller(embeddingColumns columns: [String], values: inout [SQLValue]) throws {
    func index(_ name: String) -> Int? { columns.firstIndex(of: name) }
    if let model = index("model"), case .text(let name) = values[model], name == (try embeddingModel())?.name
    {
      values[model] = .null
    }
    guard let vector = index("vector"), let dimension = index("dimension"),
      case .blob(let bytes) = values[vector], case .integer(let count) = values[dimension],
      count > 0, bytes.count == 4 * Int(count)
    else { return }
    if let encoding = index("encoding"), case .text(let name) = values[encoding], name != "f32" { return }
    values[vector] = .blob(bytes.withUnsafeBytes { EmbeddingCodec.encodeFloat32(plain: $0) })
  }
}
