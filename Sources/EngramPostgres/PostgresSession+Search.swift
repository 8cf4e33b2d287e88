import EngramCore
import EngramStore
import Foundation

/// What one search needs from the database, read by one statement: the keyword candidates
/// (ranked as the SQLite store ranks them) and the rows and texts of every candidate, the
/// keyword ones and the vector ones the caller names.
public struct SearchCandidates: Sendable {
  /// Keyword hits, best first (at most the limit, over all kinds together).
  public var keywordHits: [TextHit] = []
  /// The ranking metadata of each candidate found (keyword hits and the vector candidates
  /// named; a deleted row is simply missing).
  public var rows: [CandidateRow] = []
  /// The texts of the same candidates.
  public var texts: [ItemKind: [Int64: ItemText]] = [:]

  /// No candidates.
  public init() {}
}

// Keyword search ranked with the SQLite store's formula, and the one-statement search.
extension PostgresSession {
  /// The parameters of a statement as it is built: each value's `$N`.
  struct Parameters {
    var values: [PostgresValue] = []

    mutating func add(_ value: PostgresValue) -> String {
      values.append(value)
      return "$\(values.count)"
    }
  }

  /// The common table expression of the query's phrases: each one's `tsquery` and its
  /// lexemes in order (for counting its occurrences in a row). `terms` is its parameter.
  static func phrasesCTE(terms: String) -> String {
    """
    phrases AS MATERIALIZED (
      SELECT p.q, ARRAY(SELECT w.lexeme FROM unnest(to_tsvector('engram_terms', p.term)) AS w,
          unnest(w.positions) AS position ORDER BY position) AS lexemes
      FROM (SELECT phraseto_tsquery('engram_terms', term) AS q, term
            FROM json_array_elements_text(\(terms)::json) AS term) p
      WHERE numnode(p.q) > 0
    )
    """
  }

  /// The common table expressions ranking `kind`'s rows for the phrases (`keyword_<table>`:
  /// `id`, `score`, best first, at most `limit`): BM25 as `engram_bm25` computes it in the
  /// SQLite store (``FTSRank``): for each phrase a row holds, Lucene's idf over the user's
  /// rows of the table times `f·(k1+1) / (f + k1·(1 − b + b·length/average length))`, with f
  /// the phrase's occurrences in the row.
  static func keywordCTEs(
    kind: ItemKind, scope: String, limit: String, session: String?, range: (String, String)?
  ) -> String {
    let table = kind.sourceTable
    var filters = ""
    if let session { filters += " AND d.session_id = \(session)" }
    if let (lower, upper) = range {
      filters += " AND d.\(kind.timeColumn) >= \(lower) AND d.\(kind.timeColumn) < \(upper)"
    }
    // A one-word phrase's occurrences: the row's positions of its lexeme, read from the text
    // of the vector cut down to that lexeme (`'word':1A,5A`; 20 times faster than unnesting
    // the vector per row; a lexeme holds letters and digits, never a comma). OFFSET 0 keeps
    // the count computed once per row and phrase.
    // Each phrase's weight is computed once, before the rows are read (MATERIALIZED): on a
    // table without statistics (just after an ingest) the planner otherwise nests the
    // per-phrase counts inside the loop over matching rows.
    return """
      stats_\(table) AS MATERIALIZED (
        SELECT count(*)::float8 AS n, greatest(coalesce(avg(fts_length::float8), 1), 1) AS average
        FROM \(table) WHERE user_scope = \(scope)
      ),
      weighted_\(table) AS MATERIALIZED (
        SELECT p.q, p.lexemes, ln(1 + (s.n - m.n + 0.5) / (m.n + 0.5)) AS idf
        FROM phrases p CROSS JOIN stats_\(table) s,
          LATERAL (SELECT count(*)::float8 AS n FROM \(table) WHERE user_scope = \(scope) AND search @@ p.q) m
      ),
      keyword_\(table) AS (
        SELECT d.id, sum(w.idf * f.n * \(FTSRank.k1 + 1)
            / (f.n + \(FTSRank.k1) * (\(1 - FTSRank.b) + \(FTSRank.b) * d.fts_length / s.average))) AS score
        FROM \(table) d JOIN weighted_\(table) w ON d.search @@ w.q CROSS JOIN stats_\(table) s,
          LATERAL (SELECT (CASE WHEN cardinality(w.lexemes) = 1
              THEN cardinality(string_to_array(ts_filter(setweight(d.search, 'A', w.lexemes), '{a}')::text, ','))
              ELSE engram_phrase_frequency(d.search, w.lexemes) END)::float8 AS n OFFSET 0) f
        WHERE d.user_scope = \(scope)\(filters)
        GROUP BY d.id ORDER BY score DESC, d.id LIMIT \(limit)
      )
      """
  }

