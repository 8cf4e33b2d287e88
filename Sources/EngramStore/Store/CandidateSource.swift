import EngramCore

/// The keyword side of a search: the query text and where to look.
public struct KeywordQuery: Sendable, Hashable {
  /// The text searched (query syntax is plain text).
  public var text: String
  /// The kinds of item searched.
  public var kinds: Set<ItemKind>
  /// Most keyword candidates over all kinds.
  public var limit: Int
  /// Only this session's items, when given.
  public var sessionID: Int64?
  /// Only items whose time (milliseconds) falls in this range, when given.
  public var timeRange: Range<Int64>?

  /// Creates a keyword query.
  public init(text: String, kinds: Set<ItemKind>, limit: Int, sessionID: Int64?, timeRange: Range<Int64>?) {
    self.text = text
    self.kinds = kinds
    self.limit = limit
    self.sessionID = sessionID
    self.timeRange = timeRange
  }
}

/// How a store finds a search's candidates and reads what ranking needs (the rows' ranking
/// facts and the chosen items' texts), each store the way it is cheapest for it:
/// SQLite reads the keyword candidates on a reader while the caller scans its vectors, then
/// the rows in one read transaction; PostgreSQL, where each statement is a round trip,
/// reads keyword candidates, rows and texts in one statement once the vector candidates
/// are known. The engine searches through this protocol only (`MemoryStore.candidateSource`).
public protocol CandidateSource: Sendable {
  /// The id of the session whose external id or title is `name`, or nil.
  func sessionID(named name: String) throws -> Int64?

  /// The keyword candidates of `query`, best first, read on their own so that the caller can
  /// overlap them with its vector scan; nil when this source reads them together with the
  /// rows (`rankedCandidates(ids:query:searchingKeywords:rank:)`).
  func keywordCandidates(_ query: KeywordQuery) throws -> [TextHit]?

  /// The ids of the turns the sessions `ids` hold: a search that leaves those sessions out (an
  /// agent's own conversation) takes that many more candidates from each retriever and drops
  /// these, so the left-out turns cannot take the others' places.
  func messageIDs(inSessions ids: Set<Int64>) throws -> Set<Int64>

  /// Reads the ranking facts of the candidates `ids` and, with `searchingKeywords`, of the
  /// keyword candidates of `query` too; `rank` chooses among them (given the keyword hits
  /// this call found, none without `searchingKeywords`), and the texts of the chosen are
  /// read in the same snapshot. A candidate deleted meanwhile is simply not found.
  /// - Parameters:
  ///   - ids: candidates known already (vector candidates, keyword candidates read ahead).
  ///   - query: the search's kinds, session and time range (and its text, for keywords).
  ///   - searchingKeywords: find the keyword candidates of `query` in the same read.
  ///   - rank: the ranking of the rows, returning the chosen ones with their kind and id.
  /// - Returns: the keyword hits found by this call, the chosen candidates and their texts
  ///   by kind and id (a chosen candidate without a text is gone).
  func rankedCandidates<Ranked: Sendable>(
    ids: [ItemKind: [Int64]], query: KeywordQuery, searchingKeywords: Bool,
    rank: ([TextHit], [CandidateRow]) throws -> [(candidate: Ranked, kind: ItemKind, id: Int64)]
  ) throws -> (keywordHits: [TextHit], ranked: [Ranked], texts: [ItemKind: [Int64: ItemText]])
}

/// The SQLite store's candidates: FTS5 on a reader (concurrently with the vector scan), then
/// the rows, the ranking and the chosen texts in one read transaction.
struct SQLiteCandidateSource: CandidateSource {
  let database: Database

  func sessionID(named name: String) throws -> Int64? {
    try database.read { try $0.sessionID(named: name) }
  }

  func messageIDs(inSessions ids: Set<Int64>) throws -> Set<Int64> {
    try database.read { try $0.messageIDs(inSessions: ids) }
  }

  func keywordCandidates(_ query: KeywordQuery) throws -> [TextHit]? {
    try database.read {
      try $0.searchText(
        query.text, kinds: query.kinds, limit: query.limit, sessionID: query.sessionID,
        timeRange: query.timeRange)
    }
  }

  func rankedCandidates<Ranked: Sendable>(
    ids: [ItemKind: [Int64]], query: KeywordQuery, searchingKeywords: Bool,
    rank: ([TextHit], [CandidateRow]) throws -> [(candidate: Ranked, kind: ItemKind, id: Int64)]
  ) throws -> (keywordHits: [TextHit], ranked: [Ranked], texts: [ItemKind: [Int64: ItemText]]) {
    try database.read { connection in
      let keywordHits =
        searchingKeywords
        ? try connection.searchText(
          query.text, kinds: query.kinds, limit: query.limit, sessionID: query.sessionID,
          timeRange: query.timeRange) : []
      var all = ids
      for hit in keywordHits { all[hit.ownerKind, default: []].append(hit.ownerID) }
      guard all.values.contains(where: { !$0.isEmpty }) else { return (keywordHits, [], [:]) }
      let rows = try connection.candidateRows(all.mapValues { Array(Set($0)) })
      let ranked = try rank(keywordHits, rows)
      var chosen: [ItemKind: [Int64]] = [:]
      for entry in ranked { chosen[entry.kind, default: []].append(entry.id) }
      let texts = try connection.itemTexts(chosen)
      return (keywordHits, ranked.map(\.candidate), texts)
    }
  }
}
