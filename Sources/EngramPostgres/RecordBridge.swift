import EngramStore

/// Reads and writes the store's record types (``StoredRecord``, ``Preference``,
/// ``SkillState``) for PostgreSQL through their own SQLite binding code, so both stores share
/// one definition of every column: a record binds itself to a one-row `SELECT ?1, ?2, ...` of
/// an in-memory SQLite database, whose values become PostgreSQL parameters; a PostgreSQL row's
/// values are bound to the same kind of statement and the record reads itself from it (its
/// enum, JSON and UTF-8 checks included).
///
/// Not `Sendable`: one per ``PostgresSession``.

final class RecordBridge {
  private let scratch: Connection

  init() throws {
    scratch = try Connection(path: ":memory:")
    // The embedding model a vector is validated against (EmbeddingRow.validate reads meta).
    try scratch.execute("CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
  }

  /// A one-row statement selecting `count` parameters.
  private func selectStatement(_ count: Int) throws -> Statement {
    try scratch.cachedStatement("SELECT " + (1...max(count, 1)).map { "?\($0)" }.joined(separator: ", "))
  }

  /// The values `bind` binds to parameters 1...count.
  func values(count: Int, _ bind: (Statement) throws -> Void) throws -> [SQLValue] {
    let statement = try selectStatement(count)
    defer { statement.reset() }
    try bind(statement)
    guard try statement.step() else { return [] }
    return (0..<count).map { statement.value(at: $0) }
  }

  /// The non-id column values of `record`, in `R.columns` order.
  func columnValues<R: StoredRecord>(_ record: R) throws -> [SQLValue] {
    try values(count: R.columns.count) { try record.bind(to: $0) }
  }

  /// Reads a record from `values` (`read` sees them as a row at columns 0...).
  func read<T>(_ values: [SQLValue], _ read: (Statement) throws -> T) throws -> T {
    let statement = try selectStatement(values.count)
    defer { statement.reset() }
    try statement.bind(values)
    _ = try statement.step()
    return try read(statement)
  }

  /// Reads every row of `result` with `read`.
  func readAll<T>(_ result: PostgresResult, _ read: (Statement) throws -> T) throws -> [T] {
    try result.rows.map { row in
      try self.read(try (0..<result.columnCount).map { try row.sqlValue($0) }, read)
    }
  }

  /// Validates `record` as the SQLite store does; an embedding against `model`.
  func validate<R: StoredRecord>(_ record: R, model: EmbeddingModel?) throws {
    if R.self == EmbeddingRow.self {
      try scratch.execute("DELETE FROM meta")
      if let model {
        try scratch.setMeta("embedding_model", model.name)
        try scratch.setMeta("embedding_dimension", String(model.dimension))
      }
    }
    try record.validate(in: scratch)
  }
}

extension SQLValue {
  /// The value as a PostgreSQL parameter: numbers as untyped text, so that the server reads
  /// each as its column's type (an integer 0 or 1 as a boolean, too).
  var postgres: PostgresValue {
    switch self {
    case .null: .null
    case .integer(let value): .text(String(value))
    case .real(let value): .double(value)
    case .text(let value): .text(value)
    case .blob(let value): .bytes(value)
    }
  }
}