  /// The keyword filters' parameters (session, time range), added to `parameters`.
  static func filterParameters(
    _ parameters: inout Parameters, sessionID: Int64?, timeRange: Range<Int64>?
  ) -> (session: String?, range: (String, String)?) {
    let session = sessionID.map { parameters.add(.int($0)) }
    let range = timeRange.map { (parameters.add(.int($0.lowerBound)), parameters.add(.int($0.upperBound))) }
    return (session, range)
  }

  /// Full-text search over the user's messages, memories and summaries, best first: the
  /// terms of ``FTSQuery`` (stemmed as the index is) joined with OR, each row scored with
  /// the SQLite store's BM25 (``FTSRank``), so both stores rank the same rows in the same
  /// order. One statement for every kind.
  public func searchText(
    _ query: String, kinds: Set<ItemKind> = Set(ItemKind.allCases), limit: Int = 20, sessionID: Int64? = nil,
    timeRange: Range<Int64>? = nil
  ) throws -> [TextHit] {
    let terms = PostgresFullText.queryTerms(for: query)
    let searched = ItemKind.allCases.filter(kinds.contains)
    guard limit > 0, !terms.isEmpty, !searched.isEmpty else { return [] }
    var parameters = Parameters()
    let scope = parameters.add(scope)
    let termsParameter = parameters.add(.text(JSONValue.array(terms.map(JSONValue.string)).jsonText))
    let limitParameter = parameters.add(.int(Int64(limit)))
    let (session, range) = Self.filterParameters(&parameters, sessionID: sessionID, timeRange: timeRange)
    let ctes =
      [Self.phrasesCTE(terms: termsParameter)]
      + searched.map {
        Self.keywordCTEs(kind: $0, scope: scope, limit: limitParameter, session: session, range: range)
      }
    let selects = searched.enumerated().map { index, kind in
      "SELECT \(index) AS kind, id, score FROM keyword_\(kind.sourceTable)"
    }
    let result = try connection.execute(
      "WITH " + ctes.joined(separator: ",\n") + "\n" + selects.joined(separator: "\nUNION ALL\n"),
      parameters.values)
    var hits: [TextHit] = []
    for row in result.rows {
      hits.append(
        TextHit(
          ownerKind: searched[Int(try row.int64(0) ?? 0)], ownerID: try row.int64(1) ?? 0,
          bm25: max(try row.double(2) ?? 0, .leastNonzeroMagnitude)))
    }
    Self.sortAndTrim(&hits, limit: limit)
    return hits
  }

  /// Keyword hits best first (ties by id), at most `limit`.
  static func sortAndTrim(_ hits: inout [TextHit], limit: Int) {
    hits.sort { $0.bm25 != $1.bm25 ? $0.bm25 > $1.bm25 : $0.ownerID < $1.ownerID }
    if hits.count > limit { hits.removeSubrange(limit...) }
  }

