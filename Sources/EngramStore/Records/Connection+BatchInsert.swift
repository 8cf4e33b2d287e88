extension Connection {
  /// Inserts `records` in order, all or nothing, and returns their row ids in order.
  ///
  /// The result is the same as calling `insert(_:)` for each record inside one savepoint:
  /// a record's own `id` is used when set; otherwise it gets the id SQLite would give a
  /// single insert at that point (one more than the largest id so far). It is much faster
  /// for tables indexed by FTS triggers (`messages`, `memories`, `summaries`): an INSERT
  /// that fires a trigger opens a statement savepoint, and FTS5 writes its pending terms
  /// out as a new index segment at every savepoint. Rows are therefore staged in a
  /// temporary table and moved with one `INSERT ... SELECT`, which pays that flush once per
  /// call instead of once per row. Use it for batches; it needs no open transaction.
  /// - Throws: the validation error of the first invalid record, or `SQLiteError`
  ///   (`.constraint`, for example a duplicate id); nothing is written then.
  /// - Complexity: O(n) statements into the staging table plus one statement that inserts
  ///   the n rows.
  @discardableResult
  public func insert<R: StoredRecord>(contentsOf records: [R]) throws -> [Int64] {
    for record in records { try record.validate(in: self) }
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
        } else {
          lastID += 1
          ids.append(lastID)
        }
      }
      try stage(records, ids: ids)
      try recordStatement(R.self, .moveStaged) {
        let names = (R.columns + ["id"]).joined(separator: ", ")
        return
          "INSERT INTO main.\(R.tableName) (\(names)) SELECT \(names) FROM temp.\(Self.stagingTable(R.self)) ORDER BY engram_seq"
      }.execute()
      try recordStatement(R.self, .clearStaged) { "DELETE FROM temp.\(Self.stagingTable(R.self))" }.execute()
      return ids
    }
  }

  /// The largest id of `R`'s table (0 when empty), or nil when it is `Int64.max`.
  private func largestID<R: StoredRecord>(_ type: R.Type) throws -> Int64? {
    let statement = try recordStatement(R.self, .maxID) {
      "SELECT coalesce(max(id), 0) FROM main.\(R.tableName)"
    }
    let largest = try statement.first { $0.int64(at: 0) } ?? 0
    return largest == Int64.max ? nil : largest
  }

  /// Writes `records` with their final `ids` into the connection's staging table of `R`.
  private func stage<R: StoredRecord>(_ records: [R], ids: [Int64]) throws {
    let table = Self.stagingTable(R.self)
    // A temporary table lives with this connection only and is never part of the file.
    try execute(
      "CREATE TEMP TABLE IF NOT EXISTS \(table) (engram_seq INTEGER PRIMARY KEY, \((R.columns + ["id"]).joined(separator: ", ")))"
    )
    try recordStatement(R.self, .clearStaged) { "DELETE FROM temp.\(table)" }.execute()
    let statement = try recordStatement(R.self, .stage) {
      let names = R.columns + ["id"]
      let placeholders = (1...names.count).map { "?\($0)" }.joined(separator: ", ")
      return "INSERT INTO temp.\(table) (\(names.joined(separator: ", "))) VALUES (\(placeholders))"
    }
    for (record, id) in zip(records, ids) {
      try record.bind(to: statement)
      try statement.bind(id, at: R.columns.count + 1)
      try statement.execute()
    }
  }

  private static func stagingTable<R: StoredRecord>(_ type: R.Type) -> String {
    "engram_stage_\(R.tableName)"
  }
}
