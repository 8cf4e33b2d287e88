import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Testing

/// The PostgreSQL migrator against a real server.
@Suite("PostgreSQL migrator", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresMigratorTests {
  /// The compiled migrations must be exactly the files of schemas/postgres: run
  /// `make schemas` when this fails.
  @Test func generatedMigrationsMatchTheSQLFiles() throws {
    let files = try PostgresTestServer.schemaMigrations()
    #expect(
      files.count == PostgresMigrator.all.count,
      "stale PostgresMigrations+Generated.swift: run `make schemas`")
    for (file, migration) in zip(files, PostgresMigrator.all) {
      #expect(file.name == String(format: "%04d_%@.sql", migration.version, migration.name))
      #expect(file.sql == migration.sql, "stale migration \(file.name): run `make schemas`")
    }
  }

  @Test func migratesOnceAndRecordsEachVersion() throws {
    try PostgresTestServer.withDatabase { connection, url in
      #expect(try PostgresMigrator.version(connection) == 0)
      #expect(try PostgresMigrator.migrate(connection, database: "db") == PostgresMigrator.all.count)
      #expect(try PostgresMigrator.version(connection) == PostgresMigrator.all.count)
      // A second process finds nothing to do.
      let other = try PostgresConnection(url: url)
      #expect(try PostgresMigrator.migrate(other, database: "db") == 0)
      let versions = try connection.execute("SELECT version FROM engram_schema ORDER BY version").rows
        .map { try $0.int64(0)! }
      #expect(versions == PostgresMigrator.all.map { Int64($0.version) })
    }
  }

  @Test func aFailingMigrationLeavesThePreviousVersion() throws {
    try PostgresTestServer.withDatabase { connection, _ throws in
      var migrations = Array(PostgresMigrator.all.prefix(1))
      migrations.append(
        Migration(
          version: 2, name: "broken",
          sql:
            "CREATE TABLE half_done (v int); INSERT INTO engram_schema (version, name) VALUES (2, 'x'); SELECT 1/0;"
        ))
      #expect(throws: PostgresError.self) {
        try PostgresMigrator.migrate(connection, database: "db", migrations: migrations)
      }
      #expect(try PostgresMigrator.version(connection) == 1)
      #expect(try connection.execute("SELECT to_regclass('half_done') IS NULL")[0].bool(0) == true)
    }
  }

  @Test func aNewerDatabaseIsRefusedUntouched() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try PostgresMigrator.migrate(connection, database: "db")
      try connection.execute("INSERT INTO engram_schema (version, name) VALUES (99, 'future')")
      #expect(throws: StoreError.schemaTooNew(path: "db", found: 99, supported: PostgresMigrator.all.count)) {
        try PostgresMigrator.migrate(connection, database: "db")
      }
    }
  }
}
