import EngramStore
import EngramVectors
import Foundation

extension MemoryEngine {
  /// Searches the memory.
  ///
  /// Hybrid mode takes the top candidates of FTS5 BM25 and of vector cosine, normalizes each
  /// retriever's scores to 0...1 over its candidates (min-max), and fuses them with
  /// `RetrievalWeights.vectorWeight`; then a turn gains a share of its best neighbouring
  /// turn's fused score (answers follow questions), turns spoken by the one known speaker
  /// the query names gain `speakerWeight`, and optional recency and importance weights
  /// apply. Ties break by kind and id, so results are deterministic.
  ///
  /// - Parameters:
  ///   - query: the user's text; query syntax is searched as plain text.
  ///   - k: how many hits to return (at least 1).
  ///   - mode: hybrid, vector or keyword.
  ///   - filters: kinds, session, scope, time range.
  ///   - recordAccess: update the access statistics of returned memories.
  /// - Throws: `EngramError.emptyText`, `EngramError.invalidK`, embedder and store errors.
  public func search(
    _ query: String, k: Int = 10, mode: SearchMode = .hybrid, filters: SearchFilters = SearchFilters(),
    recordAccess: Bool = true
  ) async throws -> [SearchHit] {
    try checkOpen()
    guard k >= 1 else { throw EngramError.invalidK(k) }
    guard !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw EngramError.emptyText }
    let weights = configuration.retrieval
    let candidates = max(weights.candidatesPerRetriever, k)
    let kinds = filters.kinds.isEmpty ? Set(ItemKind.allCases) : filters.kinds
    let sessionID: Int64? = try filters.session.flatMap { try resolveSession($0) }
    if filters.session != nil && sessionID == nil { return [] }
    let timeRange = Self.timeRange(since: filters.since, until: filters.until)

    // Vector candidates (after picking up other processes' writes).
    var cosine: [Int64: Double] = [:]
    if mode != .keyword {
      try refreshIndexIfStale()
      let vector = try await embedQuery(query)
      var filter = VectorFilter()
      if kinds.count < ItemKind.allCases.count { filter.kinds = Set(kinds.map(\.vectorKind)) }
      if let sessionID { filter.sessions = [sessionID] }
      if let scope = filters.scopeUser { filter.scopes = [ScopeKey.make(scope)] }
      if let timeRange { filter.timeRange = timeRange.lowerBound...(timeRange.upperBound - 1) }
      for hit in try index.search(vector, k: candidates, filter: filter.isEmpty ? nil : filter) {
        cosine[hit.id] = Double(hit.score)
      }
    }
    // Keyword candidates.
    var bm25: [Int64: Double] = [:]
    if mode != .vector {
      let hits = try database.read { connection in
        try connection.searchText(
          query, kinds: Set(kinds.map(\.ownerKind)), limit: candidates, sessionID: sessionID,
          timeRange: timeRange)
      }
      for hit in hits { bm25[VectorKey.make(hit.ownerKind.itemKind, hit.ownerID)] = hit.bm25 }
    }

    let keys = Set(cosine.keys).union(bm25.keys)
    guard !keys.isEmpty else { return [] }
    let rows = try database.read { try Self.fetchRows(keys, connection: $0) }

    var fused: [Int64: Double] = [:]
    switch mode {
    case .vector: fused = cosine
    case .keyword: fused = bm25
    case .hybrid:
      let normalizedCosine = Self.minMax(cosine)
      let normalizedBM25 = Self.minMax(bm25)
      for key in keys {
        fused[key] =
          weights.vectorWeight * (normalizedCosine[key] ?? 0) + (1 - weights.vectorWeight)
          * (normalizedBM25[key] ?? 0)
      }
    }
    var provenance: [Int64: [String]] = [:]
    for key in keys {
      var sources: [String] = []
      if bm25[key] != nil { sources.append("keyword") }
      if cosine[key] != nil { sources.append("vector") }
      provenance[key] = sources
    }

