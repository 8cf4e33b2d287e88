import EngramCore
import EngramStore
import EngramVectors
import Foundation

/// Finds candidates with both retrievers, at the same time where the store allows it (FTS5
/// BM25 on a reader connection while the query is embedded and the vector index scanned),
/// reads the candidates' rows through the store's `CandidateSource` and ranks them with
/// `Fusion`.
struct HybridRetriever: Sendable {
  /// Whether the engine is open.
  let open: OpenState
  /// The store's way of finding keyword candidates and reading rows and texts.
  let candidates: any CandidateSource
  /// The vector index (refreshed when another process changed the embeddings).
  let vectors: VectorIndexKeeper
  /// Embeds the query (cached).
  let embedding: EmbeddingRunner
  /// The speakers a query may name.
  let speakers: SpeakerDirectory
  /// Counts retrievals of memories off the read path (nil: never, a read-only engine).
  let access: AccessRecorder?
  /// The weights of fusion and the candidates per retriever.
  let weights: RetrievalWeights

  /// Searches the memory (see `MemoryEngine.search(_:k:mode:filters:recordAccess:)`).
  ///
  /// One flow for every store: the session a filter names, then the keyword candidates the
  /// store reads on their own (SQLite) and the speaker the query names, concurrently with
  /// the query's embedding and the vector scan; then the candidates' rows (with the keyword
  /// candidates when the store reads them together: PostgreSQL), ranked, and their texts.
  func search(
    _ query: String, k: Int, mode: SearchMode, filters: SearchFilters, recordAccess: Bool, exact: Bool
  ) async throws -> [SearchHit] {
    try open.check()
    guard k >= 1 else { throw EngramError.invalidK(k) }
    guard !TextChecks.isBlank(query) else { throw EngramError.emptyText }
    let weights = self.weights
    // The re-ranker re-orders the best `rerankDepth` fused candidates; the best k of its
    // order are returned.
    let reranker = mode == .hybrid ? weights.reranker : nil
    let depth = reranker == nil ? k : max(k, weights.rerankDepth)
    let kinds = filters.kinds.isEmpty ? Set(ItemKind.allCases) : filters.kinds
    let source = candidates
    // Sessions left out (an agent's own conversation): each retriever takes as many more
    // candidates as those sessions hold turns, and their turns are dropped before the rows are
    // read, so they cannot take the places of the others (the candidates are those of a
    // memory without them).
    let excludedSessions = filters.excludedSessions
    let leftOut =
      excludedSessions.isEmpty || !kinds.contains(.message)
      ? Set<Int64>() : try await BlockingWork.run { try source.messageIDs(inSessions: excludedSessions) }
    let leftOutKeys = Set(leftOut.map { VectorKey.make(.message, $0) })
    let perRetriever = max(weights.candidatesPerRetriever, depth)
    let limit = perRetriever + leftOut.count
    let speakers = self.speakers
    let wantsSpeaker = mode == .hybrid && weights.speakerWeight > 0
    var resolvedSession: Int64?
    if let name = filters.session {
      resolvedSession = try await BlockingWork.run { try source.sessionID(named: name) }
      if resolvedSession == nil { return [] }
    }
    let sessionID = resolvedSession
    let range = Self.timeRange(since: filters.since, until: filters.until)
    let keywordQuery = KeywordQuery(
      text: query, kinds: kinds, limit: limit, sessionID: sessionID, timeRange: range)
    // The speakers (read once per engine) and the keyword candidates, on a reader
    // connection off the cooperative pool, while the query is embedded and the vectors
    // scanned: on a 2-core machine that hides most of the FTS time.
    let keywordTask = Task {
      try await BlockingWork.run { () throws -> KeywordSide in
        var side = KeywordSide()
        if wantsSpeaker {
          side.namedSpeaker = Fusion.namedSpeaker(in: query, known: try speakers.known())
        }
        if mode != .vector {
          side.hits = try source.keywordCandidates(keywordQuery).map { hits in
            Array(
              hits.lazy.filter { !leftOutKeys.contains(VectorKey.make($0.ownerKind, $0.ownerID)) }.prefix(
                perRetriever))
          }
        }
        return side
      }
    }
    defer { keywordTask.cancel() }

    // Vector candidates (after picking up other processes' writes).
    var cosine: [Int64: Double] = [:]
    var approximate = false
    if mode != .keyword {
      let vector = try await embedding.embedQuery(query)
      var filter = VectorFilter()
      if kinds.count < ItemKind.allCases.count { filter.kinds = Set(kinds.map(\.code)) }
      if let sessionID { filter.sessions = [sessionID] }
      if let scope = filters.scopeUser { filter.scopes = [ScopeKey.make(scope)] }
      if let range { filter.timeRange = range.lowerBound...(range.upperBound - 1) }
      let vectors = self.vectors
      let vectorFilter = filter.isEmpty ? nil : filter
      let found = try await BlockingWork.run {
        try vectors.search(vector, k: limit, filter: vectorFilter, exact: exact)
      }
      approximate = !found.isExact
      cosine.reserveCapacity(found.hits.count)
      // Best first: the first `perRetriever` not left out.
      for hit in found.hits.lazy.filter({ !leftOutKeys.contains($0.id) }).prefix(perRetriever) {
        cosine[hit.id] = Double(hit.score)
      }
    }
    let side = try await keywordTask.value
    // Keyword candidates the store did not read ahead are read with the rows.
    let searchingKeywords = mode != .vector && side.hits == nil
    var known = Set(cosine.keys)
    for hit in side.hits ?? [] { known.insert(VectorKey.make(hit.ownerKind, hit.ownerID)) }
    let request = Fusion.Request(
      mode: mode, weights: weights, namedSpeaker: side.namedSpeaker, filters: filters, k: depth, now: Date())
    let vectorScores = cosine
    let aheadHits = side.hits ?? []
    let ids = Self.idsByKind(known)
    // The candidates' rows, ranking and the hits' texts in one read: one snapshot (a row
    // deleted since the candidates were found is simply not found).
    let found = try await BlockingWork.run {
      try source.rankedCandidates(ids: ids, query: keywordQuery, searchingKeywords: searchingKeywords) {
        keywordHits, rows in
        var bm25: [Int64: Double] = [:]
        bm25.reserveCapacity(aheadHits.count + keywordHits.count)
        for hit in aheadHits { bm25[VectorKey.make(hit.ownerKind, hit.ownerID)] = hit.bm25 }
        for hit in keywordHits { bm25[VectorKey.make(hit.ownerKind, hit.ownerID)] = hit.bm25 }
        return Fusion.rank(rows: rows, cosine: vectorScores, bm25: bm25, request: request).map {
          ($0, $0.row.kind, $0.row.id)
        }
      }
    }
    var hits = found.ranked.compactMap { candidate -> SearchHit? in
      guard let text = found.texts[candidate.row.kind]?[candidate.row.id] else { return nil }
      return Self.hit(candidate, text: text, approximate: approximate)
    }
    if let reranker {
      hits = Array(reranker.rerank(hits, query: query).prefix(k))
    }
    if recordAccess, let access {
      access.note(hits.filter { $0.kind == .memory }.map(\.id))
    }
    return hits
  }

