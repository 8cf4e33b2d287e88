import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Testing

/// schemas/postgres applied to a real PostgreSQL server: user scopes, keys, full-text search
/// and the embedding generation.
@Suite("PostgreSQL schema", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresSchemaTests {
  @Test func appliesAndRecordsItsVersion() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try PostgresTestServer.applySchema(connection)
      let versions = try connection.execute("SELECT version FROM engram_schema ORDER BY version").rows
        .map { try $0.int64(0) }
      #expect(versions == (1...Int64(try PostgresTestServer.schemaMigrations().count)).map { $0 })
    }
  }

  @Test func aFailingMigrationLeavesNothingBehind() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      // The migration's last statement fails: none of its tables may remain.
      let broken = try PostgresTestServer.schemaMigrations()[0].sql + "\nSELECT 1/0;"
      let error = #expect(throws: PostgresError.self) { try connection.executeScript(broken) }
      #expect(error?.sqlState?.rawValue == "22012")
      let tables = try connection.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()")
      #expect(try tables[0].int64(0) == 0)
    }
  }

  @Test func everyTableButTheSchemaVersionHasARequiredUserScope() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try PostgresTestServer.applySchema(connection)
      let tables = try connection.execute(
        """
        SELECT t.table_name, c.is_nullable FROM information_schema.tables t
        LEFT JOIN information_schema.columns c
          ON c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = 'user_scope'
        WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE' ORDER BY t.table_name
        """
      ).rows.map { ($0.string(0) ?? "", $0.string(1)) }
      // The tables of the SQLite schema, plus the migration record.
      let expected = [
        "agent_items", "embedding_changes", "embedding_generation", "embeddings", "engram_schema", "memories",
        "messages", "meta",
        "pending_calls", "preferences", "routines", "sessions", "skill_state", "summaries", "traces",
      ]
      #expect(tables.map(\.0) == expected)
      for (table, nullable) in tables where table != "engram_schema" {
        #expect(nullable == "NO", "\(table).user_scope")
      }
    }
  }

  @Test func aRowCannotPointAtAnotherUsersRow() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try PostgresTestServer.applySchema(connection)
      let session = try connection.execute(
        "INSERT INTO sessions (user_scope, started_at) VALUES ('alice', 1) RETURNING id")[0].int64(0)!
      let crossUser = #expect(throws: PostgresError.self) {
        try connection.execute(
          "INSERT INTO messages (user_scope, session_id, role, content, created_at, fts_text) VALUES ('bob', $1, 'user', 'x', 1, 'x')",
          [.int(session)])
      }
      #expect(crossUser?.sqlState == .foreignKeyViolation)
      try connection.execute(
        "INSERT INTO messages (user_scope, session_id, role, content, created_at, fts_text) VALUES ('alice', $1, 'user', 'x', 1, 'x')",
        [.int(session)])
      let badRole = #expect(throws: PostgresError.self) {
        try connection.execute(
          "INSERT INTO messages (user_scope, role, content, created_at, fts_text) VALUES ('alice', 'robot', 'x', 1, 'x')"
        )
      }
      #expect(badRole?.sqlState == .checkViolation)
      let badJSON = #expect(throws: PostgresError.self) {
        try connection.execute(
          "INSERT INTO memories (user_scope, kind, content, created_at, updated_at, tags) "
            + "VALUES ('alice', 'fact', 'x', 1, 1, $1)", [.text("[not json")])
      }
      #expect(badJSON?.sqlState == .invalidTextRepresentation)
      let noScope = #expect(throws: PostgresError.self) {
        try connection.execute(
          "INSERT INTO preferences (user_scope, key, value, updated_at) VALUES ('', 'k', 'v', 1)")
      }
      #expect(noScope?.sqlState == .checkViolation)
      // Deleting the session takes its turns along (ON DELETE CASCADE), as in SQLite.
      try connection.execute("DELETE FROM sessions WHERE id = $1", [.int(session)])
      #expect(try connection.execute("SELECT count(*) FROM messages")[0].int64(0) == 0)
    }
  }

  /// Inserts a memory for `user` the way a store writes it (its terms in `fts_text`).
  private func remember(_ connection: PostgresConnection, user: String, _ content: String) throws -> Int64 {
    try connection.execute(
      """
      INSERT INTO memories (user_scope, kind, content, created_at, updated_at, fts_text)
      VALUES ($1, 'fact', $2, 1, 1, $3) RETURNING id
      """, [.text(user), .text(content), .text(PostgresFullText.indexText(of: content))])[0].int64(0)!
  }

  /// The ids of `user`'s memories matching `query`, best first.
  private func search(_ connection: PostgresConnection, user: String, _ query: String) throws -> [Int64] {
    try connection.execute(
      """
      SELECT m.id FROM memories m, engram_tsquery($2::json) q
      WHERE m.user_scope = $1 AND m.search @@ q
      ORDER BY ts_rank_cd(m.search, q) DESC, m.id LIMIT 10
      """, [.text(user), .text(PostgresFullText.queryTermsJSON(for: query))]
    ).rows.map { try $0.int64(0)! }
  }

  @Test func keywordSearchIsScopedToOneUser() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try PostgresTestServer.applySchema(connection)
      let aliceTrain = try remember(connection, user: "alice", "Alice prefers window seats on trains")
      let aliceClimb = try remember(connection, user: "alice", "我周末去攀岩了")
      let aliceCafe = try remember(connection, user: "alice", "Lunch at the Café Crème on Friday")
      let bobTrain = try remember(connection, user: "bob", "Bob prefers window seats on trains too")
      let bobClimb = try remember(connection, user: "bob", "他周末去攀岩")

      // Stemming (seats -> seat, trains -> train) and stopwords dropped from the query.
      #expect(try search(connection, user: "alice", "what about the window seat on a train?") == [aliceTrain])
      #expect(try search(connection, user: "bob", "window seat") == [bobTrain])
      // CJK words of any length, through the unigrams and bigrams.
      #expect(try search(connection, user: "alice", "攀岩") == [aliceClimb])
      #expect(try search(connection, user: "alice", "周末") == [aliceClimb])
      #expect(try search(connection, user: "bob", "攀岩") == [bobClimb])
      #expect(try search(connection, user: "alice", "岩").contains(aliceClimb))
      // Accents folded both ways, as FTS5's remove_diacritics.
      #expect(try search(connection, user: "alice", "cafe creme") == [aliceCafe])
      #expect(try search(connection, user: "alice", "CAFÉ") == [aliceCafe])
      // Nothing searchable, or a user with no memories: no hits (and no error).
      #expect(try search(connection, user: "alice", "?!").isEmpty)
      #expect(try search(connection, user: "carol", "window seat").isEmpty)
      // FTS syntax in the query is plain text.
      #expect(try search(connection, user: "alice", "window & !seat | 'x' <-> (") == [aliceTrain])
    }
  }

  @Test func theIndexHoldsExactlyTheTermsOfFTSText() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try PostgresTestServer.applySchema(connection)
      for text in ["Plain English texts, walking", "我周末去攀岩了", "mixed 東京 and ソウル 서울", "𠀀𠀁 rare"] {
        let id = try remember(connection, user: "u", text)
        // The lexemes are FTSText's terms (what SQLite's index holds), case folded.
        let lexemes = try connection.execute(
          "SELECT array_to_string(tsvector_to_array(search), ' ') FROM memories WHERE id = $1", [.int(id)])[0]
          .string(0)!
        let terms = Set(FTSText.indexText(text).lowercased().split(separator: " ").map(String.init))
        #expect(Set(lexemes.split(separator: " ").map(String.init)) == terms, "\(text)")
      }
    }
  }

  @Test func aTurnIsFoundByItsDayAndSpeaker() throws {
    try PostgresTestServer.withDatabase { connection, _ in
      try PostgresTestServer.applySchema(connection)
      // 8 May 2023, 13:56 UTC.
      let time: Int64 = 1_683_554_160_000
      let id = try connection.execute(
        """
        INSERT INTO messages (user_scope, role, speaker, content, created_at, fts_text)
        VALUES ('u', 'user', 'Ann', 'I went climbing', $1, $2) RETURNING id
        """,
        [
          .int(time),
          .text(PostgresFullText.indexText(ofMessage: "I went climbing", speaker: "Ann", time: time)),
        ]
      )[0].int64(0)!
      for query in ["climbed", "\"8 May 2023\"", "Ann"] {
        let found = try connection.execute(
          "SELECT id FROM messages WHERE user_scope = 'u' AND search @@ engram_tsquery($1::json)",
          [.text(PostgresFullText.queryTermsJSON(for: query))]
        ).rows.map { try $0.int64(0)! }
        #expect(found == [id], "\(query)")
      }
    }
  }

  @Test func embeddingChangesBumpTheUsersGenerationAndNotify() throws {
    try PostgresTestServer.withDatabase { connection, url in
      try PostgresTestServer.applySchema(connection)
      let listener = try PostgresConnection(url: url)
      try listener.listen("engram_embeddings")
      for user in ["alice", "bob"] {
        try connection.execute(
          "INSERT INTO meta VALUES ($1, 'embedding_model', 'hashing'), ($1, 'embedding_dimension', '2')",
          [.text(user)])
      }
      let vector: PostgresValue = .bytes([UInt8](repeating: 0, count: 8))
      let insert = """
        INSERT INTO embeddings (user_scope, owner_kind, owner_id, model, dimension, vector, created_at)
        VALUES ($1, 'memory', $2, 'hashing', 2, $3, 1)
        """
      try connection.transaction {
        for id in 1...3 { try connection.execute(insert, [.text("alice"), .int(Int64(id)), vector]) }
      }
      try connection.execute(insert, [.text("bob"), .int(100), vector])
      let generations = try connection.execute(
        "SELECT user_scope, generation FROM embedding_generation ORDER BY user_scope"
      ).rows.map { "\($0.string(0)!)=\(try $0.int64(1)!)" }
      #expect(generations == ["alice=3", "bob=1"])

      var payloads: [String] = []
      let deadline = ContinuousClock.now.advanced(by: .seconds(5))
      while payloads.count < 4, ContinuousClock.now < deadline {
        payloads += try listener.notifications(timeout: .seconds(1)).map(\.payload)
      }
      #expect(payloads == ["1:alice", "2:alice", "3:alice", "1:bob"])
      // Every change is logged with the generation it produced.
      let log = try connection.execute(
        "SELECT user_scope, generation, owner_id FROM embedding_changes ORDER BY seq"
      ).rows.map { "\($0.string(0)!)@\(try $0.int64(1)!):\(try $0.int64(2)!)" }
      #expect(log == ["alice@1:1", "alice@2:2", "alice@3:3", "bob@1:100"])

      // A vector of another model is refused; the generation does not move.
      let mismatch = #expect(throws: PostgresError.self) {
        try connection.execute(
          "INSERT INTO embeddings (user_scope, owner_kind, owner_id, model, dimension, vector, created_at) "
            + "VALUES ('alice', 'memory', 9, 'minilm', 2, $1, 1)", [vector])
      }
      #expect(mismatch?.sqlState == .checkViolation)
      // Deleting an owner deletes its embedding (one statement: one bump).
      let memory = try remember(connection, user: "bob", "to be forgotten")
      try connection.execute(insert, [.text("bob"), .int(memory), vector])
      try connection.execute("DELETE FROM memories WHERE id = $1", [.int(memory)])
      let left = try connection.execute(
        "SELECT count(*) FROM embeddings WHERE user_scope = 'bob' AND owner_id = $1", [.int(memory)])
      #expect(try left[0].int64(0) == 0)
      let bob = try connection.execute("SELECT generation FROM embedding_generation WHERE user_scope = 'bob'")
      #expect(try bob[0].int64(0) == 3)
    }
  }
}

@Suite("PostgresFullText", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresFullTextTests {
  @Test func indexTextIsFTSTextsWithTheTurnsSpeakerAndDay() {
    #expect(PostgresFullText.indexText(of: "Walking 周末") == FTSText.indexText("Walking 周末"))
    #expect(
      PostgresFullText.indexText(ofMessage: "went climbing", speaker: "Ann", time: 0)
        == "1 januari 1970 ann went climb")
    #expect(PostgresFullText.indexText(ofMessage: "hi", speaker: nil, time: 0) == "1 januari 1970 hi")
  }

  @Test func queryTermsAreFTSQuerysTermsUnquoted() {
    // English words are stemmed as the SQLite index stems them (PostgreSQL's stemmer leaves
    // a stem as it is).
    #expect(PostgresFullText.queryTerms(for: "the window seats") == ["window", "seat"])
    #expect(PostgresFullText.queryTerms(for: "去攀岩") == ["去攀 攀岩"])
    #expect(PostgresFullText.queryTerms(for: "?!").isEmpty)
    #expect(PostgresFullText.queryTermsJSON(for: "Café \"quoted\" 岩") == #"["Café","quot","岩"]"#)
    #expect(PostgresFullText.queryTermsJSON(for: "") == "[]")
  }
}
