/// Errors of the store's own rules, raised in Swift before any SQL runs (or after SQLite
/// answered something the store refuses).
///
/// SQLite failures are `SQLiteError`; this enum says what the store found wrong and where.
public enum StoreError: Error, Sendable, Hashable {
  /// The database was written by a newer Engram (`found` migrations applied, this binary
  /// knows `supported`). The file was not modified.
  case schemaTooNew(path: String, found: Int, supported: Int)
  /// A read-only open found a database that needs migrations this open cannot apply.
  case migrationRequired(path: String, found: Int, required: Int)
  /// The migrations compiled into the binary are not numbered 1, 2, 3, ...
  case invalidMigrations(version: Int, expected: Int)
  /// Opening for writing found the database file without write permission.
  case readOnlyFile(path: String)
  /// Opening for writing found the folder without write permission (SQLite needs it for
  /// the file itself and for the `-wal` and `-shm` files).
  case readOnlyDirectory(path: String)
  /// A write was asked of a database opened read-only.
  case databaseReadOnly(path: String)
  /// The database was closed.
  case closed(path: String)
  /// A vector's length differs from the dimension it declares or the database expects.
  case wrongDimension(expected: Int, actual: Int)
  /// A vector holds NaN or infinity at `index`.
  case nonFiniteVector(index: Int)
  /// A vector is empty.
  case emptyVector
  /// The embedding model or dimension differs from the one configured in the database.
  case modelMismatch(expectedModel: String, expectedDimension: Int, actualModel: String, actualDimension: Int)
  /// No embedding model is configured yet (`configureEmbeddingModel` was never called).
  case embeddingModelNotConfigured
  /// An embedding model name is empty or a dimension is not positive.
  case invalidEmbeddingModel(model: String, dimension: Int)
  /// A memory importance outside 0...1 (or NaN).
  case invalidImportance(Double)
  /// A column holds a value the record type cannot represent (for example an unknown enum
  /// raw value written by another tool).
  case invalidColumnValue(table: String, column: String, value: String)
  /// A text column holds bytes that are not valid UTF-8.
  case invalidUTF8(column: Int)
  /// An update or delete targeted a row that does not exist.
  case notFound(table: String, id: Int64)
  /// A record without an id was given to `update`.
  case missingID(table: String)
  /// A pagination limit or offset is negative.
  case invalidPage(limit: Int, offset: Int)
  /// The store cannot do `operation` (for example a `VACUUM` asked of PostgreSQL); `store`
  /// describes the store (see `StoreCapabilities`).
  case unsupported(operation: String, store: String)
  /// A user id that is not 1...128 ASCII letters, digits, `.`, `_`, `-` or `@` (see `StoreUser`).
  case invalidUser(String)
  /// A store location (`--db`) that is neither a file path nor a `postgresql://` /
  /// `postgres://` URI Engram can use; `reason` says what is wrong.
  case invalidLocation(String, reason: String)
  /// The location names a kind of store this build cannot open yet: `missing` names the
  /// piece that is not there (for example the PostgreSQL store).
  case storeUnavailable(location: String, missing: String)
}
