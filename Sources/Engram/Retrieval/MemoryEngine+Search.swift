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
  ///   - recordAccess: count the retrieval of returned memories (written in the background,
  ///     never by the search itself; nothing in a read-only engine).
  /// - Throws: `EngramError.emptyText`, `EngramError.invalidK`, embedder and store errors.
  public func search(
    _ query: String, k: Int = 10, mode: SearchMode = .hybrid, filters: SearchFilters = SearchFilters(),
    recordAccess: Bool = true
  ) async throws -> [SearchHit] {
    try checkOpen()
    guard k >= 1 else { throw EngramError.invalidK(k) }
    guard !Self.isBlank(query) else { throw EngramError.emptyText }
    let weights = configuration.retrieval
    let candidates = max(weights.candidatesPerRetriever, k)
    let kinds = filters.kinds.isEmpty ? Set(ItemKind.allCases) : filters.kinds
    let sessionID: Int64? = try filters.session.flatMap { try resolveSession($0) }
    if filters.session != nil && sessionID == nil { return [] }
    let timeRange = Self.timeRange(since: filters.since, until: filters.until)
    // Read before the transaction below (it may read the speakers once, on another reader).
    let namedSpeaker = mode == .hybrid && weights.speakerWeight > 0 ? try namedSpeaker(in: query) : nil

    let ownerKinds = Set(kinds.map(\.ownerKind))
    let keywordCandidates: @Sendable (Connection) throws -> [TextHit] = {
      try $0.searchText(
        query, kinds: ownerKinds, limit: candidates, sessionID: sessionID, timeRange: timeRange)
    }
    // Hybrid: the keyword candidates are read on another thread while the query is embedded
    // (on a 2-core machine that hides most of the FTS time); their rows are read below in a
    // second transaction, where a row deleted in between is simply not found.
    let database = self.database
    let keywordTask = mode == .hybrid ? Task { try database.read(keywordCandidates) } : nil
    defer { keywordTask?.cancel() }

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
      let found = try index.search(vector, k: candidates, filter: filter.isEmpty ? nil : filter)
      cosine.reserveCapacity(found.count)
      for hit in found { cosine[hit.id] = Double(hit.score) }
    }
    let vectorScores = cosine
    let keywordHits = try await keywordTask?.value

    // Keyword candidates (unless already read), the candidates' rows, ranking and the hits'
    // texts in one read transaction: one snapshot, one BEGIN/COMMIT.
    let hits = try database.read { connection -> [SearchHit] in
      var bm25: [Int64: Double] = [:]
      if mode != .vector {
        let found = try keywordHits ?? keywordCandidates(connection)
        bm25.reserveCapacity(found.count)
        for hit in found { bm25[VectorKey.make(hit.ownerKind.itemKind, hit.ownerID)] = hit.bm25 }
      }
      var keys = Set(vectorScores.keys)
      keys.formUnion(bm25.keys)
      guard !keys.isEmpty else { return [] }
      let rows = try Self.fetchRows(keys, connection: connection)
      let ranked = Self.rank(
        rows: rows, keys: keys, cosine: vectorScores, bm25: bm25, mode: mode, weights: weights,
        namedSpeaker: namedSpeaker, filters: filters, k: k)
      let texts = try Self.fetchTexts(ranked.map(\.key), connection: connection)
      var hits: [SearchHit] = []
      hits.reserveCapacity(ranked.count)
      for candidate in ranked {
        guard let row = rows[candidate.key], let text = texts[candidate.key] else { continue }
        var provenance: [String] = []
        if candidate.bm25 != nil { provenance.append("keyword") }
        if candidate.cosine != nil { provenance.append("vector") }
        if candidate.neighbour { provenance.append("neighbour") }
        if candidate.speaker { provenance.append("speaker") }
        hits.append(
          SearchHit(
            kind: row.kind, id: row.id, text: text.text, sessionID: row.sessionID, speaker: row.speaker,
            timestamp: row.timestamp, bm25: candidate.bm25, cosine: candidate.cosine,
            score: candidate.score, provenance: provenance,
            metadata: Self.metadataObject(text.metadataText).merging(text.extraMetadata) { _, extra in extra }
          ))
      }
      return hits
    }

    if recordAccess && !configuration.readOnly {
      noteAccess(hits.filter { $0.kind == .memory }.map(\.id))
    }
    return hits
  }

  /// Counts retrievals of memories and schedules their write off the read path: a search
  /// never writes and never waits for a writer (another process's lock included).
  func noteAccess(_ ids: [Int64]) {
    guard !ids.isEmpty else { return }
    let now = Timestamp.now()
    let schedule = pendingAccess.withLock { pending in
      for id in ids {
        let entry = pending.entries[id] ?? (0, now)
        pending.entries[id] = (entry.count + 1, max(entry.last, now))
      }
      defer { pending.flushScheduled = true }
      return !pending.flushScheduled
    }
    guard schedule else { return }
    accessQueue.async { [self] in try? writePendingAccess() }
  }

  /// Writes the access statistics gathered so far (normally done in the background and at
  /// close; call it to have them in the database now).
  /// - Throws: store errors (`.busy` when another process holds the write lock past the busy
  ///   timeout); the statistics are kept for the next attempt.
  public func flushAccessStatistics() throws {
    try checkOpen()
    if DispatchQueue.getSpecific(key: Self.accessQueueKey) != nil { return try writePendingAccess() }
    try accessQueue.sync { try writePendingAccess() }
  }

  func writePendingAccess() throws {
    let taken = pendingAccess.withLock { pending in
      defer {
        pending.entries = [:]
        pending.flushScheduled = false
      }
      return pending.entries
    }
    guard !taken.isEmpty else { return }
    do {
      try database.write { connection in
        try connection.recordMemoryAccess(
          taken.map { (id: $0.key, count: $0.value.count, lastAccess: $0.value.last) })
      }
    } catch {
      // Kept for the next attempt (the next search schedules one, close makes a last one).
      pendingAccess.withLock { pending in
        for (id, entry) in taken {
          let existing = pending.entries[id] ?? (0, entry.last)
          pending.entries[id] = (existing.count + entry.count, max(existing.last, entry.last))
        }
      }
      throw error
    }
  }

  /// One candidate's scores on its way to becoming a hit.
  struct RankedCandidate {
    var key: Int64
    var kindCode: Int
    var id: Int64
    var bm25: Double?
    var cosine: Double?
    var score: Double
    var neighbour = false
    var speaker = false
  }

  /// Fuses the retrievers' scores, adds the neighbour, speaker, recency and importance
  /// terms, drops what the filters exclude, and returns the best `k`, best first (ties by
  /// kind, then id).
  static func rank(
    rows: [Int64: CandidateRow], keys: Set<Int64>, cosine: [Int64: Double], bm25: [Int64: Double],
    mode: SearchMode, weights: RetrievalWeights, namedSpeaker: String?, filters: SearchFilters, k: Int
  ) -> [RankedCandidate] {
    let fused: [Int64: Double]
    switch mode {
    case .vector: fused = cosine
    case .keyword: fused = bm25
    case .hybrid:
      let normalizedCosine = minMax(cosine)
      let normalizedBM25 = minMax(bm25)
      var scores: [Int64: Double] = [:]
      scores.reserveCapacity(keys.count)
      for key in keys {
        scores[key] =
          weights.vectorWeight * (normalizedCosine[key] ?? 0) + (1 - weights.vectorWeight)
          * (normalizedBM25[key] ?? 0)
      }
      fused = scores
    }
    let now = Date().timeIntervalSince1970
    var best: [RankedCandidate] = []
    best.reserveCapacity(min(k, insertionLimit) + 1)
    for (key, row) in rows {
      // Every row's key is a candidate key, so it has a fused score.
      guard var score = fused[key] else { continue }
      if row.superseded && !filters.includeSuperseded { continue }
      if let session = row.sessionID, filters.excludedSessions.contains(session) { continue }
      if let scope = filters.scopeUser, row.kind == .memory, row.scopeUser != scope { continue }
      var neighbour = false
      var speaker = false
      // The terms are added in a fixed order, so scores are the same bit for bit whatever
      // order the rows come in.
      if mode == .hybrid {
        if weights.neighbourWeight > 0 && row.kind == .message {
          var adjacentBest: Double?
          for adjacent in [row.previous, row.next] {
            guard let adjacent, let score = fused[VectorKey.make(.message, adjacent)] else { continue }
            adjacentBest = max(adjacentBest ?? score, score)
          }
          if let adjacentBest, adjacentBest > 0 {
            score += weights.neighbourWeight * adjacentBest
            neighbour = true
          }
        }
        if let namedSpeaker, row.kind == .message, row.speaker?.lowercased() == namedSpeaker {
          score += weights.speakerWeight
          speaker = true
        }
        if weights.recencyWeight > 0 {
          let age = max(0, now - row.timestamp.timeIntervalSince1970)
          score += weights.recencyWeight * pow(0.5, age / weights.recencyHalfLife)
        }
        if weights.importanceWeight > 0 && row.kind == .memory {
          score += weights.importanceWeight * (row.importance ?? 0)
        }
      }
      let candidate = RankedCandidate(
        key: key, kindCode: row.kind.code, id: row.id, bm25: bm25[key], cosine: cosine[key], score: score,
        neighbour: neighbour, speaker: speaker)
      if k > insertionLimit {
        best.append(candidate)
        continue
      }
      // Keep the best k in order: a linear insertion beats sorting every candidate.
      if best.count == k, !precedes(candidate, best[k - 1]) { continue }
      best.insert(candidate, at: best.firstIndex { precedes(candidate, $0) } ?? best.count)
      if best.count > k { best.removeLast() }
    }
    if k > insertionLimit {
      best.sort(by: precedes)
      if best.count > k { best.removeSubrange(k...) }
    }
    return best
  }

  /// Up to this k, `rank` keeps its best k by insertion; beyond, it sorts.
  private static let insertionLimit = 32

  /// Best first: higher score, then lower kind code, then lower id (a total order, so the
  /// ranking is deterministic).
  private static func precedes(_ a: RankedCandidate, _ b: RankedCandidate) -> Bool {
    if a.score != b.score { return a.score > b.score }
    if a.kindCode != b.kindCode { return a.kindCode < b.kindCode }
    return a.id < b.id
  }

  /// Best first: higher score, then lower kind code, then lower id (a total order, so the
  /// ranking is deterministic).
  private static func precedes(_ score: Double, _ kindCode: Int, _ id: Int64, _ other: RankedCandidate)
    -> Bool
  {
    if score != other.score { return score > other.score }
    if kindCode != other.kindCode { return kindCode < other.kindCode }
    return id < other.id
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
    let names = try database.read { try $0.distinctSpeakers() }
    var map: [String: String] = [:]
    for name in names where !name.isEmpty && !name.contains(" ") {
      map[name.lowercased()] = name
    }
    speakers.withLock { $0 = map }
    return map
  }

  /// One candidate's stored fields that ranking needs (texts are read for the hits only).
  struct CandidateRow {
    var kind: ItemKind
    var id: Int64
    var sessionID: Int64?
    var speaker: String?
    var timestamp: Date
    var previous: Int64?
    var next: Int64?
    var superseded = false
    var scopeUser: String?
    var importance: Double?
  }

  /// A hit's text and metadata.
  struct HitText {
    var text: String
    /// Metadata JSON text, parsed by the caller.
    var metadataText: String
    var extraMetadata: [String: JSONValue] = [:]
  }

  /// Ids as a JSON array for `json_each` (built directly: this runs on every search).
  static func jsonIDList(_ ids: [Int64]) -> String {
    var text = "["
    text.reserveCapacity(ids.count * 8 + 2)
    for (position, id) in ids.enumerated() {
      if position > 0 { text += "," }
      text += String(id)
    }
    text += "]"
    return text
  }

  /// Runs `sql`, whose `?1` is `ids` as a JSON array (for `json_each`), calling `body` per row.
  static func forEachRow(
    _ sql: String, ids: [Int64], connection: Connection, _ body: (Statement) throws -> Void
  ) throws {
    let statement = try connection.cachedStatement(sql)
    try statement.bind(jsonIDList(ids), at: 1)
    try statement.forEachRow(body)
  }

  static func idsByKind(_ keys: some Sequence<Int64>) -> [ItemKind: [Int64]] {
    var byKind: [ItemKind: [Int64]] = [:]
    for key in keys {
      let (kind, id) = VectorKey.split(key)
      byKind[kind, default: []].append(id)
    }
    return byKind
  }

  /// Reads the candidates' rows, and for turns their neighbours in the same session.
  static func fetchRows(_ keys: Set<Int64>, connection: Connection) throws -> [Int64: CandidateRow] {
    let byKind = idsByKind(keys)
    var rows: [Int64: CandidateRow] = [:]
    rows.reserveCapacity(keys.count)
    if let ids = byKind[.message] {
      try forEachRow(
        """
        SELECT m.id, m.session_id, coalesce(m.speaker, m.role), m.created_at,
          (SELECT p.id FROM messages p WHERE p.session_id = m.session_id
             AND (p.created_at, p.id) < (m.created_at, m.id) ORDER BY p.created_at DESC, p.id DESC LIMIT 1),
          (SELECT n.id FROM messages n WHERE n.session_id = m.session_id
             AND (n.created_at, n.id) > (m.created_at, m.id) ORDER BY n.created_at, n.id LIMIT 1)
        FROM messages m WHERE m.id IN (SELECT value FROM json_each(?1))
        """, ids: ids, connection: connection
      ) { row in
        let id = row.int64(at: 0)
        rows[VectorKey.make(.message, id)] = CandidateRow(
          kind: .message, id: id, sessionID: row.optionalInt64(at: 1), speaker: row.optionalString(at: 2),
          timestamp: Timestamp.date(row.int64(at: 3)), previous: row.optionalInt64(at: 4),
          next: row.optionalInt64(at: 5))
      }
    }
    if let ids = byKind[.memory] {
      try forEachRow(
        """
        SELECT id, session_id, created_at, superseded_by IS NOT NULL, scope_user, importance
        FROM memories WHERE id IN (SELECT value FROM json_each(?1))
        """, ids: ids, connection: connection
      ) { row in
        let id = row.int64(at: 0)
        rows[VectorKey.make(.memory, id)] = CandidateRow(
          kind: .memory, id: id, sessionID: row.optionalInt64(at: 1), speaker: nil,
          timestamp: Timestamp.date(row.int64(at: 2)), previous: nil, next: nil, superseded: row.bool(at: 3),
          scopeUser: row.optionalString(at: 4), importance: row.double(at: 5))
      }
    }
    if let ids = byKind[.summary] {
      try forEachRow(
        "SELECT id, session_id, start_at FROM summaries WHERE id IN (SELECT value FROM json_each(?1))",
        ids: ids, connection: connection
      ) { row in
        let id = row.int64(at: 0)
        rows[VectorKey.make(.summary, id)] = CandidateRow(
          kind: .summary, id: id, sessionID: row.optionalInt64(at: 1), speaker: nil,
          timestamp: Timestamp.date(row.int64(at: 2)), previous: nil, next: nil)
      }
    }
    return rows
  }

  /// Reads the texts and metadata of the hits `keys`.
  static func fetchTexts(_ keys: [Int64], connection: Connection) throws -> [Int64: HitText] {
    let byKind = idsByKind(keys)
    var texts: [Int64: HitText] = [:]
    texts.reserveCapacity(keys.count)
    if let ids = byKind[.message] {
      try forEachRow(
        "SELECT id, content, metadata FROM messages WHERE id IN (SELECT value FROM json_each(?1))", ids: ids,
        connection: connection
      ) { row in
        texts[VectorKey.make(.message, row.int64(at: 0))] = HitText(
          text: row.string(at: 1), metadataText: row.string(at: 2))
      }
    }
    if let ids = byKind[.memory] {
      try forEachRow(
        "SELECT id, content, metadata, kind FROM memories WHERE id IN (SELECT value FROM json_each(?1))",
        ids: ids, connection: connection
      ) { row in
        texts[VectorKey.make(.memory, row.int64(at: 0))] = HitText(
          text: row.string(at: 1), metadataText: row.string(at: 2),
          extraMetadata: ["memory_kind": .string(row.string(at: 3))])
      }
    }
    if let ids = byKind[.summary] {
      try forEachRow(
        """
        SELECT id, content, first_message_id, last_message_id
        FROM summaries WHERE id IN (SELECT value FROM json_each(?1))
        """, ids: ids, connection: connection
      ) { row in
        var metadata: [String: JSONValue] = [:]
        if let first = row.optionalInt64(at: 2) { metadata["first_message_id"] = .int(Int(first)) }
        if let last = row.optionalInt64(at: 3) { metadata["last_message_id"] = .int(Int(last)) }
        texts[VectorKey.make(.summary, row.int64(at: 0))] = HitText(
          text: row.string(at: 1), metadataText: "{}", extraMetadata: metadata)
      }
    }
    return texts
  }

  static func metadataObject(_ text: String) -> [String: JSONValue] {
    (try? JSONValue.parse(text))?.objectValue ?? [:]
  }
}
