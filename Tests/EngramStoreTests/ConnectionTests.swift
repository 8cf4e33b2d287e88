import CSQLite
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ConnectionTests {
  @Test func sqliteKeepsNoAllocationStatistics() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    try connection.execute("CREATE TABLE big (x TEXT); INSERT INTO big VALUES (randomblob(100000))")
    // Only this package calls SQLite in the test process, so the first connection turned the
    // statistics off before SQLite initialized: nothing is counted.
    #expect(Connection.globalConfiguration)
    var current: Int64 = 0
    var highwater: Int64 = 0
    #expect(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highwater, 0) == SQLITE_OK)
    #expect(current == 0)
    #expect(sqlite3_memory_used() == 0)
  }

  /// New databases get 4 KiB pages (three packed embedding rows a page); an existing
  /// database keeps the page size it was made with.
  @Test func newDatabasesGetFourKilobytePages() throws {
    let directory = try TemporaryDirectory()
    let fresh = try Connection(path: directory.file("new.sqlite"))
    try fresh.enableWriteAheadLog()
    try Migrator.migrate(fresh)
    #expect(try fresh.scalarInt("PRAGMA page_size") == 4096)

    let old = try Connection(path: directory.file("old.sqlite"))
    try old.execute("PRAGMA page_size = 8192; CREATE TABLE t (x)")
    try old.enableWriteAheadLog()
    #expect(try old.scalarInt("PRAGMA page_size") == 8192)
    #expect(try old.scalarString("PRAGMA journal_mode") == "wal")
  }

  @Test func createsFileWithMode0600() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("new.sqlite")
    _ = try Connection(path: path)
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
    #expect(mode == 0o600)
  }

  @Test func bindsAndReadsEveryType() throws {
    let connection = try Connection(path: ":memory:")
    try connection.execute("CREATE TABLE t (a, b, c, d, e, f, g, h, i)")
    let statement = try connection.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    try statement.bind(Int64.max, at: 1)
    try statement.bind(42, at: 2)
    try statement.bind(2.5, at: 3)
    try statement.bind("héllo", at: 4)
    try statement.bind(Data([0, 1, 255]), at: 5)
    try statement.bind([UInt8]([9, 8]), at: 6)
    try statement.bind(true, at: 7)
    try statement.bind(nil as String?, at: 8)
    try statement.bind(floats: [1.5, -2, .leastNonzeroMagnitude], at: 9)
    try statement.execute()
    #expect(connection.changes == 1)
    #expect(connection.lastInsertRowID == 1)
    let row = try #require(
      try connection.prepare("SELECT * FROM t").first { row in
        (
          row.int64(at: 0), row.int(at: 1), row.double(at: 2), row.string(at: 3), row.data(at: 4),
          row.bytes(at: 5), row.bool(at: 6), row.isNull(at: 7), row.floats(at: 8)
        )
      })
    #expect(row.0 == Int64.max)
    #expect(row.1 == 42)
    #expect(row.2 == 2.5)
    #expect(row.3 == "héllo")
    #expect(row.4 == Data([0, 1, 255]))
    #expect(row.5 == [9, 8])
    #expect(row.6)
    #expect(row.7)
    #expect(row.8 == [1.5, -2, .leastNonzeroMagnitude])
  }

  @Test(arguments: ["", "a\u{0}b", "\u{0}", String(repeating: "x", count: 1 << 20), "emoji 👩‍👩‍👧 ok"])
  func textRoundTripsExactly(text: String) throws {
    let connection = try Connection(path: ":memory:")
    try connection.execute("CREATE TABLE t (v TEXT)")
    try connection.run("INSERT INTO t VALUES (?1)", [.text(text)])
    let back = try connection.prepare("SELECT v, typeof(v), length(CAST(v AS BLOB)) FROM t").first {
      ($0.string(at: 0), $0.string(at: 1), $0.int(at: 2))
    }
    #expect(back?.0 == text)
    #expect(back?.1 == "text")
    #expect(back?.2 == text.utf8.count)
  }

  @Test func emptyBlobIsNotNull() throws {
    let connection = try Connection(path: ":memory:")
    let isBlob = try connection.prepare("SELECT typeof(?1)").first { statement in statement.string(at: 0) }
    #expect(isBlob == "null")
    let statement = try connection.prepare("SELECT typeof(?1), length(?1)")
    try statement.bind(Data(), at: 1)
    let row = try statement.first { ($0.string(at: 0), $0.int(at: 1)) }
    #expect(row?.0 == "blob")
    #expect(row?.1 == 0)
  }

  @Test func invalidUTF8FromSQLiteIsRepairedOrRefused() throws {
    let connection = try Connection(path: ":memory:")
    let statement = try connection.prepare("SELECT CAST(x'61C328FF62' AS TEXT)")
    #expect(try statement.step())
    #expect(statement.string(at: 0) == "a\u{FFFD}(\u{FFFD}b")
    #expect(throws: StoreError.invalidUTF8(column: 0)) { try statement.validatedString(at: 0) }
    statement.reset()
  }

  @Test func syntaxErrorCarriesCodeAndSQL() throws {
    let connection = try Connection(path: ":memory:")
    do {
      _ = try connection.prepare("SELEKT 1")
      Issue.record("expected an error")
    } catch let error as SQLiteError {
      #expect(error.code == .error)
      #expect(error.sql == "SELEKT 1")
    }
  }

  @Test func constraintErrorHasExtendedCode() throws {
    let connection = try Connection(path: ":memory:")
    try connection.execute("CREATE TABLE t (v INTEGER NOT NULL UNIQUE)")
    try connection.run("INSERT INTO t VALUES (1)")
    do {
      try connection.run("INSERT INTO t VALUES (?1)", [.integer(1)])
      Issue.record("expected an error")
    } catch let error as SQLiteError {
      #expect(error.code == .constraint)
      #expect(error.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
      #expect(error.argumentCount == 1)
    }
  }

  @Test func transactionRollsBackOnThrow() throws {
    struct Boom: Error {}
    let connection = try Connection(path: ":memory:")
    try connection.execute("CREATE TABLE t (v)")
    #expect(throws: Boom.self) {
      try connection.transaction {
        try connection.run("INSERT INTO t VALUES (1)")
        throw Boom()
      }
    }
    #expect(try connection.scalarInt("SELECT count(*) FROM t") == 0)
    #expect(!connection.isInTransaction)
    try connection.transaction { try connection.run("INSERT INTO t VALUES (2)") }
    #expect(try connection.scalarInt("SELECT count(*) FROM t") == 1)
  }

  @Test func nestedTransactionIsASavepoint() throws {
    struct Boom: Error {}
    let connection = try Connection(path: ":memory:")
    try connection.execute("CREATE TABLE t (v)")
    try connection.transaction {
      try connection.run("INSERT INTO t VALUES (1)")
      try? connection.transaction {
        try connection.run("INSERT INTO t VALUES (2)")
        throw Boom()
      }
      try connection.savepoint { try connection.run("INSERT INTO t VALUES (3)") }
    }
    let values = try connection.prepare("SELECT v FROM t ORDER BY v").map { $0.int(at: 0) }
    #expect(values == [1, 3])
  }

  @Test func statementCacheReusesStatements() throws {
    let connection = try Connection(path: ":memory:")
    let first = try connection.cachedStatement("SELECT ?1")
    try first.bind(5, at: 1)
    let second = try connection.cachedStatement("SELECT ?1")
    #expect(first === second)
    // A reused statement comes back with cleared bindings.
    #expect(try second.first { $0.isNull(at: 0) } == true)
  }

  @Test func userVersionAndBusyTimeoutSettings() throws {
    let connection = try Connection(path: ":memory:", busyTimeout: .milliseconds(250))
    #expect(try connection.userVersion() == 0)
    #expect(try connection.scalarInt("PRAGMA busy_timeout") == 250)
    #expect(try connection.scalarInt("PRAGMA foreign_keys") == 1)
  }
}
