import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Keyword ranking on PostgreSQL is the SQLite store's BM25 (`FTSRank`: Lucene's idf, k1 1.2,
/// b 0.4): the same data ingested into both stores, a keyword query ranks the same rows in
/// the same order with the same scores.
@Suite("Keyword ranking on PostgreSQL and SQLite", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresKeywordRankTests {
  /// Turns of varied length, repeated words (term frequency), rare and common words (idf),
  /// stemmed forms, CJK phrases, two speakers, several days.
  static let turns: [(speaker: String, content: String)] = [
    ("Alice", "I went climbing on Saturday"),
    ("Bob", "Climbing again? You climb every Saturday, climbing climbing climbing"),
    ("Alice", "The dentist said my teeth are fine, but the dentist was late"),
    ("Bob", "Lisbon was lovely: trams, tiles, pastries and a long walk by the river in the evening sun"),
    ("Alice", "My garden has tomatoes"),
    ("Bob", "Tomatoes, basil and peppers grow in the garden; the garden needs water every evening"),
    ("Alice", "我们周末去攀岩"),
    ("Bob", "周末我在家看书，下周末去攀岩馆"),
    ("Alice", "Café au lait at the café near the station"),
    ("Bob", "The station was closed, so we walked to the next station and took a taxi"),
    ("Alice", "Walking is my favourite; I walked ten kilometres"),
    ("Bob", "A new job starts in May, the job is in Lisbon"),
    ("Alice", "Bob, remember the climbing gym membership"),
    ("Bob", "Alice"),
  ]

  static let queries = [
    "climbing Saturday", "dentist", "garden tomatoes evening", "周末攀岩", "café station", "walk",
    "Lisbon job", "Alice", "Bob climbing", "membership gym river", "nothing matches this zebra",
  ]

  static func conversation() -> String {
    let formatter = ISO8601DateFormatter()
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    return turns.enumerated().map { index, turn in
      let date = formatter.string(from: start.addingTimeInterval(Double(index) * 43_200))
      let content = turn.content.replacingOccurrences(of: "\"", with: "\\\"")
      return
        "{\"role\":\"user\",\"session\":\"s\(index / 5)\",\"speaker\":\"\(turn.speaker)\",\"timestamp\":\"\(date)\","
        + "\"content\":\"\(content)\"}\n"
    }.joined()
  }

  /// Runs `body` with a URL of a new, empty database.
  private func withDatabase(_ body: (String) async throws -> Void) async throws {
    let serverURL = try PostgresTestServer.url()
    let admin = try PostgresConnection(url: serverURL)
    let name = "engram_test_\(UInt64.random(in: 0...UInt64.max))"
    try admin.execute("CREATE DATABASE \(name)")
    defer { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    try await body(PostgresTestServer.databaseURL(serverURL, database: name))
  }

  @Test func aKeywordQueryRanksTheSameRowsInTheSameOrderOnBothStores() async throws {
    try await withDatabase { url in
      let folder = try TemporaryFolder()
      let file = folder.path("talk.jsonl")
      try writeFile(Self.conversation(), to: file)
      let sqlite = try MemoryEngine(path: folder.path("memory.sqlite"), configuration: hashingConfiguration())
      var configuration = hashingConfiguration()
      configuration.user = "alice"
      let postgres = try MemoryEngine(location: try StoreLocation(parsing: url), configuration: configuration)
      defer {
        sqlite.close()
        postgres.close()
      }
      _ = try await sqlite.conversation.ingest(path: file)
      _ = try await postgres.conversation.ingest(path: file)
      var compared = 0
      for query in Self.queries {
        let expected = try await sqlite.search(query, k: 20, mode: .keyword, recordAccess: false)
        let found = try await postgres.search(query, k: 20, mode: .keyword, recordAccess: false)
        #expect(found.count == expected.count, "\(query): \(found.count) hits, SQLite \(expected.count)")
        for (position, (hit, reference)) in zip(found, expected).enumerated() {
          let score = try #require(hit.bm25)
          let referenceScore = try #require(reference.bm25)
          #expect(
            abs(score - referenceScore) <= 1e-9 * max(1, referenceScore),
            "\(query) #\(position): score \(score), SQLite \(referenceScore)")
          // Rows of equal scores may come in either order; any other difference is a rank.
          if abs(score - referenceScore) <= 1e-9 * max(1, referenceScore) {
            let tied = expected.filter {
              abs(($0.bm25 ?? 0) - referenceScore) <= 1e-9 * max(1, referenceScore)
            }
            #expect(
              hit.text == reference.text || tied.contains { $0.text == hit.text },
              "\(query) #\(position): \(hit.text) where SQLite ranks \(reference.text)")
          }
          compared += 1
        }
      }
      // Most queries match several rows: the comparison is not vacuous.
      #expect(compared >= 25)
      #expect(try await postgres.search("nothing matches this zebra", k: 5, mode: .keyword).isEmpty)
    }
  }
}
