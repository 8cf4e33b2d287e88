/// A SQLite connection runs the queries written once for every store: their `$N`
/// parameters become SQLite's `?N`, the statement is cached per connection, `$1` is the
/// connection's `user`.
extension Connection: SQLSession {
  /// SQLite.
  public var dialect: SQLDialect { .sqlite }

  /// Runs `sql` through the statement cache; returns the rows changed.
  @discardableResult
  public func execute(scoped sql: String, _ arguments: [SQLValue]) throws -> Int {
    try bound(sql, arguments).execute()
    return changes
  }

  /// Steps `sql` through the statement cache, the statement itself as the row.
  public func forEachRow(scoped sql: String, _ arguments: [SQLValue], _ body: (any Row) throws -> Void) throws
  {
    try bound(sql, arguments).forEachRow { try body($0) }
  }

  /// `transaction` (a savepoint inside an open one).
  public func atomically<T>(_ body: () throws -> T) throws -> T {
    try transaction { try body() }
  }

  /// The cached statement of `sql` with the user at `?1` (when it has parameters) and
  /// `arguments` after it.
  private func bound(_ sql: String, _ arguments: [SQLValue]) throws -> Statement {
    let statement = try sharedStatement(sql)
    if statement.parameterCount > 0 { try statement.bind(user, at: 1) }
    try statement.bind(arguments, startingAt: 2)
    return statement
  }
}
