import EngramCore
import EngramStore
import EngramVectors
import Foundation

extension HybridRetriever {
  /// The search on the PostgreSQL store, where each statement is a round trip to a server:
  /// the query is embedded and the vector index scanned first (the index knows it is current
  /// from the store's generation feed, without asking the database), then one statement
  /// reads the keyword candidates and the rows and texts of every candidate, on one
  /// snapshot. Ranks exactly as `search` does on SQLite.
  func searchOnPostgres(
    _ postgres: PostgresStore, query: String, k: Int, mode: SearchMode, filters: SearchFilters,
    recordAccess: Bool, exact: Bool
  ) async throws -> [SearchHit] {
    let weights = configuration.retrieval
    let candidates = max(weights.candidatesPerRetriever, k)
    let kinds = filters.kinds.isEmpty ? Set(ItemKind.allCases) : filters.kinds
    let range = Self.timeRange(since: filters.since, until: filters.until)
    let store = self.store
    let speakers = resources.speakers
    var namedSpeaker: String?
    if mode == .hybrid && weights.speakerWeight > 0 {
      // Read once per engine (and after writes that add speakers).
      let known = try await BlockingWork.run { try speakers.known(in: store) }
      namedSpeaker = Fusion.namedSpeaker(in: query, known: known)
    }
    // A session named by the filter: one more statement, only then.
    var sessionID: Int64?
    if let name = filters.session {
      sessionID = try await BlockingWork.run { try postgres.read { try $0.sessionID(named: name) } }
      if sessionID == nil { return [] }
    }

    var cosine: [Int64: Double] = [:]
    var approximate = false
    if mode != .keyword {
      let vector = try await resources.embedding.embedQuery(query)
      var filter = VectorFilter()
      if kinds.count < ItemKind.allCases.count { filter.kinds = Set(kinds.map(\.code)) }
      if let sessionID { filter.sessions = [sessionID] }
      if let scope = filters.scopeUser { filter.scopes = [ScopeKey.make(scope)] }
      if let range { filter.timeRange = range.lowerBound...(range.upperBound - 1) }
      let vectors = self.vectors
      let vectorFilter = filter.isEmpty ? nil : filter
      let found = try await BlockingWork.run {
        try vectors.search(vector, k: candidates, filter: vectorFilter, exact: exact)
      }
      approximate = !found.isExact
      cosine.reserveCapacity(found.hits.count)
      for hit in found.hits { cosine[hit.id] = Double(hit.score) }
    }
    let vectorIDs = Self.idsByKind(cosine.keys)
    let session = sessionID
    let found = try await BlockingWork.run {
      try postgres.read {
        try $0.searchCandidates(
          keywordQuery: mode == .vector ? nil : query, kinds: kinds, limit: candidates, sessionID: session,
          timeRange: range, vectorIDs: vectorIDs)
      }
    }
    var bm25: [Int64: Double] = [:]
    bm25.reserveCapacity(found.keywordHits.count)
    for hit in found.keywordHits { bm25[VectorKey.make(hit.ownerKind, hit.ownerID)] = hit.bm25 }
    let request = Fusion.Request(
      mode: mode, weights: weights, namedSpeaker: namedSpeaker, filters: filters, k: k, now: Date())
    let ranked = Fusion.rank(rows: found.rows, cosine: cosine, bm25: bm25, request: request)
    let hits = ranked.compactMap { candidate -> SearchHit? in
      guard let text = found.texts[candidate.row.kind]?[candidate.row.id] else { return nil }
      return Self.hit(candidate, text: text, approximate: approximate)
    }
    if recordAccess && !configuration.readOnly {
      access.note(hits.filter { $0.kind == .memory }.map(\.id))
    }
    return hits
  }
}