    var final = fused
    if mode == .hybrid {
      if weights.neighbourWeight > 0 {
        for (key, row) in rows where row.kind == .message {
          let best = [row.previous, row.next].compactMap { $0 }.compactMap {
            fused[VectorKey.make(.message, $0)]
          }.max()
          if let best, best > 0 {
            final[key, default: 0] += weights.neighbourWeight * best
            provenance[key, default: []].append("neighbour")
          }
        }
      }
      if weights.speakerWeight > 0, let named = try namedSpeaker(in: query) {
        for (key, row) in rows where row.kind == .message && row.speaker?.lowercased() == named {
          final[key, default: 0] += weights.speakerWeight
          provenance[key, default: []].append("speaker")
        }
      }
      if weights.recencyWeight > 0 {
        let now = Date().timeIntervalSince1970
        for (key, row) in rows {
          let age = max(0, now - row.timestamp.timeIntervalSince1970)
          final[key, default: 0] += weights.recencyWeight * pow(0.5, age / weights.recencyHalfLife)
        }
      }
      if weights.importanceWeight > 0 {
        for (key, row) in rows where row.kind == .memory {
          final[key, default: 0] += weights.importanceWeight * (row.importance ?? 0)
        }
      }
    }

    var hits: [SearchHit] = []
    for (key, score) in final {
      guard let row = rows[key] else { continue }
      if row.superseded && !filters.includeSuperseded { continue }
      if let scope = filters.scopeUser, row.kind == .memory, row.scopeUser != scope { continue }
      hits.append(
        SearchHit(
          kind: row.kind, id: row.id, text: row.text, sessionID: row.sessionID, speaker: row.speaker,
          timestamp: row.timestamp, bm25: bm25[key], cosine: cosine[key], score: score,
          provenance: provenance[key] ?? [], metadata: [:]))
    }
    hits.sort { a, b in
      if a.score != b.score { return a.score > b.score }
      if a.kind.code != b.kind.code { return a.kind.code < b.kind.code }
      return a.id < b.id
    }
    if hits.count > k { hits.removeSubrange(k...) }
    for index in hits.indices {
      guard let row = rows[VectorKey.make(hits[index].kind, hits[index].id)] else { continue }
      hits[index].metadata = Self.metadataObject(row.metadataText).merging(row.extraMetadata) { _, extra in
        extra
      }
    }

