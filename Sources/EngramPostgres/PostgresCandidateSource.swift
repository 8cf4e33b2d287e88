import EngramCore
import EngramStore

/// The PostgreSQL store's candidates: no keyword read ahead (a round trip costs more than it
/// hides); keyword candidates, rows and texts in one statement.
struct PostgresCandidateSource: CandidateSource {
  let store: PostgresStore

  func sessionID(named name: String) throws -> Int64? {
    try store.read { try $0.sessionID(named: name) }
  }

  func keywordCandidates(_ query: KeywordQuery) throws -> [TextHit]? { nil }

  func messageIDs(inSessions ids: Set<Int64>) throws -> Set<Int64> {
    try store.read { try $0.messageIDs(inSessions: ids) }
  }

  func rankedCandidates<Ranked: Sendable>(
    ids: [ItemKind: [Int64]], query: KeywordQuery, searchingKeywords: Bool,
    rank: ([TextHit], [CandidateRow]) throws -> [(candidate: Ranked, kind: ItemKind, id: Int64)]
  ) throws -> (keywordHits: [TextHit], ranked: [Ranked], texts: [ItemKind: [Int64: ItemText]]) {
    let found = try store.read {
      try $0.searchCandidates(
        keywordQuery: searchingKeywords ? query.text : nil, kinds: query.kinds, limit: query.limit,
        sessionID: query.sessionID, timeRange: query.timeRange, vectorIDs: ids)
    }
    let ranked = try rank(found.keywordHits, found.rows)
    return (found.keywordHits, ranked.map(\.candidate), found.texts)
  }
}
