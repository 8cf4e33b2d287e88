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
