/// A connection that opens, commits and rolls back a transaction, and nests a transaction
/// inside an open one as a savepoint: both stores' connections, which share how
/// (`inTransaction(begin:_:)`, `inSavepoint(_:)`); each says only how its database is asked.
package protocol SavepointNesting: AnyObject {
  /// The savepoints open now (each one's name carries its depth).
  var savepointDepth: Int { get set }
  /// Whether a transaction is open on the connection.
  var isInTransaction: Bool { get }
  /// Runs a `BEGIN`, `SAVEPOINT`, `RELEASE SAVEPOINT`, `ROLLBACK TO SAVEPOINT` or `ROLLBACK`
  /// statement.
  func runTransactionStatement(_ sql: String) throws
  /// Commits the open transaction.
  /// - Throws: the backend's error when the database did not commit (nothing was written).
  func commitTransaction() throws
  /// Whether the open transaction can still commit after its body returned (PostgreSQL
  /// refuses one in which a statement failed and its error was caught).
  /// - Throws: the backend's error naming why it cannot.
  func checkCommittable() throws
  /// Whether a savepoint whose body failed can still be rolled back to (SQLite may have
  /// rolled the whole transaction back already, after `SQLITE_FULL` for example).
  var canRollBackToSavepoint: Bool { get }
}

extension SavepointNesting {
  /// Runs `body` in a transaction opened by `begin`: committed when it returns, rolled back
  /// when it or the commit throws. Inside an open transaction it is a savepoint
  /// (`inSavepoint(_:)`), so calls compose.
  /// - Throws: what `body` throws, or the backend's error (nothing is written then).
  package func inTransaction<T>(begin: String, _ body: () throws -> T) throws -> T {
    if isInTransaction { return try inSavepoint(body) }
    try runTransactionStatement(begin)
    let result: T
    do {
      result = try body()
      try checkCommittable()
      try commitTransaction()
    } catch {
      rollbackQuietly()
      throw error
    }
    return result
  }

  /// Rolls the open transaction back, if one is still open (the database may have rolled it
  /// back already), ignoring errors: the error that led here is the one to report.
  package func rollbackQuietly() {
    if isInTransaction { try? runTransactionStatement("ROLLBACK") }
  }

  /// Runs `body` inside a savepoint: released when it returns, rolled back to (and released)
  /// when it throws, so an inner failure undoes only the inner part.
  /// - Throws: what `body` throws, or the backend's error.
  package func inSavepoint<T>(_ body: () throws -> T) throws -> T {
    savepointDepth += 1
    defer { savepointDepth -= 1 }
    let name = "engram_sp\(savepointDepth)"
    try runTransactionStatement("SAVEPOINT \(name)")
    do {
      let result = try body()
      try runTransactionStatement("RELEASE SAVEPOINT \(name)")
      return result
    } catch {
      if canRollBackToSavepoint {
        try? runTransactionStatement("ROLLBACK TO SAVEPOINT \(name)")
        try? runTransactionStatement("RELEASE SAVEPOINT \(name)")
      }
      throw error
    }
  }
}
