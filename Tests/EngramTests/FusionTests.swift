import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Every term of the ranking function on its own, with the others switched off.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct FusionTests {
  let now = Date(timeIntervalSince1970: 1_700_000_000)
  /// Every optional term off: fusion alone.
  let plain = RetrievalWeights(vectorWeight: 0.4, neighbourWeight: 0, speakerWeight: 0)

  func turn(
    _ id: Int64, session: Int64 = 1, speaker: String? = nil, previous: Int64? = nil, next: Int64? = nil
  )
    -> CandidateRow
  {
    CandidateRow(
      kind: .message, id: id, sessionID: session, speaker: speaker, timestamp: now, previous: previous,
      next: next)
  }

  func key(_ kind: ItemKind, _ id: Int64) -> Int64 { VectorKey.make(kind, id) }

  func request(
    _ mode: SearchMode = .hybrid, weights: RetrievalWeights? = nil, speaker: String? = nil,
    filters: SearchFilters = SearchFilters(), k: Int = 10
  ) -> Fusion.Request {
    Fusion.Request(
      mode: mode, weights: weights ?? plain, namedSpeaker: speaker, filters: filters, k: k, now: now)
  }

  @Test func hybridNormalizesEachRetrieverThenWeighsThem() {
    // Cosine 0.9 / 0.5 / 0.7 -> 1 / 0 / 0.5; BM25 only for 1 and 2: 10 / 2 -> 1 / 0.
    let rows = [turn(1), turn(2), turn(3)]
    let cosine = [key(.message, 1): 0.9, key(.message, 2): 0.5, key(.message, 3): 0.7]
    let bm25 = [key(.message, 1): 10.0, key(.message, 2): 2.0]
    let ranked = Fusion.rank(rows: rows, cosine: cosine, bm25: bm25, request: request())
    let scores = Dictionary(uniqueKeysWithValues: ranked.map { ($0.row.id, $0.score) })
    #expect(abs(scores[1]! - 1.0) < 1e-12)
    #expect(abs(scores[2]! - 0.0) < 1e-12)
    #expect(abs(scores[3]! - 0.4 * 0.5) < 1e-12)
    #expect(ranked.map(\.row.id) == [1, 3, 2])
    #expect(ranked[0].bm25 == 10 && ranked[0].cosine == 0.9)
    #expect(ranked[1].bm25 == nil)
  }

  @Test func vectorAndKeywordModesRankByTheirRawScore() {
    let rows = [turn(1), turn(2)]
    let cosine = [key(.message, 1): 0.2, key(.message, 2): 0.8]
    let bm25 = [key(.message, 1): 7.0]
    let vector = Fusion.rank(rows: rows, cosine: cosine, bm25: bm25, request: request(.vector))
    #expect(vector.map(\.row.id) == [2, 1])
    #expect(vector[0].score == 0.8)
    let keyword = Fusion.rank(rows: rows, cosine: cosine, bm25: bm25, request: request(.keyword))
    #expect(keyword.map(\.row.id) == [1])
    #expect(keyword[0].score == 7)
  }

  @Test func aTurnGainsAShareOfItsBestNeighbour() {
    var weights = plain
    weights.neighbourWeight = 0.3
    // Turn 2 is the answer after question 1; turn 3 follows 2 but was not found itself.
    let rows = [turn(1, next: 2), turn(2, previous: 1, next: 3), turn(4)]
    let cosine = [key(.message, 1): 1.0, key(.message, 2): 0.0, key(.message, 4): 0.5]
    let ranked = Fusion.rank(rows: rows, cosine: cosine, bm25: [:], request: request(weights: weights))
    let byID = Dictionary(uniqueKeysWithValues: ranked.map { ($0.row.id, $0) })
    // Fused: 1 -> 0.4, 2 -> 0, 4 -> 0.2; turn 2 gains 0.3 * 0.4.
    #expect(abs(byID[2]!.score - 0.3 * 0.4) < 1e-12)
    #expect(byID[2]!.neighbour)
    // Turn 1's neighbour (2) scored 0: no gain, no flag.
    #expect(!byID[1]!.neighbour && abs(byID[1]!.score - 0.4) < 1e-12)
    #expect(!byID[4]!.neighbour)
    // Off by default in vector mode.
    let vector = Fusion.rank(
      rows: rows, cosine: cosine, bm25: [:], request: request(.vector, weights: weights))
    #expect(vector.allSatisfy { !$0.neighbour })
  }

  @Test func turnsOfTheNamedSpeakerGainTheSpeakerWeight() {
    var weights = plain
    weights.speakerWeight = 0.2
    let rows = [turn(1, speaker: "Rosalind"), turn(2, speaker: "Eleanor")]
    let cosine = [key(.message, 1): 0.5, key(.message, 2): 0.5]
    let ranked = Fusion.rank(
      rows: rows, cosine: cosine, bm25: [:], request: request(weights: weights, speaker: "eleanor"))
    #expect(ranked.map(\.row.id) == [2, 1])
    #expect(ranked[0].speaker && !ranked[1].speaker)
    #expect(abs(ranked[0].score - ranked[1].score - 0.2) < 1e-12)
  }

  @Test func aMemoryIsPutOnTheTurnsScale() {
    var weights = plain
    weights.neighbourWeight = 0.4
    weights.speakerWeight = 0.3
    // A memory and a turn equally relevant (cosine 0.8); the turn follows a turn that scored
    // the same, the third turn is the least relevant.
    let memory = CandidateRow(kind: .memory, id: 7, timestamp: now)
    let rows = [memory, turn(1, next: 2), turn(2, previous: 1), turn(3)]
    let cosine = [
      key(.memory, 7): 0.8, key(.message, 1): 0.8, key(.message, 2): 0.8, key(.message, 3): 0.2,
    ]
    let plainQuery = Fusion.rank(rows: rows, cosine: cosine, bm25: [:], request: request(weights: weights))
    let scores = Dictionary(
      uniqueKeysWithValues: plainQuery.map { ($0.row.kind == .memory ? -1 : $0.row.id, $0.score) })
    // Each turn gains 0.4 of its neighbour's 0.4; the memory, with no neighbour, 0.4 of its own.
    #expect(abs(scores[1]! - 0.4 * 1.4) < 1e-12)
    #expect(abs(scores[-1]! - 0.4 * 1.4) < 1e-12)
    // A query naming a speaker: the memory's scale includes the speaker weight too.
    let named = Fusion.rank(
      rows: rows, cosine: cosine, bm25: [:], request: request(weights: weights, speaker: "leo"))
    #expect(abs(named.first { $0.row.kind == .memory }!.score - 0.4 * 1.7) < 1e-12)
    // Off in vector mode, and with both terms off the memory keeps its fused score.
    let vector = Fusion.rank(
      rows: rows, cosine: cosine, bm25: [:], request: request(.vector, weights: weights))
    #expect(vector.first { $0.row.kind == .memory }!.score == 0.8)
    let off = Fusion.rank(rows: rows, cosine: cosine, bm25: [:], request: request())
    #expect(abs(off.first { $0.row.kind == .memory }!.score - 0.4) < 1e-12)
  }

  @Test func recencyHalvesEveryHalfLife() {
    var weights = plain
    weights.recencyWeight = 1
    weights.recencyHalfLife = 86_400
    var old = turn(1)
    old.timestamp = now.addingTimeInterval(-86_400)
    var future = turn(2)
    future.timestamp = now.addingTimeInterval(3_600)
    let cosine = [key(.message, 1): 0.5, key(.message, 2): 0.5]
    let ranked = Fusion.rank(
      rows: [old, future], cosine: cosine, bm25: [:], request: request(weights: weights))
    let byID = Dictionary(uniqueKeysWithValues: ranked.map { ($0.row.id, $0.score) })
    // Equal cosines normalize to 1 (0.4 after the vector weight); ages 1 day and 0 (clamped).
    #expect(abs(byID[1]! - (0.4 + 0.5)) < 1e-12)
    #expect(abs(byID[2]! - (0.4 + 1.0)) < 1e-12)
  }

  @Test func importanceRaisesMemoriesOnly() {
    var weights = plain
    weights.importanceWeight = 0.5
    let memory = CandidateRow(kind: .memory, id: 7, timestamp: now, importance: 0.8)
    let cosine = [key(.memory, 7): 0.5, key(.message, 1): 0.5]
    let ranked = Fusion.rank(
      rows: [memory, turn(1)], cosine: cosine, bm25: [:], request: request(weights: weights))
    #expect(ranked.map(\.row.kind) == [.memory, .message])
    #expect(abs(ranked[0].score - (0.4 + 0.4)) < 1e-12)
    #expect(abs(ranked[1].score - 0.4) < 1e-12)
  }

  @Test func filtersDropSupersededExcludedAndOtherScopes() {
    let superseded = CandidateRow(kind: .memory, id: 1, timestamp: now, superseded: true)
    let otherUser = CandidateRow(kind: .memory, id: 2, timestamp: now, scopeUser: "bob")
    let mine = CandidateRow(kind: .memory, id: 3, timestamp: now, scopeUser: "ann")
    let dialogue = turn(4, session: 99)
    let rows = [superseded, otherUser, mine, dialogue]
    let cosine = Dictionary(uniqueKeysWithValues: rows.map { (VectorKey.make($0.kind, $0.id), 0.5) })
    let filters = SearchFilters(scopeUser: "ann", excludedSessions: [99])
    let ranked = Fusion.rank(
      rows: rows, cosine: cosine, bm25: [:], request: request(.vector, filters: filters))
    #expect(ranked.map(\.row.id) == [3])
    var withHistory = filters
    withHistory.includeSuperseded = true
    withHistory.scopeUser = nil
    let all = Fusion.rank(
      rows: rows, cosine: cosine, bm25: [:], request: request(.vector, filters: withHistory))
    #expect(all.map(\.row.id) == [1, 2, 3])
  }

  @Test func leftOutCandidatesTakeNoPartInTheNormalization() {
    // Cosine 0.6 / 0.9 (an excluded session's turn) / 0.5: over the admitted turns alone,
    // 0.6 is the best (1) and 0.5 the worst (0); the excluded 0.9 would have made 0.6 a 0.25.
    let rows = [turn(1), turn(2, session: 2), turn(3)]
    let cosine = [key(.message, 1): 0.6, key(.message, 2): 0.9, key(.message, 3): 0.5]
    let ranked = Fusion.rank(
      rows: rows, cosine: cosine, bm25: [:], request: request(filters: SearchFilters(excludedSessions: [2])))
    #expect(ranked.map(\.row.id) == [1, 3])
    #expect(abs(ranked[0].score - plain.vectorWeight) < 1e-12)
    #expect(ranked[1].score == 0)
  }

  @Test func tiesBreakByKindThenIdAndLargeKSortsTheSame() {
    var rows: [CandidateRow] = []
    for id in Int64(1)...40 {
      rows.append(turn(id))
      rows.append(CandidateRow(kind: .summary, id: id, timestamp: now))
      rows.append(CandidateRow(kind: .memory, id: id, timestamp: now))
    }
    let cosine = Dictionary(
      uniqueKeysWithValues: rows.map { (VectorKey.make($0.kind, $0.id), Double($0.id % 3)) })
    // Score 2 for ids 2, 5, ..., 38 (13 of each kind): turns first, then memories, by id.
    let small = Fusion.rank(
      rows: rows.shuffled(), cosine: cosine, bm25: [:], request: request(.vector, k: 15))
    #expect(small.map(\.row.kind) == Array(repeating: .message, count: 13) + [.memory, .memory])
    #expect(small.map(\.row.id) == Array(stride(from: Int64(2), through: 38, by: 3)) + [2, 5])
    let large = Fusion.rank(
      rows: rows.shuffled(), cosine: cosine, bm25: [:], request: request(.vector, k: 100))
    let reference = Fusion.rank(rows: rows, cosine: cosine, bm25: [:], request: request(.vector, k: 120))
    #expect(large.count == 100)
    #expect(large == Array(reference.prefix(100)))
    #expect(Array(large.prefix(15)) == small)
  }

  @Test func theNamedSpeakerIsTheOneKnownNameInTheQuery() {
    let known = ["rosalind": "Rosalind", "eleanor": "Eleanor"]
    #expect(Fusion.namedSpeaker(in: "What did Rosalind say?", known: known) == "rosalind")
    #expect(Fusion.namedSpeaker(in: "rosalind's new job", known: known) == "rosalind")
    #expect(Fusion.namedSpeaker(in: "Rosalind and Eleanor", known: known) == nil)
    #expect(Fusion.namedSpeaker(in: "Rosalinds", known: known) == nil)
    #expect(Fusion.namedSpeaker(in: "anyone", known: [:]) == nil)
  }
}
