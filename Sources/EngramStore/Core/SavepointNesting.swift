/// A connection that nests a transaction inside an open one as a savepoint: both stores'
/// connections, which share how (`inSavepoint(_:)`).
package protocol SavepointNesting: AnyObject {
  /// The savepoints open now (each one's name carries its depth).
  var savepointDepth: Int { get set }
  /// Runs a `SAVEPOINT`, `RELEASE SAVEPOINT` or `ROLLBACK TO SAVEPOINT` statement.
  func runSavepointStatement(_ sql: String) throws
  /// Whether a savepoint whose body failed can still be rolled back to (SQLite may have
  /// rolled the whole transaction back already, after `SQLITE_FULL` for example).
  var canRollBackToSavepoint: Bool { get }
}

extension SavepointNesting {
  /// Runs `body` inside a savepoint: released when it returns, rolled back to (and released)
  /// when it throws, so an inner failure undoes only the inner part.
  /// - Throws: what `body` throws, or the backend's error.
  package func inSavepoint<T>(_ body: () throws -> T) throws -> T {
    savepointDepth += 1
    defer { savepointDepth -= 1 }
    let name = "engram_sp\(savepointDepth)"
    try runSavepointStatement("SAVEPOINT \(name)")
    do {
      let result = try body()
      try runSavepointStatement("RELEASE SAVEPOINT \(name)")
      return result
    } catch {
      if canRollBackToSavepoint {
        try? runSavepointStatement("ROLLBACK TO SAVEPOINT \(name)")
        try? runSavepointStatement("RELEASE SAVEPOINT \(name)")
      }
      throw error
    }
  }
}
