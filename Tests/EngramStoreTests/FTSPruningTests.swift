import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// The pruned keyword search (`FTSPruning`) returns exactly what ranking every matching row
/// returns: the same rows, scores (bit for bit), order and tie-break.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct FTSPruningTests {
  /// Prunes whenever it can, however few rows (the engine's setting ranks small tables whole).
  static let eager = FTSPruning(
    minimumMatches: 0, firstPassPerHit: 1, firstPassFraction: 1 << 40, maximumClauses: 32,
    prunesFilters: true, boundFactor: FTSRank.k1 + 1)

  static let speakers = ["Ann", "Bob", "Cyd", "Dee"]
  static let common = ["walk", "home", "good", "time", "day", "friend"]
  static let middling = (0..<24).map { "mid\(Self.letters($0))" }
  static let rare = (0..<80).map { "rare\(Self.letters($0))" }

  /// `index` as letters (the tokenizer splits digits from nothing, but keep terms plain).
  static func letters(_ index: Int) -> String {
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz")
    return String(alphabet[index / 26 % 26]) + String(alphabet[index % 26])
  }

  /// A turn of a few words: mostly common ones, some middling, now and then a rare one, and
  /// sometimes a common word many times in a short turn.
  static func sentence(_ random: inout SplitMix64) -> String {
    if Int.random(in: 0..<40, using: &random) == 0 {
      let word = common.randomElement(using: &random)!
      return Array(repeating: word, count: Int.random(in: 3...9, using: &random)).joined(separator: " ")
    }
    return (0..<Int.random(in: 1...14, using: &random)).map { _ in
      switch Int.random(in: 0..<10, using: &random) {
      case 0..<5: common.randomElement(using: &random)!
      case 5..<8: middling.randomElement(using: &random)!
      case 8: rare.randomElement(using: &random)!
      default: speakers.randomElement(using: &random)!.lowercased()
      }
    }.joined(separator: " ")
  }

  /// A memory of `turns` turns (every one with a speaker), a tenth as many memories and
  /// summaries, over three sessions and a spread of times; some rows written by another
  /// user when `otherUser`.
  static func memory(seed: UInt64, turns: Int, otherUser: Bool = false) throws -> (
    TemporaryDirectory, Connection, sessions: [Int64]
  ) {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    var random = SplitMix64(seed: seed)
    try connection.transaction {
      let sessions = try (0..<3).map { try connection.insert(Session(title: "s\($0)", startedAt: t0)) }
      var messages: [Message] = []
      for index in 0..<turns {
        messages.append(
          Message(
            sessionID: sessions.randomElement(using: &random), role: .user,
            speaker: speakers.randomElement(using: &random), content: sentence(&random),
            createdAt: t(Int64(index) * 1000)))
      }
      _ = try connection.insert(contentsOf: messages)
      for index in 0..<(turns / 10) {
        _ = try connection.insert(
          Memory(kind: .fact, content: sentence(&random), createdAt: t(Int64(index) * 7000)))
        _ = try connection.insert(
          Summary(
            sessionID: sessions.randomElement(using: &random), startAt: t(Int64(index) * 9000),
            endAt: t(Int64(index) * 9000 + 500), content: sentence(&random), createdAt: t0))
      }
    }
    if otherUser {
      let mine = connection.user
      connection.user = "other"
      try connection.transaction {
        for index in 0..<(turns / 3) {
          _ = try connection.insert(
            Message(
              role: .user, speaker: speakers.randomElement(using: &random), content: sentence(&random),
              createdAt: t(Int64(index) * 3000)))
        }
      }
      connection.user = mine
    }
    let sessions = try connection.prepare("SELECT id FROM sessions ORDER BY id").map { $0.int64(at: 0) }
    return (directory, connection, sessions)
  }

  /// A question naming a speaker and a few other words.
  static func question(_ random: inout SplitMix64) -> String {
    var words = [speakers.randomElement(using: &random)!]
    for _ in 0..<Int.random(in: 1...4, using: &random) {
      switch Int.random(in: 0..<3, using: &random) {
      case 0: words.append(common.randomElement(using: &random)!)
      case 1: words.append(middling.randomElement(using: &random)!)
      default: words.append(rare.randomElement(using: &random)!)
      }
    }
    return "What did " + words.joined(separator: " ") + "?"
  }

  /// Pruned and unpruned searches of `query` agree, bit for bit.
  static func expectSame(
    _ connection: Connection, _ query: String, kinds: Set<ItemKind>, limit: Int, sessionID: Int64? = nil,
    timeRange: Range<Int64>? = nil, pruning: FTSPruning = eager,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let reference = try connection.searchText(
      query, kinds: kinds, limit: limit, sessionID: sessionID, timeRange: timeRange, pruning: nil)
    let pruned = try connection.searchText(
      query, kinds: kinds, limit: limit, sessionID: sessionID, timeRange: timeRange, pruning: pruning)
    #expect(pruned == reference, "\(query) limit \(limit)", sourceLocation: sourceLocation)
  }

  /// Which pass a pruned search of the turns took.
  static func pass(
    _ connection: Connection, _ query: String, limit: Int, pruning: FTSPruning = eager
  ) throws -> RankedSearch.Pass {
    let search = RankedSearch(
      connection: connection, kind: .message, limit: limit, filtered: false, sessionID: nil, timeRange: nil)
    return try search.prunedPass(FTSQuery.terms(for: query), pruning).pass
  }

  @Test(arguments: [UInt64(1), 2, 3])
  func randomizedMemoriesRankTheSameRows(seed: UInt64) throws {
    let (directory, connection, _) = try Self.memory(seed: seed, turns: 1_500)
    _ = directory
    var random = SplitMix64(seed: seed &* 7919)
    var passes: [RankedSearch.Pass: Int] = [:]
    for _ in 0..<40 {
      let query = Self.question(&random)
      for limit in [1, 5, 20, 60] {
        try Self.expectSame(connection, query, kinds: [.message], limit: limit)
        passes[try Self.pass(connection, query, limit: limit), default: 0] += 1
      }
    }
    // Every way of answering was taken, so each was compared.
    #expect(passes[.first, default: 0] > 0)
    #expect(passes[.second, default: 0] > 0)
    #expect(passes[.whole, default: 0] > 0)
  }

  /// The engine's own setting (which ranks small tables whole) agrees too.
  @Test func theStandardSettingAgrees() throws {
    let (directory, connection, _) = try Self.memory(seed: 11, turns: 3_000)
    _ = directory
    var random = SplitMix64(seed: 99)
    for _ in 0..<20 {
      try Self.expectSame(
        connection, Self.question(&random), kinds: Set(ItemKind.allCases), limit: 20, pruning: .standard)
    }
  }

  @Test func filtersByUserSessionAndTime() throws {
    let (directory, connection, sessions) = try Self.memory(seed: 5, turns: 1_200, otherUser: true)
    _ = directory
    var random = SplitMix64(seed: 17)
    for _ in 0..<25 {
      let query = Self.question(&random)
      let start = Int64.random(in: 0..<600, using: &random) * 1000
      let range = (t0ms + start)..<(t0ms + start + 500_000)
      for limit in [3, 30] {
        try Self.expectSame(connection, query, kinds: [.message], limit: limit)
        try Self.expectSame(connection, query, kinds: [.message], limit: limit, sessionID: sessions[1])
        try Self.expectSame(connection, query, kinds: [.message], limit: limit, timeRange: range)
        try Self.expectSame(
          connection, query, kinds: Set(ItemKind.allCases), limit: limit, sessionID: sessions[2],
          timeRange: range)
      }
    }
  }

  @Test func severalKindsMergeTheSame() throws {
    let (directory, connection, _) = try Self.memory(seed: 23, turns: 1_000)
    _ = directory
    var random = SplitMix64(seed: 31)
    for _ in 0..<25 {
      let query = Self.question(&random)
      for limit in [4, 40] {
        try Self.expectSame(connection, query, kinds: Set(ItemKind.allCases), limit: limit)
        try Self.expectSame(connection, query, kinds: [.memory, .summary], limit: limit)
      }
    }
  }

  /// Many rows tie at the k-th score: the same ones (the first in rowid order) are kept, in
  /// the same order, and the pruned search did prune.
  @Test func tiesAtTheKthScoreBreakTheSameWay() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    try connection.transaction {
      for index in 0..<400 {
        let content =
          switch index % 8 {
          case 0: "zebra apple"
          case 1: "apple pie"
          default: "walk home"
          }
        _ = try connection.insert(
          Message(role: .user, speaker: "Ann", content: content, createdAt: t(Int64(index))))
      }
    }
    for limit in [1, 7, 30, 50, 51, 120] {
      try Self.expectSame(connection, "Ann zebra apple", kinds: [.message], limit: limit)
      try Self.expectSame(connection, "Ann apple", kinds: [.message], limit: limit)
    }
    #expect(try Self.pass(connection, "Ann zebra", limit: 30) != .whole)
    let hits = try connection.searchText("Ann zebra", kinds: [.message], limit: 30)
    #expect(hits.map(\.ownerID) == hits.map(\.ownerID).sorted())
  }

  /// Quoted phrases and CJK bigrams are terms like any other (each one FTS5 phrase).
  @Test func phrasesAndCJKTermsPruneTheSame() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    var random = SplitMix64(seed: 41)
    let texts = [
      "the offer came out of the blue", "blue paint is out of stock", "我周末去攀岩了", "明天下午三点开会",
      "周末下午去开会", "out of time", "walk home",
    ]
    try connection.transaction {
      for index in 0..<600 {
        _ = try connection.insert(
          Message(
            role: .user, speaker: Self.speakers.randomElement(using: &random),
            content: texts.randomElement(using: &random)! + " " + Self.sentence(&random),
            createdAt: t(Int64(index))))
      }
    }
    var pruned = 0
    for query in [
      #"Ann "out of the blue" walk"#, "Bob 我周末去攀岩了 home", "Cyd 下午 blue", #""out of" time Dee"#,
      "攀岩 开会 周末 下午",
    ] {
      for limit in [3, 25] {
        try Self.expectSame(connection, query, kinds: [.message], limit: limit)
        if try Self.pass(connection, query, limit: limit) != .whole { pruned += 1 }
      }
    }
    #expect(pruned > 0)
  }

  /// Fewer rows hold the rare terms than the limit: the whole table is ranked.
  @Test func fewerRareRowsThanTheLimit() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    try connection.transaction {
      for index in 0..<300 {
        let content = index % 100 == 0 ? "kiwi tart" : "walk home today"
        _ = try connection.insert(
          Message(role: .user, speaker: index % 3 == 0 ? "Ann" : "Bob", content: content, createdAt: t0))
      }
    }
    try Self.expectSame(connection, "Ann kiwi", kinds: [.message], limit: 10)
    #expect(try Self.pass(connection, "Ann kiwi", limit: 10) == .whole)
    // Terms found nowhere are left out of the pruned queries, with the same scores.
    try Self.expectSame(connection, "Ann kiwi unheardof walk", kinds: [.message], limit: 2)
  }

  /// A common term many times in a short row scores well above its idf (up to idf * (k1 + 1)):
  /// with that bound the row is found; with idf alone as the bound, the first pass would be
  /// taken as final and lose it.
  @Test func theBoundIsTheSaturatedTermFrequency() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    var repeated: Int64 = 0
    try connection.transaction {
      for index in 0..<300 {
        // Five long turns hold the rare term; a third of the others are Ann's.
        let speaker: String? = index >= 5 && index % 3 == 0 ? "Ann" : nil
        let content =
          index < 5 ? "kiwi " + Array(repeating: "plain", count: 59).joined(separator: " ") : "day"
        _ = try connection.insert(Message(role: .user, speaker: speaker, content: content, createdAt: t0))
      }
      repeated = try connection.insert(
        Message(role: .user, speaker: "Ann", content: "Ann Ann Ann Ann Ann Ann Ann", createdAt: t0))
    }
    let reference = try connection.searchText(
      "Ann kiwi", kinds: [.message], limit: 5, sessionID: nil, timeRange: nil, pruning: nil)
    #expect(reference.first?.ownerID == repeated)
    try Self.expectSame(connection, "Ann kiwi", kinds: [.message], limit: 5)

    var idfOnly = Self.eager
    idfOnly.boundFactor = 1
    let wrong = try connection.searchText(
      "Ann kiwi", kinds: [.message], limit: 5, sessionID: nil, timeRange: nil, pruning: idfOnly)
    #expect(wrong != reference)
    #expect(!wrong.contains { $0.ownerID == repeated })
  }

  /// Every term set that can reach theta holds one of the clauses, and each clause reaches
  /// it (checked against all subsets), including when too many clauses fall back to single
  /// terms.
  @Test(arguments: [32, 2])
  func clausesCoverEverySetReachingTheta(maximumClauses: Int) throws {
    var random = SplitMix64(seed: UInt64(maximumClauses))
    var pruning = Self.eager
    pruning.maximumClauses = maximumClauses
    var checked = 0
    for _ in 0..<300 {
      let bounds = (0..<Int.random(in: 2...7, using: &random)).map { _ in
        Double.random(in: 0.5...12, using: &random)
      }
      let theta = Double.random(in: 0.5...(bounds.reduce(0, +)), using: &random)
      guard let clauses = pruning.clauses(bounds: bounds, theta: theta) else { continue }
      checked += 1
      for mask in 1..<(1 << bounds.count) {
        let set = Set(bounds.indices.filter { mask & (1 << $0) != 0 })
        let sum = set.reduce(0.0) { $0 + bounds[$1] }
        if sum >= theta {
          #expect(clauses.contains { Set($0).isSubset(of: set) }, "\(bounds) \(theta) \(clauses)")
        }
      }
      if maximumClauses == 32 {
        for clause in clauses { #expect(clause.reduce(0.0) { $0 + bounds[$1] } * (1 + 1e-9) >= theta) }
      }
    }
    #expect(checked > 50)
  }

  /// `engram_bm25` refuses counts that do not fit the expression.
  @Test func mismatchedCountsAreAnError() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    _ = try connection.insert(Message(role: .user, content: "kiwi tart", createdAt: t0))
    let search = RankedSearch(
      connection: connection, kind: .message, limit: 5, filtered: false, sessionID: nil, timeRange: nil)
    #expect(throws: SQLiteError.self) { try search.rows(#""kiwi" OR "tart""#, skip: 0, counts: [1]) }
    #expect(throws: SQLiteError.self) { try search.rows(#""kiwi" OR "tart""#, skip: 3, counts: nil) }
    #expect(try search.rows(#""kiwi" OR "tart""#, skip: 0, counts: [1, 1]).count == 1)
  }
}
