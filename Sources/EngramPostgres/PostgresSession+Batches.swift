import EngramCore
import EngramStore

// Batched writes: many rows in one statement, so an ingest costs a few round trips instead
// of two per turn (and one embedding generation, one change-log batch and one
// notification per statement instead of one per turn).
extension PostgresSession {
  /// Rows per multi-row statement (also bounded by PostgreSQL's 65,535 parameters).
  static let batchRows = 500

  /// The rows of `count` statements' worth of `rows`, in order.
  static func chunks<T>(_ rows: [T], parametersPerRow: Int) -> [ArraySlice<T>] {
    let size = max(1, min(batchRows, 60_000 / max(1, parametersPerRow)))
    return stride(from: 0, to: rows.count, by: size).map { rows[$0..<min($0 + size, rows.count)] }
  }

  /// `VALUES` placeholders for `rows` rows of `columns` parameters, numbered from 1.
  static func valuesList(rows: Int, columns: Int) -> String {
    (0..<rows).map { row in
      "(" + (1...columns).map { "$\(row * columns + $0)" }.joined(separator: ", ") + ")"
    }.joined(separator: ", ")
  }

  /// `count` new ids of `table`'s sequence, ascending.
  func drawIDs(_ table: String, count: Int) throws -> [Int64] {
    try connection.execute(
      "SELECT nextval(pg_get_serial_sequence($1, 'id')) FROM generate_series(1, $2)",
      [.text(table), .int(Int64(count))]
    ).rows.map { try $0.int64(0) ?? 0 }.sorted()
  }

  /// Inserts `records` (none with an id) in one transaction, with multi-row statements; the
  /// ids come from the table's sequence, ascending in the records' order.
  func insertBatch<R: StoredRecord>(_ records: [R]) throws -> [Int64] {
    guard let first = records.first else { return [] }
    let names = ["user_scope", "id"] + (try writeColumns(first)).names
    return try transaction {
      let ids = try drawIDs(R.tableName, count: records.count)
      var offset = 0
      for chunk in Self.chunks(records, parametersPerRow: names.count) {
        var parameters: [PostgresValue] = []
        parameters.reserveCapacity(chunk.count * names.count)
        for record in chunk {
          parameters.append(scope)
          parameters.append(.int(ids[offset]))
          parameters.append(contentsOf: try writeColumns(record).values)
          offset += 1
        }
        try connection.execute(
          "INSERT INTO \(R.tableName) (\(names.joined(separator: ", "))) VALUES "
            + Self.valuesList(rows: chunk.count, columns: names.count), parameters)
      }
      return ids
    }
  }

  /// Inserts or replaces the embeddings of `rows`' owners with multi-row statements (a later
  /// row of the same owner wins, as one upsert after another would).
  public func upsertEmbeddings(_ rows: [EmbeddingRow]) throws {
    guard !rows.isEmpty else { return }
    try EmbeddingRow.validate(rows, embeddingModel: embeddingModel)
    var latest: [String: Int] = [:]
    for (index, row) in rows.enumerated() { latest["\(row.ownerKind.rawValue):\(row.ownerID)"] = index }
    let kept = rows.enumerated().filter { latest["\($1.ownerKind.rawValue):\($1.ownerID)"] == $0 }.map(\.1)
    let columns = 1 + EmbeddingRow.columns.count
    try transaction {
      for chunk in Self.chunks(kept, parametersPerRow: columns) {
        var parameters: [PostgresValue] = []
        parameters.reserveCapacity(chunk.count * columns)
        for row in chunk {
          parameters.append(scope)
          parameters.append(contentsOf: try row.encoded().map(\.postgres))
        }
        try connection.execute(
          """
          INSERT INTO embeddings (user_scope, \(EmbeddingRow.columns.joined(separator: ", ")))
          VALUES \(Self.valuesList(rows: chunk.count, columns: columns))
          ON CONFLICT (user_scope, owner_kind, owner_id) DO UPDATE SET
            model = excluded.model, dimension = excluded.dimension, encoding = excluded.encoding,
            vector = excluded.vector, created_at = excluded.created_at
          """, parameters)
      }
    }
  }
}
