import Foundation
import Testing

@testable import EngramStore

@Suite struct MigratorTests {
  /// The compiled migrations must be exactly the files of schemas/migrations: run
  /// `make schemas` when this fails.
  @Test func generatedMigrationsMatchTheSQLFiles() throws {
    let folder = repositoryRoot.appendingPathComponent("schemas/migrations")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
      .filter { $0.hasSuffix(".sql") }.sorted()
    #expect(!files.isEmpty)
    #expect(files.count == Migration.all.count, "stale Migrations+Generated.swift: run `make schemas`")
    for (file, migration) in zip(files, Migration.all) {
      let base = String(file.dropLast(4))
      let parts = base.split(separator: "_", maxSplits: 1)
      #expect(Int(parts[0]) == migration.version)
      #expect(String(parts[1]) == migration.name)
      let sql = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
      #expect(sql == migration.sql, "stale migration \(file): run `make schemas`")
    }
  }

  @Test func migrationsAreNumberedFromOne() throws {
    #expect(Migration.all.map(\.version) == Array(1...Migration.all.count))
    let gap = [Migration(version: 1, name: "a", sql: ""), Migration(version: 3, name: "c", sql: "")]
    let connection = try Connection(path: ":memory:")
    #expect(throws: StoreError.invalidMigrations(version: 3, expected: 2)) {
      try Migrator.migrate(connection, migrations: gap)
    }
  }

  @Test func failingMigrationLeavesThePreviousVersion() throws {
    let connection = try Connection(path: ":memory:")
    let migrations = [
      Migration(version: 1, name: "one", sql: "CREATE TABLE a (v);"),
      Migration(version: 2, name: "two", sql: "CREATE TABLE b (v); CREATE TABLE a (v);"),
    ]
    #expect { try Migrator.migrate(connection, migrations: migrations) } throws: { isSQLite($0, .error) }
    #expect(try connection.userVersion() == 1)
    #expect(try connection.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'b'") == 0)
  }

  @Test func migrateIsIdempotent() throws {
    let connection = try Connection(path: ":memory:")
    #expect(try Migrator.migrate(connection) == Migration.all.count)
    #expect(try Migrator.migrate(connection) == 0)
    #expect(try connection.userVersion() == Migration.all.count)
  }
}
