import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Testing

/// The libpq wrapper against a real PostgreSQL server (see ``PostgresTestServer``).
@Suite("PostgresConnection", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresConnectionTests {
  @Test func connectsToAServerOfVersion15OrLater() throws {
    let connection = try PostgresConnection(url: try PostgresTestServer.url())
    #expect(connection.serverVersion >= 150_000)
    #expect(connection.backendPID > 0)
    #expect(!connection.isInTransaction)
  }

  @Test func typedParametersRoundTrip() throws {
    let connection = try PostgresConnection(url: try PostgresTestServer.url())
    let text = "O'Brien said \"hi\"; DROP TABLE x; -- 周末 🧗 \\ $1"
    let bytes = (0...255).map(UInt8.init)
    let row = try connection.execute(
      "SELECT $1::bigint, $2::bigint, $3::float8, $4::float8, $5::boolean, $6::text, $7::bytea, $8::text, "
        + "$9::float8, $10::bytea",
      [
        .int(.min), .int(.max), .double(0.1), .double(-.infinity), .bool(true), .text(text), .bytes(bytes),
        .null,
        .double(.nan), .bytes([]),
      ]
    )[0]
    #expect(try row.int64(0) == .min)
    #expect(try row.int64(1) == .max)
    #expect(try row.double(2) == 0.1)
    #expect(try row.double(3) == -.infinity)
    #expect(try row.bool(4) == true)
    #expect(row.string(5) == text)
    #expect(try row.bytes(6) == bytes)
    #expect(row.isNull(7) && row.string(7) == nil)
    #expect(try row.int64(7) == nil)
    #expect(try row.double(8)?.isNaN == true)
    #expect(try row.bytes(9) == [])
  }

  @Test func aParameterIsNeverSQL() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try connection.execute("CREATE TABLE t (v text)")
      let hostile = "x'); DROP TABLE t; --"
      try connection.execute("INSERT INTO t (v) VALUES ($1)", [.text(hostile)])
      let result = try connection.execute("SELECT v FROM t")
      #expect(result.count == 1)
      #expect(result[0].string(0) == hostile)
    }
  }

  @Test func resultsReportRowsColumnsAndCounts() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try connection.execute("CREATE TABLE t (id bigint, name text)")
      let inserted = try connection.execute(
        "INSERT INTO t SELECT g, 'n' || g FROM generate_series(1, $1::int) g", [.int(5)])
      #expect(inserted.rowsAffected == 5)
      let result = try connection.execute("SELECT id, name FROM t WHERE id > $1 ORDER BY id", [.int(2)])
      #expect(result.columnNames == ["id", "name"])
      #expect(try result.rows.map { try $0.int64(0) } == [3, 4, 5])
      #expect(result.rows.map { $0.string(1) } == ["n3", "n4", "n5"])
    }
  }

  @Test func errorsCarrySQLStateMessageAndSQL() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY, v int CHECK (v > 0))")
      try connection.execute("INSERT INTO t VALUES (1, 1)")
      let insert = "INSERT INTO t VALUES ($1, 1)"
      let duplicate = #expect(throws: PostgresError.self) { try connection.execute(insert, [.int(1)]) }
      #expect(duplicate?.sqlState == .uniqueViolation)
      #expect(duplicate?.kind == .statement)
      #expect(duplicate?.sql == insert)
      #expect(duplicate?.constraint == "t_pkey")
      #expect(duplicate?.message.isEmpty == false)
      let check = #expect(throws: PostgresError.self) {
        try connection.execute("INSERT INTO t VALUES (2, -1)")
      }
      #expect(check?.sqlState == .checkViolation)
      let syntax = #expect(throws: PostgresError.self) { try connection.execute("SELEKT 1") }
      #expect(syntax?.sqlState == .syntaxError)
      let missing = #expect(throws: PostgresError.self) { try connection.execute("SELECT * FROM nowhere") }
      #expect(missing?.sqlState == .undefinedTable)
      let badValue = #expect(throws: PostgresError.self) {
        try connection.execute("SELECT $1::int", [.text("twelve")])
      }
      #expect(badValue?.sqlState == .invalidTextRepresentation)
      // The connection is still usable after errors.
      #expect(try connection.execute("SELECT count(*) FROM t")[0].int64(0) == 1)
    }
  }

  @Test func aNulCharacterIsRefusedBeforeSending() throws {
    let connection = try PostgresConnection(url: try PostgresTestServer.url())
    let error = #expect(throws: PostgresError.self) {
      try connection.execute("SELECT $1::text", [.text("a\u{0}b")])
    }
    #expect(error?.kind == .conversion)
  }

  @Test func aReadOfTheWrongTypeIsAConversionError() throws {
    let connection = try PostgresConnection(url: try PostgresTestServer.url())
    let row = try connection.execute("SELECT 'abc'::text")[0]
    let error = #expect(throws: PostgresError.self) { try row.int64(0) }
    #expect(error?.kind == .conversion)
  }

  @Test func aFailedConnectionSaysWhyWithoutThePassword() throws {
    let url = "postgresql://someone:s3cret-password@/nodb?host=/nonexistent-engram-socket-folder"
    let error = #expect(throws: PostgresError.self) { try PostgresConnection(url: url) }
    #expect(error?.kind == .connection)
    #expect(error?.message.isEmpty == false)
    #expect(error.map { !"\($0)".contains("s3cret-password") } == true)
    let garbage = #expect(throws: PostgresError.self) { try PostgresConnection(url: "postgresql://[::1") }
    #expect(garbage?.kind == .connection)
  }

  @Test func aTransactionCommitsAllOrNothing() throws {
    try PostgresTestServer.withDatabase { connection, url in
      try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY)")
      let other = try PostgresConnection(url: url)
      func count() throws -> Int64? { try other.execute("SELECT count(*) FROM t")[0].int64(0) }

      struct Stop: Error {}
      #expect(throws: Stop.self) {
        try connection.transaction {
          try connection.execute("INSERT INTO t VALUES (1), (2)")
          #expect(try count() == 0)  // not visible before commit
          throw Stop()
        }
      }
      #expect(try count() == 0)
      #expect(!connection.isInTransaction)

      // A statement failing midway: nothing of the transaction stays.
      let failure = #expect(throws: PostgresError.self) {
        try connection.transaction {
          try connection.execute("INSERT INTO t VALUES (1)")
          try connection.execute("INSERT INTO t VALUES (1)")
        }
      }
      #expect(failure?.sqlState == .uniqueViolation)
      #expect(try count() == 0)

      // A body that swallows a statement's error cannot commit the rest.
      let aborted = #expect(throws: PostgresError.self) {
        try connection.transaction {
          try connection.execute("INSERT INTO t VALUES (7)")
          _ = try? connection.execute("INSERT INTO t VALUES (7)")
        }
      }
      #expect(aborted?.kind == .transactionAborted)
      #expect(try count() == 0)

      let value = try connection.transaction {
        try connection.execute("INSERT INTO t VALUES (1), (2)")
        return 42
      }
      #expect(value == 42)
      #expect(try count() == 2)
    }
  }

  @Test func aNestedTransactionRollsBackOnlyItself() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY)")
      try connection.transaction {
        try connection.execute("INSERT INTO t VALUES (1)")
        let inner = #expect(throws: PostgresError.self) {
          try connection.transaction {
            try connection.execute("INSERT INTO t VALUES (2)")
            try connection.execute("INSERT INTO t VALUES (1)")
          }
        }
        #expect(inner?.sqlState == .uniqueViolation)
        try connection.execute("INSERT INTO t VALUES (3)")
      }
      let ids = try connection.execute("SELECT id FROM t ORDER BY id").rows.map { try $0.int64(0) }
      #expect(ids == [1, 3])
    }
  }

  @Test func notificationsArriveAfterCommitOnly() throws {
    try PostgresTestServer.withDatabase { listener, url in
      let sender = try PostgresConnection(url: url)
      let channel = "engram test \"channel\""
      try listener.listen(channel)
      #expect(try listener.notifications(timeout: .milliseconds(50)).isEmpty)

      try sender.transaction {
        try sender.notify(channel, payload: "7:alice")
        try sender.notify(channel, payload: "7:alice")  // a repeat in one transaction is folded
        try sender.notify(channel, payload: "8:bob")
        #expect(try listener.notifications(timeout: .milliseconds(100)).isEmpty)
      }
      var received: [PostgresNotification] = []
      let deadline = ContinuousClock.now.advanced(by: .seconds(5))
      while received.count < 2, ContinuousClock.now < deadline {
        received += try listener.notifications(timeout: .seconds(1))
      }
      #expect(received.map(\.payload) == ["7:alice", "8:bob"])
      #expect(received.allSatisfy { $0.channel == channel && $0.senderPID == sender.backendPID })

      try listener.unlisten(channel)
      try sender.notify(channel, payload: "9:carol")
      #expect(try listener.notifications(timeout: .milliseconds(200)).isEmpty)
    }
  }
}
