import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// The SQL written once for every store (`SQLSession`): SQLite reads its `$N` parameters as
/// `?N`, binds its user as `$1`, and the dialect's words make SQL SQLite runs.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct SQLSessionTests {
  static func open(_ path: String, user: String) throws -> Database {
    try StoreUserScopeTests.open(path, user: user)
  }

  /// Parameters outside quotes become SQLite's numbered ones; quoted text (a JSON path, a
  /// dollar amount) is left as written.
  @Test(arguments: [
    ("SELECT id FROM t WHERE u = $1 AND id = $12", "SELECT id FROM t WHERE u = ?1 AND id = ?12"),
    (
      "SELECT json_each(s, '$.ids'), '$1' FROM t WHERE a = $2",
      "SELECT json_each(s, '$.ids'), '$1' FROM t WHERE a = ?2"
    ),
    ("SELECT 'it''s $3', $4", "SELECT 'it''s $3', ?4"),
    ("SELECT $ FROM t", "SELECT $ FROM t"),
  ])
  func sqliteSpellsParametersWithQuestionMarks(shared: String, sqlite: String) {
    #expect(SQLDialect.sqliteParameters(shared) == sqlite)
  }

  /// `$1` is the session's user: a shared query on one file reads each user's rows alone, and
  /// a statement without parameters runs too. The dialect's id list and substring test work.
  @Test func theUserIsTheFirstParameter() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("m.sqlite")
    let databases = try ["ann", "bob"].map { try Self.open(path, user: $0) }
    defer { for database in databases { database.close() } }
    let filled = try zip(databases, ["apple", "banana"]).map { try StoreUserScopeTests.fill($0, word: $1) }
    let sql = "SELECT count(*) FROM messages WHERE \(SQLDialect.sqlite.user) = $1 AND role = $2"
    for database in databases {
      #expect(try database.readTransaction { try $0.integer(scoped: sql, [.text("user")]) } == 1)
    }
    #expect(try databases[0].readTransaction { try $0.integer(scoped: "SELECT count(*) FROM messages") } == 4)
    let allTurns = filled.flatMap(\.turns)
    let found = try databases[0].readTransaction { session in
      try session.rows(
        scoped: """
          SELECT id FROM messages WHERE \(session.dialect.user) = $1
            AND \(session.dialect.column("id", inIDList: "$2")) AND \(session.dialect.contains("content", "$3"))
          """, [session.dialect.idList(allTurns), .text("reply")]
      ) { $0.int64(at: 0) }
    }
    #expect(found == [filled[0].turns[1]])
  }

  /// A shared write is all or nothing inside `atomically`, and reports the rows it changed.
  @Test func atomicallyRollsBackAFailedBody() throws {
    let directory = try TemporaryDirectory()
    let database = try Self.open(directory.file("m.sqlite"), user: "ann")
    defer { database.close() }
    struct Failure: Error {}
    try database.writeTransaction { session in
      _ = try session.insert(Memory(kind: .fact, content: "kept", createdAt: Date()))
      #expect(throws: Failure.self) {
        try session.atomically {
          #expect(
            try session.execute(scoped: "UPDATE memories SET content = 'lost' WHERE user_id = $1", []) == 1)
          throw Failure()
        }
      }
    }
    #expect(
      try database.readTransaction { try $0.memories(kind: nil, limit: 5, includeSuperseded: true) }.map(
        \.content) == ["kept"])
  }
}
