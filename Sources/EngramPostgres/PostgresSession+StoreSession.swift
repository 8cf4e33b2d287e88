import EngramCore
import EngramStore
import Foundation

/// A PostgreSQL session is a `StoreSession`: the operations the engine calls, for one user.
extension PostgresSession: StoreSession {
  /// The number of PostgreSQL migrations applied.
  public func userVersion() throws -> Int { try PostgresMigrator.version(connection) }

  /// Every user with a row in the database, in binary order.
  public func storedUsers() throws -> [String] {
    try connection.execute(
      """
      SELECT u FROM (
        SELECT user_scope FROM sessions UNION SELECT user_scope FROM messages UNION SELECT user_scope FROM memories
        UNION SELECT user_scope FROM summaries UNION SELECT user_scope FROM embeddings) s(u)
      ORDER BY u COLLATE "C"
      """
    ).rows.compactMap { $0.string(0) }
  }

  /// The generation, without an epoch: PostgreSQL keeps no vector snapshot file, so no
  /// snapshot is ever trusted.
  public func embeddingState() throws -> (generation: Int64, epoch: String?) {
    (try embeddingGeneration(), nil)
  }

  /// Nothing to draw: the epoch exists only to validate snapshot files, which this store
  /// does not keep (`embeddingState` never reports one).
  public func renewEmbeddingEpoch() throws {}

  /// `vector_snapshot` in the user's own meta.
  public var vectorSnapshotMetaKey: String { Connection.vectorSnapshotKey }

  /// What is wrong with the database for this user: migrations missing, or indexed rows
  /// whose keyword terms are not those of their text (repaired by `rebuildFTS`).
  public func integrityCheck() throws -> [String] {
    var problems: [String] = []
    let version = try PostgresMigrator.version(connection)
    if version != PostgresMigrator.all.count {
      problems.append("schema version \(version), expected \(PostgresMigrator.all.count)")
    }
    for consistency in try ftsConsistency(deep: true) where !consistency.isConsistent {
      problems.append(
        "\(consistency.table): \(consistency.sourceRows) rows, \(consistency.indexedRows) with the terms of their text"
      )
    }
    return problems
  }

  /// Per indexed table: the user's rows and how many are indexed (a `search` vector), and
  /// (`deep`) whether every row's terms are those of its text.
  public func ftsConsistency(deep: Bool) throws -> [FTSConsistency] {
    try ItemKind.allCases.map { kind in
      let table = kind.sourceTable
      let sourceRows = Int(try scalarInt("SELECT count(*) FROM \(table) WHERE user_scope = $1") ?? 0)
      var indexedRows = Int(
        try scalarInt("SELECT count(*) FROM \(table) WHERE user_scope = $1 AND search IS NOT NULL") ?? 0)
      var intact = true
      if deep {
        var matching = 0
        let sql =
          kind == .message
          ? "SELECT speaker, content, created_at, fts_text FROM messages WHERE user_scope = $1"
          : "SELECT NULL, content, 0, fts_text FROM \(table) WHERE user_scope = $1"
        for row in try connection.execute(sql, [scope]).rows {
          let expected =
            kind == .message
            ? PostgresFullText.indexText(
              ofMessage: row.string(1) ?? "", speaker: row.string(0), time: try row.int64(2) ?? 0)
            : PostgresFullText.indexText(of: row.string(1) ?? "")
          if row.string(3) == expected { matching += 1 }
        }
        intact = matching == sourceRows
        indexedRows = min(indexedRows, matching)
      }
      return FTSConsistency(
        table: table, sourceRows: sourceRows, indexedRows: indexedRows, indexIntact: intact)
    }
  }

  /// Columns a table has only in PostgreSQL (never exported).
  static let internalColumns: Set<String> = ["user_scope", "fts_text", "search", "fts_length"]

  /// The user's rows of `table` (its columns as SQLite names them, without the user scope
  /// and the keyword-index columns), ordered by `order`.
  public func forEachExportedRow(
    of table: String, orderedBy order: String, columns: ([String]) throws -> Void,
    _ body: (any ExportedRow) throws -> Void
  ) throws {
    let names = try connection.execute(
      """
      SELECT column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position
      """, [.text(table)]
    ).rows.compactMap { $0.string(0) }.filter { !Self.internalColumns.contains($0) }
    guard !names.isEmpty else {
      throw PostgresError(kind: .statement, sqlState: .undefinedTable, message: "no table \(table)")
    }
    try columns(names)
    let result = try connection.execute(
      "SELECT \(names.joined(separator: ", ")) FROM \(table) WHERE user_scope = $1 ORDER BY \(order)", [scope]
    )
    for row in result.rows {
      try body(try row.valueRow())
    }
  }

  /// Checks the (deferrable) foreign keys at commit.
  public func deferForeignKeys() throws {
    try connection.execute("SET CONSTRAINTS ALL DEFERRED")
  }

  /// The key columns a replacing import matches on.
  static let replaceKeys: [String: [String]] = [
    "meta": ["key"], "preferences": ["key"], "skill_state": ["skill_id"],
  ]

  /// Inserts one exported row for this user (its keyword terms computed from its text; an
  /// explicit id moves the table's sequence past it).
  /// Whether this user holds exactly this exported row (a re-run of the same import).
  ///
  /// The row is found by its id (the key's index); every other column is compared as text:
  /// `json` has no equality operator but keeps its text exactly as written, and a value
  /// cast to text compares as the column's own type does (bytea as hex, numbers in their
  /// shortest form).
  public func exportedRowExists(in table: String, columns: [String], values: [SQLValue]) throws -> Bool {
    var conditions = ["user_scope = $1"]
    var parameters: [PostgresValue] = [scope]
    for (column, value) in zip(columns, values) {
      parameters.append(value.postgres)
      let parameter = "$\(parameters.count)"
      conditions.append(
        column == "id" ? "id = \(parameter)" : "\(column)::text IS NOT DISTINCT FROM \(parameter)::text")
    }
    let sql = "SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(conditions.joined(separator: " AND ")))"
    return try connection.execute(sql, parameters)[0].bool(0) == true
  }

  public func insertExportedRow(into table: String, columns: [String], values: [SQLValue], replacing: Bool)
    throws
  {
    var names = columns
    var parameters = values.map(\.postgres)
    if let fts = Self.ftsText(table: table, columns: columns, values: values) {
      names.append("fts_text")
      parameters.append(.text(fts))
    }
    names.insert("user_scope", at: 0)
    parameters.insert(scope, at: 0)
    let placeholders = (1...names.count).map { "$\($0)" }.joined(separator: ", ")
    var sql = "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(placeholders))"
    if replacing, let keys = Self.replaceKeys[table] {
      let updates = names.filter { $0 != "user_scope" && !keys.contains($0) }.map { "\($0) = excluded.\($0)" }
      sql +=
        " ON CONFLICT (user_scope, \(keys.joined(separator: ", "))) "
        + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", "))
    }
    try connection.execute(sql, parameters)
    if let index = columns.firstIndex(of: "id"), case .integer(let id) = values[index] {
      try advanceSequence(table, past: id)
    }
  }
}

extension PostgresError: StoreDatabaseError {}