    let memoryIDs = hits.filter { $0.kind == .memory }.map(\.id)
    if recordAccess && !memoryIDs.isEmpty && !configuration.readOnly {
      try database.write { try $0.recordMemoryAccess(ids: memoryIDs, at: Timestamp.now()) }
    }
    return hits
  }

  /// Min-max normalization to 0...1 over the candidates of one retriever (all 1 when equal).
  static func minMax(_ scores: [Int64: Double]) -> [Int64: Double] {
    guard let low = scores.values.min(), let high = scores.values.max() else { return [:] }
    let span = high - low
    return scores.mapValues { span > 0 ? ($0 - low) / span : 1 }
  }

  static func timeRange(since: Date?, until: Date?) -> Range<Int64>? {
    guard since != nil || until != nil else { return nil }
    let lower = since.map(Timestamp.milliseconds) ?? Int64.min / 2
    let upper = until.map(Timestamp.milliseconds) ?? Int64.max / 2
    return lower..<max(lower, upper)
  }

  /// A session's id from its external name or its numeric id.
  func resolveSession(_ name: String) throws -> Int64? {
    try database.read { connection in
      if let session = try connection.session(externalID: name) { return session.id }
      if let id = Int64(name), try connection.fetch(Session.self, id: id) != nil { return id }
      return nil
    }
  }

  /// The one known speaker whose name the query contains as a word (lowercased), or nil
  /// when it names none or several.
  func namedSpeaker(in query: String) throws -> String? {
    let known = try knownSpeakers()
    guard !known.isEmpty else { return nil }
    let words = Set(
      query.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "'" }.map {
        String($0.hasSuffix("'s") ? $0.dropLast(2) : $0)
      })
    let named = known.keys.filter { words.contains($0) }
    return named.count == 1 ? named[0] : nil
  }

  func knownSpeakers() throws -> [String: String] {
    if let cached = speakers.withLock({ $0 }) { return cached }
    let names = try database.read { connection in
      try connection.prepare("SELECT DISTINCT speaker FROM messages WHERE speaker IS NOT NULL").map {
        $0.string(at: 0)
      }
    }
    var map: [String: String] = [:]
    for name in names where !name.isEmpty && !name.contains(" ") {
      map[name.lowercased()] = name
    }
    speakers.withLock { $0 = map }
    return map
  }

  /// One candidate's stored fields.
  struct CandidateRow {
    var kind: ItemKind
    var id: Int64
    var text: String
    var sessionID: Int64?
    var speaker: String?
    var timestamp: Date
    /// Metadata JSON text, parsed only for the hits returned.
    var metadataText: String
    var extraMetadata: [String: JSONValue] = [:]
    var previous: Int64?
    var next: Int64?
    var superseded = false
    var scopeUser: String?
    var importance: Double?
  }

  /// Reads the candidates' rows, and for turns their neighbours in the same session.
  static func fetchRows(_ keys: Set<Int64>, connection: Connection) throws -> [Int64: CandidateRow] {
    var byKind: [ItemKind: [Int64]] = [:]
    for key in keys {
      let (kind, id) = VectorKey.split(key)
      byKind[kind, default: []].append(id)
    }
    var rows: [Int64: CandidateRow] = [:]
    if let ids = byKind[.message] {
      let statement = try connection.cachedStatement(
        """
        SELECT m.id, m.content, m.session_id, coalesce(m.speaker, m.role), m.created_at, m.metadata,
          (SELECT p.id FROM messages p WHERE p.session_id = m.session_id
             AND (p.created_at, p.id) < (m.created_at, m.id) ORDER BY p.created_at DESC, p.id DESC LIMIT 1),
          (SELECT n.id FROM messages n WHERE n.session_id = m.session_id
             AND (n.created_at, n.id) > (m.created_at, m.id) ORDER BY n.created_at, n.id LIMIT 1)
        FROM messages m WHERE m.id IN (SELECT value FROM json_each(?1))
        """)
      try statement.bind(JSONValue.array(ids.map { .int(Int($0)) }).jsonText, at: 1)
      try statement.forEachRow { row in
        let id = row.int64(at: 0)
        rows[VectorKey.make(.message, id)] = CandidateRow(
          kind: .message, id: id, text: row.string(at: 1), sessionID: row.optionalInt64(at: 2),
          speaker: row.optionalString(at: 3), timestamp: Timestamp.date(row.int64(at: 4)),
          metadataText: row.string(at: 5), previous: row.optionalInt64(at: 6), next: row.optionalInt64(at: 7))
      }
    }
    if let ids = byKind[.memory] {
      let statement = try connection.cachedStatement(
        """
        SELECT id, content, session_id, created_at, metadata, superseded_by IS NOT NULL, scope_user, importance,
          kind
        FROM memories WHERE id IN (SELECT value FROM json_each(?1))
        """)
      try statement.bind(JSONValue.array(ids.map { .int(Int($0)) }).jsonText, at: 1)
      try statement.forEachRow { row in
        let id = row.int64(at: 0)
        rows[VectorKey.make(.memory, id)] = CandidateRow(
          kind: .memory, id: id, text: row.string(at: 1), sessionID: row.optionalInt64(at: 2), speaker: nil,
          timestamp: Timestamp.date(row.int64(at: 3)), metadataText: row.string(at: 4),
          extraMetadata: ["memory_kind": .string(row.string(at: 8))], previous: nil, next: nil,
          superseded: row.bool(at: 5), scopeUser: row.optionalString(at: 6), importance: row.double(at: 7))
      }
    }
    if let ids = byKind[.summary] {
      let statement = try connection.cachedStatement(
        """
        SELECT id, content, session_id, start_at, first_message_id, last_message_id
        FROM summaries WHERE id IN (SELECT value FROM json_each(?1))
        """)
      try statement.bind(JSONValue.array(ids.map { .int(Int($0)) }).jsonText, at: 1)
      try statement.forEachRow { row in
        let id = row.int64(at: 0)
        var metadata: [String: JSONValue] = [:]
        if let first = row.optionalInt64(at: 4) { metadata["first_message_id"] = .int(Int(first)) }
        if let last = row.optionalInt64(at: 5) { metadata["last_message_id"] = .int(Int(last)) }
        rows[VectorKey.make(.summary, id)] = CandidateRow(
          kind: .summary, id: id, text: row.string(at: 1), sessionID: row.optionalInt64(at: 2), speaker: nil,
          timestamp: Timestamp.date(row.int64(at: 3)), metadataText: "{}", extraMetadata: metadata,
          previous: nil,
          next: nil)
      }
    }
    return rows
  }

  static func metadataObject(_ text: String) -> [String: JSONValue] {
    (try? JSONValue.parse(text))?.objectValue ?? [:]
  }
}
