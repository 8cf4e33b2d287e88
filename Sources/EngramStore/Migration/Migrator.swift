/// Applies the schema migrations to a connection.
///
/// `PRAGMA user_version` holds how many migrations were applied; each missing one runs in
/// its own transaction together with the version bump, so a failure leaves the database at
/// the previous version.
public enum Migrator {
  /// Throws `StoreError.schemaTooNew` when the database is ahead of `migrations`, without
  /// writing anything; returns the database's version otherwise.
  public static func checkVersion(
    _ connection: Connection, migrations: [Migration] = Migration.all
  ) throws -> Int {
    try Migration.checkedVersion({ try connection.userVersion() }, of: connection.path, against: migrations)
  }

  /// Applies the migrations the database lacks; returns how many were applied.
  /// - Throws: `StoreError.schemaTooNew`, `StoreError.invalidMigrations`, `SQLiteError`.
  @discardableResult
  public static func migrate(_ connection: Connection, migrations: [Migration] = Migration.all) throws -> Int
  {
    let found = try checkVersion(connection, migrations: migrations)
    var applied = 0
    guard found < migrations.count else { return 0 }
    // Foreign keys are off while migrations run (SQLite's procedure for rebuilding a table:
    // dropping a referenced table then runs no ON DELETE action), and every reference is
    // checked before each migration commits.
    try connection.execute("PRAGMA foreign_keys = OFF")
    defer { try? connection.execute("PRAGMA foreign_keys = ON") }
    for migration in migrations where migration.version > found {
      try connection.transaction(.immediate) {
        // Another process may have migrated between the check and the lock.
        guard try connection.userVersion() < migration.version else { return }
        try connection.execute(migration.sql)
        if let table = try connection.scalarString("SELECT \"table\" FROM pragma_foreign_key_check LIMIT 1") {
          throw StoreError.invalidColumnValue(
            table: table, column: "(foreign key)",
            value: "a reference broken by migration \(migration.version)")
        }
        try connection.execute("PRAGMA user_version = \(migration.version)")
        applied += 1
      }
    }
    if applied > 0 { connection.clearStatementCache() }
    return applied
  }
}