  /// What the keyword side found: the speaker the query names, BM25 hits.
  struct KeywordSide: Sendable {
    var namedSpeaker: String?
    /// Nil when the store reads its keyword candidates with the rows.
    var hits: [TextHit]?
  }

  /// A ranked candidate and its text as a search hit.
  static func hit(_ candidate: Fusion.Ranked, text: ItemText, approximate: Bool = false) -> SearchHit {
    var provenance: [String] = []
    if candidate.bm25 != nil { provenance.append("keyword") }
    if candidate.cosine != nil { provenance.append("vector") }
    // The vector candidates came from the approximate tier without a proof that they are
    // the exact top candidates.
    if approximate { provenance.append("approximate") }
    if candidate.neighbour { provenance.append("neighbour") }
    if candidate.speaker { provenance.append("speaker") }
    var metadata = (try? JSONValue.parse(text.metadataJSON))?.objectValue ?? [:]
    if let covered = text.coveredTurns {
      if let first = covered.first { metadata["first_message_id"] = .int(Int(first)) }
      if let last = covered.last { metadata["last_message_id"] = .int(Int(last)) }
    }
    let row = candidate.row
    return SearchHit(
      kind: row.kind, id: row.id, text: text.text, sessionID: row.sessionID, speaker: row.speaker,
      timestamp: row.timestamp, bm25: candidate.bm25, cosine: candidate.cosine, score: candidate.score,
      provenance: provenance, metadata: metadata, memoryKind: row.kind == .memory ? text.memoryKind : nil)
  }

  /// The half-open millisecond range of `since..<until` (nil when neither is given).
  static func timeRange(since: Date?, until: Date?) -> Range<Int64>? {
    guard since != nil || until != nil else { return nil }
    let lower = since.map(Timestamp.milliseconds) ?? Int64.min / 2
    let upper = until.map(Timestamp.milliseconds) ?? Int64.max / 2
    return lower..<max(lower, upper)
  }

  /// Vector keys grouped by kind, as ids.
  static func idsByKind(_ keys: some Sequence<Int64>) -> [ItemKind: [Int64]] {
    var byKind: [ItemKind: [Int64]] = [:]
    for key in keys {
      let (kind, id) = VectorKey.split(key)
      byKind[kind, default: []].append(id)
    }
    return byKind
  }
}
