import EngramStore

/// Applies the PostgreSQL schema (schemas/postgres, compiled in by
/// scripts/generate-migrations.sh postgres) to a database.
///
/// `engram_schema` lists the migrations applied (each file records its own version). Each
/// missing migration runs in its own transaction under an advisory lock, so a failure leaves
/// the database at the previous version and two processes opening a new database at once
/// apply each migration once.

public enum PostgresMigrator {
  /// The migrations compiled into this binary, in order.
  public static var all: [Migration] { generated }

  /// The advisory lock key migrations hold (an arbitrary constant: "engram" in ASCII).
  static let lockKey: Int64 = 0x656E_6772_616D

  /// The highest migration applied to the database (0 for an empty database).
  public static func version(_ connection: PostgresConnection) throws -> Int {
    let exists = try connection.execute("SELECT to_regclass('engram_schema') IS NOT NULL")
    guard try exists[0].bool(0) == true else { return 0 }
    return Int(try connection.execute("SELECT coalesce(max(version), 0) FROM engram_schema")[0].int64(0) ?? 0)
  }

  /// Throws `StoreError.schemaTooNew` when the database is ahead of `migrations` (without
  /// writing anything); returns its version otherwise.
  /// - Parameter database: how errors name the database (never a URI with a password).
  public static func checkVersion(
    _ connection: PostgresConnection, database: String, migrations: [Migration] = all
  ) throws -> Int {
    try Migration.checkedVersion({ try version(connection) }, of: database, against: migrations)
  }

  /// Brings a connection's database to the migrations compiled in, as a store opens it:
  /// read-only, it must have them all already; else the missing ones are applied.
  /// - Throws: `StoreError.schemaTooNew`, `StoreError.migrationRequired`, `PostgresError`.
  static func prepare(_ connection: PostgresConnection, database: String, readOnly: Bool) throws {
    if readOnly {
      try Migration.requireAll(all, found: try checkVersion(connection, database: database), in: database)
    } else {
      try migrate(connection, database: database)
    }
  }

  /// Applies the migrations the database lacks; returns how many were applied.
  /// - Throws: `StoreError.schemaTooNew`, `StoreError.invalidMigrations`, `PostgresError`.
  @discardableResult
  public static func migrate(
    _ connection: PostgresConnection, database: String, migrations: [Migration] = all
  ) throws -> Int {
    let found = try checkVersion(connection, database: database, migrations: migrations)
    var applied = 0
    for migration in migrations where migration.version > found {
      try connection.transaction {
        try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int(lockKey)])
        // Another process may have migrated between the check and the lock.
        guard try version(connection) < migration.version else { return }
        try connection.executeScript(migration.sql)
        guard try version(connection) == migration.version else {
          throw StoreError.invalidMigrations(version: try version(connection), expected: migration.version)
        }
        applied += 1
      }
    }
    return applied
  }
}