  /// Everything one search reads, in one statement (one round trip, one snapshot): the
  /// keyword candidates of `keywordQuery` (nil: none; at most `limit` over all kinds, ranked
  /// as ``searchText(_:kinds:limit:sessionID:timeRange:)`` ranks them) and the candidate
  /// rows and texts of those and of `vectorIDs`.
  public func searchCandidates(
    keywordQuery: String?, kinds: Set<ItemKind>, limit: Int, sessionID: Int64?, timeRange: Range<Int64>?,
    vectorIDs: [ItemKind: [Int64]]
  ) throws -> SearchCandidates {
    let terms = keywordQuery.map { PostgresFullText.queryTerms(for: $0) } ?? []
    let keyword = limit > 0 && !terms.isEmpty
    let searched = ItemKind.allCases.filter {
      kinds.contains($0) && (keyword || !(vectorIDs[$0] ?? []).isEmpty)
    }
    guard !searched.isEmpty else { return SearchCandidates() }
    var parameters = Parameters()
    let scope = parameters.add(scope)
    var ctes: [String] = []
    var wanted: [ItemKind: String] = [:]
    if keyword {
      let termsParameter = parameters.add(.text(JSONValue.array(terms.map(JSONValue.string)).jsonText))
      let limitParameter = parameters.add(.int(Int64(limit)))
      let (session, range) = Self.filterParameters(&parameters, sessionID: sessionID, timeRange: timeRange)
      ctes.append(Self.phrasesCTE(terms: termsParameter))
      for kind in searched {
        ctes.append(
          Self.keywordCTEs(kind: kind, scope: scope, limit: limitParameter, session: session, range: range))
      }
    }
    for kind in searched {
      let table = kind.sourceTable
      var parts: [String] = []
      if keyword { parts.append("SELECT id, score FROM keyword_\(table)") }
      if let ids = vectorIDs[kind], !ids.isEmpty {
        let array = parameters.add(Self.idArray(ids))
        parts.append(
          "SELECT v.id, NULL::float8 FROM unnest(\(array)::bigint[]) AS v(id)"
            + (keyword ? " WHERE v.id NOT IN (SELECT id FROM keyword_\(table))" : ""))
      }
      ctes.append("wanted_\(table)(id, score) AS (\(parts.joined(separator: " UNION ALL ")))")
      wanted[kind] = "wanted_\(table)"
    }
    let selects = searched.map { kind -> String in
      let source = wanted[kind] ?? ""
      switch kind {
      case .message:
        return """
          SELECT 0 AS kind, m.id, w.score, m.session_id, coalesce(m.speaker, m.role), m.created_at,
            (SELECT p.id FROM messages p WHERE p.user_scope = \(scope) AND p.session_id = m.session_id
               AND (p.created_at, p.id) < (m.created_at, m.id) ORDER BY p.created_at DESC, p.id DESC LIMIT 1),
            (SELECT n.id FROM messages n WHERE n.user_scope = \(scope) AND n.session_id = m.session_id
               AND (n.created_at, n.id) > (m.created_at, m.id) ORDER BY n.created_at, n.id LIMIT 1),
            false, NULL::text, NULL::float8, m.content, m.metadata::text, NULL::text, NULL::bigint, NULL::bigint
          FROM \(source) w JOIN messages m ON m.user_scope = \(scope) AND m.id = w.id
          """
      case .memory:
        return """
          SELECT 1, m.id, w.score, m.session_id, NULL, m.created_at, NULL, NULL,
            m.superseded_by IS NOT NULL, m.scope_user, m.importance, m.content, m.metadata::text, m.kind,
            NULL, NULL
          FROM \(source) w JOIN memories m ON m.user_scope = \(scope) AND m.id = w.id
          """
      case .summary:
        return """
          SELECT 2, s.id, w.score, s.session_id, NULL, s.start_at, NULL, NULL, false, NULL, NULL, s.content,
            NULL, NULL, s.first_message_id, s.last_message_id
          FROM \(source) w JOIN summaries s ON s.user_scope = \(scope) AND s.id = w.id
          """
      }
    }
    let result = try connection.execute(
      "WITH " + ctes.joined(separator: ",\n") + "\n" + selects.joined(separator: "\nUNION ALL\n"),
      parameters.values)
    var candidates = SearchCandidates()
    let kindsByCode: [ItemKind] = [.message, .memory, .summary]
    for row in result.rows {
      let kind = kindsByCode[Int(try row.int64(0) ?? 0)]
      let id = try row.int64(1) ?? 0
      if let score = try row.double(2) {
        candidates.keywordHits.append(
          TextHit(ownerKind: kind, ownerID: id, bm25: max(score, .leastNonzeroMagnitude)))
      }
      let sessionID = try row.int64(3)
      let timestamp = Timestamp.date(try row.int64(5) ?? 0)
      switch kind {
      case .message:
        candidates.rows.append(
          CandidateRow(
            kind: .message, id: id, sessionID: sessionID, speaker: row.string(4), timestamp: timestamp,
            previous: try row.int64(6), next: try row.int64(7)))
        candidates.texts[.message, default: [:]][id] = ItemText(
          text: row.string(11) ?? "", metadataJSON: row.string(12) ?? "{}")
      case .memory:
        candidates.rows.append(
          CandidateRow(
            kind: .memory, id: id, sessionID: sessionID, timestamp: timestamp,
            superseded: try row.bool(8) ?? false, scopeUser: row.string(9), importance: try row.double(10)))
        candidates.texts[.memory, default: [:]][id] = ItemText(
          text: row.string(11) ?? "", metadataJSON: row.string(12) ?? "{}",
          memoryKind: row.string(13).flatMap(MemoryKind.init(rawValue:)))
      case .summary:
        candidates.rows.append(
          CandidateRow(kind: .summary, id: id, sessionID: sessionID, timestamp: timestamp))
        candidates.texts[.summary, default: [:]][id] = ItemText(
          text: row.string(11) ?? "", coveredTurns: (try row.int64(14), try row.int64(15)))
      }
    }
    Self.sortAndTrim(&candidates.keywordHits, limit: limit)
    return candidates
  }
}
