import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct FTSRankTests {
  /// A contentless FTS5 table like the schema's, holding `documents` as rows 1, 2, ...
  private func table(_ documents: [String]) throws -> (TemporaryDirectory, Connection) {
    let directory = try TemporaryDirectory()
    let connection = try Connection(path: directory.file("rank.sqlite"))
    try connection.execute("CREATE VIRTUAL TABLE t USING fts5(body, content = '', tokenize = 'unicode61')")
    for (index, document) in documents.enumerated() {
      try connection.execute("INSERT INTO t (rowid, body) VALUES (\(index + 1), '\(document)')")
    }
    return (directory, connection)
  }

  private func ranked(_ connection: Connection, _ match: String, function: String = "engram_bm25") throws
    -> [(id: Int64, score: Double)]
  {
    try connection.prepare(
      "SELECT rowid, -\(function)(t) FROM t WHERE t MATCH '\(match)' ORDER BY \(function)(t), rowid"
    ).map { ($0.int64(at: 0), $0.double(at: 1)) }
  }

  private let documents = [
    "alice likes tea", "alice likes coffee very much", "bob drinks tea", "alice runs", "carol tea tea tea",
  ]

  /// Each score is Lucene's BM25 with k1 1.2 and b 0.4, written out here independently.
  @Test func scoresAreBM25WithLuceneIDF() throws {
    let (directory, connection) = try table(documents)
    _ = directory
    let rows = 5.0
    let average = 17.0 / rows
    func expected(_ terms: [(matching: Double, frequency: Double)], length: Double) -> Double {
      terms.reduce(0) { sum, term in
        let idf = log(1 + (rows - term.matching + 0.5) / (term.matching + 0.5))
        let norm = 1 - 0.4 + 0.4 * length / average
        return sum + idf * term.frequency * 2.2 / (term.frequency + 1.2 * norm)
      }
    }
    let alice = try ranked(connection, "alice")
    #expect(alice.map(\.id) == [4, 1, 2])
    #expect(abs(alice[0].score - expected([(3, 1)], length: 2)) < 1e-9)
    #expect(abs(alice[2].score - expected([(3, 1)], length: 5)) < 1e-9)

    let both = try ranked(connection, "alice OR tea")
    #expect(both.first?.id == 1)
    #expect(abs(both[0].score - expected([(3, 1), (3, 1)], length: 3)) < 1e-9)
    let carol = try #require(both.first { $0.id == 5 })
    #expect(abs(carol.score - expected([(3, 3)], length: 4)) < 1e-9)
  }

  /// A term in more than half of the rows still counts (FTS5's `bm25()` floors it at
  /// almost nothing), so of two equally long rows that match a rare term, the one that also
  /// holds the common term ranks first.
  @Test func aCommonTermStillCounts() throws {
    let (directory, connection) = try table(documents)
    _ = directory
    let builtin = try ranked(connection, "alice", function: "bm25")
    #expect(builtin.allSatisfy { $0.score < 1e-3 })
    #expect(try ranked(connection, "alice").allSatisfy { $0.score > 0.1 })

    // Rows 1 and 3 are both three words with "tea": only ours tells them apart.
    let builtinBoth = try ranked(connection, "alice OR tea", function: "bm25")
    let one = try #require(builtinBoth.first { $0.id == 1 })
    let three = try #require(builtinBoth.first { $0.id == 3 })
    #expect(abs(one.score - three.score) < 1e-3)
    let oursBoth = try ranked(connection, "alice OR tea")
    let oursOne = try #require(oursBoth.first { $0.id == 1 })
    let oursThree = try #require(oursBoth.first { $0.id == 3 })
    #expect(oursOne.score > oursThree.score + 0.1)
  }

  /// Multi-word phrases count their own documents and instances.
  @Test func phrasesCountAsOneTerm() throws {
    let (directory, connection) = try table(documents)
    _ = directory
    let hits = try ranked(connection, "\"alice likes\"")
    #expect(hits.map(\.id) == [1, 2])
    let idf = log(1 + (5 - 2 + 0.5) / (2 + 0.5))
    let norm = 1 - 0.4 + 0.4 * 3 / (17.0 / 5)
    #expect(abs(hits[0].score - idf * 2.2 / (1 + 1.2 * norm)) < 1e-9)
  }

  /// The engine's search orders by this rank: a speaker named in five of six turns still
  /// counts, so Wren's longer turn about the lake ranks above Ivo's short one (FTS5's
  /// `bm25()` gives "wren" almost no weight and puts the shorter turn first).
  @Test func searchTextUsesTheRank() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    var ids: [Int64] = []
    for (speaker, text) in [
      ("Ivo", "the lake was cold"), ("Wren", "the lake was cold and the wind was strong"),
      ("Wren", "we sang all night"), ("Wren", "a long drive home"), ("Wren", "we ate soup"),
      ("Wren", "the stars came out"),
    ] {
      ids.append(
        try connection.insert(Message(role: .user, speaker: speaker, content: text, createdAt: t0)))
    }
    let hits = try connection.searchText("Wren lake", kinds: [.message])
    #expect(hits.first?.ownerID == ids[1])
    #expect(hits.count == 6)
    #expect(hits.allSatisfy { $0.bm25 > 0 })
  }
}
