/// One schema migration: the SQL of `schemas/migrations/NNNN_name.sql`, compiled into
/// the binary by `scripts/generate-migrations.sh`.
public struct Migration: Sendable, Hashable {
  /// The migration's number; `PRAGMA user_version` holds the last applied one.
  public var version: Int
  /// The name part of the file name.
  public var name: String
  /// The SQL, verbatim.
  public var sql: String

  /// Creates a migration.
  public init(version: Int, name: String, sql: String) {
    self.version = version
    self.name = name
    self.sql = sql
  }

  /// The migrations compiled into this binary, in order.
  public static var all: [Migration] { generated }
}

// The checks both stores' migrators make, written once.
extension Migration {
  /// Refuses `migrations` unless they are numbered 1, 2, 3... in order.
  /// - Throws: `StoreError.invalidMigrations`.
  package static func validate(_ migrations: [Migration]) throws {
    for (offset, migration) in migrations.enumerated() where migration.version != offset + 1 {
      throw StoreError.invalidMigrations(version: migration.version, expected: offset + 1)
    }
  }

  /// The version `found` in `database` (how errors name it) when these valid `migrations`
  /// reach it, before anything is written.
  /// - Throws: `StoreError.invalidMigrations`, `StoreError.schemaTooNew` when the database is
  ///   ahead of them.
  package static func checkedVersion(
    _ found: () throws -> Int, of database: String, against migrations: [Migration]
  )
    throws -> Int
  {
    try validate(migrations)
    let found = try found()
    guard found <= migrations.count else {
      throw StoreError.schemaTooNew(path: database, found: found, supported: migrations.count)
    }
    return found
  }

  /// Refuses a database opened read-only that lacks some of `migrations` (`found` applied).
  /// - Throws: `StoreError.migrationRequired`.
  package static func requireAll(_ migrations: [Migration], found: Int, in database: String) throws {
    guard found == migrations.count else {
      throw StoreError.migrationRequired(path: database, found: found, required: migrations.count)
    }
  }
}
