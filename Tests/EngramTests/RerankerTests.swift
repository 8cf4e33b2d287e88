import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// The re-ranker's features and its re-ordering, with weights chosen by the test (the
/// trained ones change when it is fitted again).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RerankerTests {
  let day = Date(timeIntervalSince1970: 1_683_554_160)

  func turn(_ id: Int64, _ text: String, score: Double, speaker: String? = "Ann", cosine: Double? = 0.5)
    -> SearchHit
  {
    SearchHit(
      kind: .message, id: id, text: text, sessionID: 1, speaker: speaker, timestamp: day, bm25: nil,
      cosine: cosine, score: score, provenance: ["vector"], metadata: [:])
  }

  func weights(_ named: [String: Double]) -> Reranker {
    Reranker(weights: Reranker.featureNames.map { named[$0] ?? 0 })
  }

  @Test func everyHitGetsOneValuePerFeature() {
    let hits = [turn(1, "We went hiking.", score: 1), turn(3, "Was it fun?", score: 0.5)]
    let rows = Reranker.features(of: hits, query: "When did Ann go hiking?")
    #expect(rows.count == 2)
    #expect(rows.allSatisfy { $0.count == Reranker.featureNames.count })
    #expect(rows.allSatisfy { $0.allSatisfy(\.isFinite) })
    #expect(Reranker.features(of: [], query: "x").isEmpty)
  }

  @Test func aWhenQuestionRaisesTurnsThatSayWhen() {
    let hits = [
      turn(1, "The hiking trip was great fun.", score: 1),
      turn(5, "We went hiking last Saturday.", score: 0.9),
    ]
    let model = weights(["fused": 1, "when_temporal": 1])
    #expect(model.rerank(hits, query: "When did Ann go hiking?").map(\.id) == [5, 1])
    // Each takes the fused score of its new place: scores still fall down the list.
    #expect(model.rerank(hits, query: "When did Ann go hiking?").map(\.score) == [1, 0.9])
    // Not a "when" question: the fused order stands.
    #expect(model.rerank(hits, query: "Where did Ann go hiking?").map(\.id) == [1, 5])
  }

  @Test func aTurnNotNamingTheAskedPersonFallsBehind() {
    let hits = [
      turn(1, "I adopted a puppy.", score: 1, speaker: "Bo"),
      turn(2, "I adopted a kitten.", score: 0.95, speaker: "Ann"),
    ]
    let model = weights(["fused": 1, "names_missing": -1])
    #expect(model.rerank(hits, query: "What did Ann adopt?").map(\.id) == [2, 1])
  }

  @Test func memoriesKeepTheirPlacesAndTiesKeepTheFusedOrder() {
    let memory = SearchHit(
      kind: .memory, id: 9, text: "Ann is vegetarian", sessionID: nil, speaker: nil, timestamp: day, bm25: 2,
      cosine: 0.7, score: 0.8, provenance: ["keyword", "vector"], metadata: [:])
    let hits = [turn(1, "a", score: 1), memory, turn(2, "a", score: 0.5), turn(3, "b?", score: 0.4)]
    // Only the question-turn feature: turn 3 drops below the others, which tie and keep order.
    let model = weights(["question_turn": -1])
    let ranked = model.rerank(hits, query: "what does Ann eat")
    #expect(ranked.map(\.id) == [1, 9, 2, 3])
    #expect(ranked[1] == memory)
    #expect(ranked.map(\.score) == hits.map(\.score))
    #expect(model.rerank(hits, query: "what does Ann eat") == ranked)
  }

  @Test func theTrainedModelHasOneWeightPerFeature() {
    #expect(Reranker.trained.weights.count == Reranker.featureNames.count)
    #expect(RetrievalWeights().reranker == Reranker.trained)
  }
}
