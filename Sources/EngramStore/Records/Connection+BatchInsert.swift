import CSQLite

extension Connection {
  /// Inserts `records` in order, all or nothing, and returns their row ids in order.
  ///
  /// The result is the same as calling `insert(_:)` for each record inside one savepoint:
  /// a record's own `id` is used when set; otherwise it gets the id SQLite would give a
  /// single insert at that point (one more than the largest id so far). It is much faster
  /// for tables indexed by FTS triggers (`messages`, `memories`, `summaries`): an INSERT
  /// that fires a trigger opens a statement savepoint, and FTS5 writes its pending terms
  /// out as a new index segment at every savepoint. Rows are therefore inserted by
  /// multi-row `INSERT ... VALUES` statements of up to SQLite's parameter limit (3,640
  /// messages), which pay that flush once per statement instead of once per row. Use it for
  /// batches; it needs no open transaction.
  /// - Throws: the validation error of the first invalid record, or `SQLiteError`
  ///   (`.constraint`, for example a duplicate id); nothing is written then.
  /// - Complexity: O(n); one statement per chunk of rows.
  @discardableResult
  public func insert<R: StoredRecord>(contentsOf records: [R]) throws -> [Int64] {
    try R.validate(records, embeddingModel: embeddingModel)
    guard records.count > 1 else { return try records.map { try insert($0) } }
    return try transaction {
      guard var lastID = try largestID(R.self) else {
        // SQLite picks random ids once the largest possible id is taken; let it.
        return try records.map { try insert($0) }
      }
      var ids: [Int64] = []
      ids.reserveCapacity(records.count)
      for record in records {
        if let id = record.id {
          ids.append(id)
          lastID = Swift.max(lastID, id)
        } else if lastID < Int64.max {
          lastID += 1
          ids.append(lastID)
        } else {
          // An explicit id took the largest possible id: from here on SQLite picks random
          // free ids, which only single inserts reproduce. Nothing is written yet.
          return try records.map { try insert($0) }
        }
      }
      try insertRows(records, ids: ids)
      return ids
    }
  }

  /// The largest id `R`'s table has ever used (0 when none), or nil when it is `Int64.max`.
  ///
  /// For an AUTOINCREMENT table (migration 3) that is the larger of its largest id and
  /// `sqlite_sequence`'s record, so a batch never reuses the id of a deleted row.
  private func largestID<R: StoredRecord>(_ type: R.Type) throws -> Int64? {
    let statement = try recordStatement(R.self, .maxID) {
      let sequenced =
        (try? scalarInt("SELECT count(*) FROM main.sqlite_schema WHERE name = 'sqlite_sequence'")) ?? 0
      guard sequenced > 0 else { return "SELECT coalesce(max(id), 0) FROM main.\(R.tableName)" }
      return """
        SELECT max(coalesce((SELECT max(id) FROM main.\(R.tableName)), 0),
          coalesce((SELECT seq FROM main.sqlite_sequence WHERE name = '\(R.tableName)'), 0))
        """
    }
    let largest = try statement.first { $0.int64(at: 0) } ?? 0
    return largest == Int64.max ? nil : largest
  }

  /// Inserts `records` with their final `ids` by multi-row `INSERT ... VALUES` statements of
  /// as many rows as SQLite's parameter limit allows, split evenly (at most two sizes).
  private func insertRows<R: StoredRecord>(_ records: [R], ids: [Int64]) throws {
    let width = R.columns.count + 2
    let limit = Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
    let maxRows = Swift.max(1, limit / width)
    let chunks = (records.count + maxRows - 1) / maxRows
    let base = records.count / chunks
    let extra = records.count % chunks
    var start = 0
    var values: [SQLValue] = []
    for chunk in 0..<chunks {
      let rows = base + (chunk < extra ? 1 : 0)
      let statement = try multiRowInsert(R.self, rows: rows)
      for row in 0..<rows {
        values.removeAll(keepingCapacity: true)
        try records[start + row].encodeStored(to: &values)
        values.append(.integer(ids[start + row]))
        values.append(.text(user))
        try statement.bind(values, startingAt: row * width + 1)
      }
      try statement.execute()
      start += rows
    }
  }

  /// The cached `INSERT INTO table (columns, id) VALUES (...), ...` of `rows` rows.
  private func multiRowInsert<R: StoredRecord>(_ type: R.Type, rows: Int) throws -> Statement {
    let key = RecordStatementKey(type: ObjectIdentifier(R.self), operation: rows)
    if let statement = batchStatements[key] {
      statement.clear()
      return statement
    }
    let names = (R.columns + ["id", "user_id"]).joined(separator: ", ")
    let row = "(" + Array(repeating: "?", count: R.columns.count + 2).joined(separator: ",") + ")"
    var sql = "INSERT INTO main.\(R.tableName) (\(names)) VALUES "
    sql.reserveCapacity(sql.utf8.count + rows * (row.utf8.count + 1))
    for index in 0..<rows {
      if index > 0 { sql += "," }
      sql += row
    }
    let statement = try prepare(sql)
    // A statement of thousands of rows is a large program: keep only a few sizes.
    if batchStatements.count >= 4 { batchStatements.removeAll() }
    batchStatements[key] = statement
    return statement
  }
}
