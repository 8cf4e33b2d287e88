import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct DatabaseTests {
  @Test func opensMigratesAndConfigures() throws {
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.file("db.sqlite"))
    let settings = try database.write { connection in
      (
        try connection.userVersion(), try connection.scalarString("PRAGMA journal_mode"),
        try connection.scalarInt("PRAGMA synchronous"), try connection.scalarInt("PRAGMA foreign_keys")
      )
    }
    #expect(settings.0 == Migration.all.count)
    #expect(settings.1 == "wal")
    #expect(settings.2 == 1)  // NORMAL
    #expect(settings.3 == 1)
    database.close()
    // Reopening applies nothing and keeps the data.
    let again = try Database(path: directory.file("db.sqlite"))
    #expect(try again.read { try $0.userVersion() } == Migration.all.count)
  }

  @Test func readersSeeCommittedWrites() throws {
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.file("db.sqlite"))
    let id = try database.write { try $0.insert(Message(role: .user, content: "hello", createdAt: t0)) }
    let message = try database.read { try $0.fetch(Message.self, id: id) }
    #expect(message?.content == "hello")
  }

  @Test func concurrentReadsAndWrites() async throws {
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.file("db.sqlite"))
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        for batch in 0..<20 {
          try database.write { connection in
            for index in 0..<50 {
              try connection.insert(Message(role: .user, content: "m \(batch) \(index)", createdAt: t0))
            }
          }
        }
      }
      for _ in 0..<3 {
        group.addTask {
          for _ in 0..<40 {
            let count = try database.read { try $0.count(Message.self) }
            #expect(count % 50 == 0)  // A reader never sees half a batch.
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(try database.read { try $0.count(Message.self) } == 1000)
  }

  @Test func closedDatabaseThrows() throws {
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.file("db.sqlite"))
    database.close()
    database.close()
    #expect(throws: StoreError.closed(path: directory.file("db.sqlite"))) { try database.read { _ in 1 } }
    #expect(throws: StoreError.closed(path: directory.file("db.sqlite"))) { try database.write { _ in 1 } }
  }

  @Test func fileThatIsNotSQLiteIsRefused() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("notes.txt")
    try Data(String(repeating: "this is not a database\n", count: 200).utf8).write(
      to: URL(fileURLWithPath: path))
    #expect { try Database(path: path) } throws: { isSQLite($0, .notADatabase) }
    #expect { try Database(path: path, configuration: readOnly) } throws: { isSQLite($0, .notADatabase) }
  }

  @Test func corruptDatabaseIsReported() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("good.sqlite")
    let database = try Database(path: path)
    try database.write { connection in
      for index in 0..<300 {
        try connection.insert(
          Message(role: .user, content: String(repeating: "word\(index) ", count: 40), createdAt: t0))
      }
    }
    database.close()
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    #expect(bytes.count > 4096 * 8)
    // Page 1 beyond the header holds the schema table: garbage there fails the open.
    var headerIntact = bytes
    for index in 100..<4096 { headerIntact[index] = UInt8(truncatingIfNeeded: index &* 31) }
    let broken = directory.file("broken.sqlite")
    try Data(headerIntact).write(to: URL(fileURLWithPath: broken))
    #expect { try Database(path: broken) } throws: { isSQLite($0, .corrupt) || isSQLite($0, .notADatabase) }
    // Garbage in later pages: the open works, integrity_check reports the damage.
    for index in (4096 * 3)..<(bytes.count - 4096) { bytes[index] = UInt8(truncatingIfNeeded: index &* 7) }
    let damaged = directory.file("damaged.sqlite")
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    do {
      let opened = try Connection(path: damaged)
      let problems = try opened.integrityCheck()
      #expect(!problems.isEmpty)
    } catch {
      #expect(isSQLite(error, .corrupt))
    }
  }

  @Test func readOnlyFileRefusesWritesButAllowsReads() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("db.sqlite")
    let database = try Database(path: path)
    try database.write { _ = try $0.insert(Message(role: .user, content: "kept", createdAt: t0)) }
    database.close()
    try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: path)
    #expect(throws: StoreError.readOnlyFile(path: path)) { try Database(path: path) }
    let reader = try Database(path: path, configuration: readOnly)
    #expect(try reader.read { try $0.count(Message.self) } == 1)
    #expect(throws: StoreError.databaseReadOnly(path: path)) { try reader.write { _ in 1 } }
  }

  @Test func readOnlyFolderRefusesWritesButAllowsReads() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("db.sqlite")
    let database = try Database(path: path)
    try database.write { _ = try $0.insert(Message(role: .user, content: "kept", createdAt: t0)) }
    database.close()
    try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: directory.path)
    #expect(throws: StoreError.readOnlyDirectory(path: directory.path)) { try Database(path: path) }
    let missing = directory.file("missing.sqlite")
    #expect(throws: StoreError.readOnlyDirectory(path: directory.path)) { try Database(path: missing) }
    let reader = try Database(path: path, configuration: readOnly)
    #expect(try reader.read { try $0.count(Message.self) } == 1)
  }

  @Test func lockedDatabaseGivesBusyAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("db.sqlite")
    var configuration = Database.Configuration()
    configuration.busyTimeout = .milliseconds(100)
    let database = try Database(path: path, configuration: configuration)
    let other = try Connection(path: path, busyTimeout: .zero)
    try other.execute("BEGIN IMMEDIATE")
    #expect {
      try database.write { try $0.insert(Message(role: .user, content: "blocked", createdAt: t0)) }
    } throws: {
      isSQLite($0, .busy)
    }
    try other.execute("ROLLBACK")
    #expect(try database.read { try $0.count(Message.self) } == 0)
    // Once the lock is gone the same write succeeds.
    _ = try database.write { try $0.insert(Message(role: .user, content: "free", createdAt: t0)) }
    #expect(try database.read { try $0.count(Message.self) } == 1)
  }

  @Test func schemaFromTheFutureIsRefusedAndUntouched() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("future.sqlite")
    do {
      let connection = try Connection(path: path)
      try connection.execute("CREATE TABLE x (v); PRAGMA user_version = 99")
    }
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    #expect(throws: StoreError.schemaTooNew(path: path, found: 99, supported: Migration.all.count)) {
      try Database(path: path)
    }
    #expect(throws: StoreError.schemaTooNew(path: path, found: 99, supported: Migration.all.count)) {
      try Database(path: path, configuration: readOnly)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
  }

  @Test func readOnlyOpenOfUnmigratedDatabaseIsRefused() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("old.sqlite")
    _ = try Connection(path: path)
    #expect(throws: StoreError.migrationRequired(path: path, found: 0, required: Migration.all.count)) {
      try Database(path: path, configuration: readOnly)
    }
  }

  private var readOnly: Database.Configuration {
    var configuration = Database.Configuration()
    configuration.readOnly = true
    return configuration
  }
}
