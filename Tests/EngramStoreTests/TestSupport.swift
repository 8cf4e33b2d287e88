import EngramCore
import EngramStore
import Foundation

/// A fresh folder under the system temp directory, removed when released.
final class TemporaryDirectory {
  let url: URL
  var path: String { url.path }

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("engram-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> String { url.appendingPathComponent(name).path }

  deinit {
    // Restore permissions a test may have removed, so the folder can be deleted.
    _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
    if let items = try? FileManager.default.contentsOfDirectory(atPath: url.path) {
      for item in items {
        _ = try? FileManager.default.setAttributes(
          [.posixPermissions: 0o600], ofItemAtPath: url.appendingPathComponent(item).path)
      }
    }
    try? FileManager.default.removeItem(at: url)
  }
}

/// The repository root, derived from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent()

/// A migrated in-memory-like database file in a temp folder, with its writer connection.
func makeMigratedConnection(_ directory: TemporaryDirectory, name: String = "test.sqlite") throws
  -> Connection
{
  let connection = try Connection(path: directory.file(name))
  try connection.enableWriteAheadLog()
  try Migrator.migrate(connection)
  return connection
}

/// Whether `error` is an `SQLiteError` with primary code `code`.
func isSQLite(_ error: any Error, _ code: SQLiteError.Code) -> Bool {
  (error as? SQLiteError)?.code == code
}

let t0 = Date(timeIntervalSince1970: 1_700_000_000)
/// `t0` in the milliseconds the store's columns and time filters use.
let t0ms: Int64 = 1_700_000_000_000

/// `milliseconds` after `t0`.
func t(_ milliseconds: Int64) -> Date { Timestamp.date(t0ms + milliseconds) }
