import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// `Fusion.names`: which hits a query actually names (what `memories.forget(matching:)`
/// deletes), as opposed to merely ranking them.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct FusionNamingTests {
  static func hit(_ text: String, bm25: Double?, cosine: Double?) -> SearchHit {
    SearchHit(
      kind: .memory, id: 1, text: text, sessionID: nil, speaker: nil,
      timestamp: Date(timeIntervalSince1970: 0),
      bm25: bm25, cosine: cosine, score: 0.5, provenance: [], metadata: [:])
  }

  @Test(arguments: [
    // Both retrievers agree, at the naming cosine or above.
    ("tea", "Alice drinks coffee", 1.2 as Double?, 0.5 as Double?, true),
    ("tea", "Alice drinks coffee", 1.2, 0.49, false),
    // A vector match alone, however close, is not naming.
    ("tea", "Alice drinks coffee", nil, 0.95, false),
    // The text contains the query, case ignored, whatever the scores.
    ("Green Tea", "alice likes green tea", nil, 0.1, true),
    ("green tea", "Alice likes tea", 3.0, nil, false),
  ])
  func namesWhenBothRetrieversAgreeOrTheTextContainsTheQuery(
    query: String, text: String, bm25: Double?, cosine: Double?, named: Bool
  ) {
    #expect(Fusion.names(Self.hit(text, bm25: bm25, cosine: cosine), query: query) == named)
  }
}
