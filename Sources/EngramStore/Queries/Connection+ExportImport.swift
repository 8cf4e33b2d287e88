import EngramCore

// Named queries of export and import (a table's rows as they are stored, column by column).
extension Connection {
  /// A statement over every row of `table`, ordered by `order` (column names of the
  /// schema, never user text), with every column.
  public func exportRows(of table: String, orderedBy order: String) throws -> Statement {
    try prepare("SELECT * FROM \(table) ORDER BY \(order)")
  }

  /// Whether any of `reportedTables` holds a row (an import needs an empty memory).
  public func holdsItems() throws -> Bool {
    for table in reportedTables where try scalarInt("SELECT EXISTS (SELECT 1 FROM \(table))") ?? 0 != 0 {
      return true
    }
    return false
  }

  /// Checks foreign keys at commit instead of per statement (an import inserts rows in
  /// table order, not in reference order).
  public func deferForeignKeys() throws {
    try execute("PRAGMA defer_foreign_keys = ON")
  }

  /// Inserts one row of `table` from exported columns (names checked by the caller:
  /// ASCII letters and underscores); `replacing` replaces a row with the same key.
  public func insertExportedRow(
    into table: String, columns: [String], values: [SQLValue], replacing: Bool
  ) throws {
    let placeholders = (1...max(columns.count, 1)).map { "?\($0)" }.joined(separator: ", ")
    let verb = replacing ? "INSERT OR REPLACE" : "INSERT"
    try run("\(verb) INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))", values)
  }
}
