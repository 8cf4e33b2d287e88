import EngramCore

/// One table's part of `Connection.searchText`: its best rows for a MATCH expression,
/// ranked by `engram_bm25`, and the pruned search (`FTSPruning`) built on it.
struct RankedSearch {
  let connection: Connection
  let kind: ItemKind
  let limit: Int
  /// Whether rows are joined to their table (filters, or another user's rows in it).
  let filtered: Bool
  let sessionID: Int64?
  let timeRange: Range<Int64>?

  private var fts: String { kind.sourceTable + "_fts" }

  /// The best `limit` rows matching `expression`, best first, with their positive scores.
  /// One statement for every expression (the plan, so the order rows are visited in and ties
  /// broken, does not depend on it): `skip` and `counts` are `engram_bm25`'s.
  func rows(_ expression: String, skip: Int, counts: [Int64]?) throws -> [(id: Int64, score: Double)] {
    let statement: Statement
    if filtered {
      statement = try connection.cachedStatement(
        """
        SELECT \(fts).rowid, engram_bm25(\(fts), ?7, ?8) AS engram_rank
        FROM \(fts) JOIN \(kind.sourceTable) t ON t.id = \(fts).rowid
        WHERE \(fts) MATCH ?1 AND t.user_id = ?6 AND (?3 IS NULL OR t.session_id = ?3)
          AND (?4 IS NULL OR t.\(kind.timeColumn) >= ?4) AND (?5 IS NULL OR t.\(kind.timeColumn) < ?5)
        ORDER BY engram_rank LIMIT ?2
        """)
      try statement.bind(sessionID, at: 3)
      try statement.bind(timeRange?.lowerBound, at: 4)
      try statement.bind(timeRange?.upperBound, at: 5)
      try statement.bind(connection.user, at: 6)
    } else {
      statement = try connection.cachedStatement(
        """
        SELECT rowid, engram_bm25(\(fts), ?7, ?8) AS engram_rank FROM \(fts) WHERE \(fts) MATCH ?1
        ORDER BY engram_rank LIMIT ?2
        """)
    }
    try statement.bind(expression, at: 1)
    try statement.bind(limit, at: 2)
    try statement.bind(skip, at: 7)
    if let counts {
      try counts.map(\.littleEndian).withUnsafeBytes { try statement.bind(bytes: $0, at: 8) }
    } else {
      try statement.bindNull(at: 8)
    }
    var found: [(id: Int64, score: Double)] = []
    try statement.forEachRow { found.append(($0.int64(at: 0), -$0.double(at: 1))) }
    return found
  }

  /// The table's row count and each phrase's document count, over the whole table (nil when
  /// no row matches `expression`).
  func counts(_ expression: String) throws -> (rows: Int64, matching: [Int64])? {
    let statement = try connection.cachedStatement(
      "SELECT engram_fts_counts(\(fts)) FROM \(fts) WHERE \(fts) MATCH ?1 LIMIT 1")
    try statement.bind(expression, at: 1)
    return try statement.first { row in
      row.withBlob(at: 0) { blob -> (rows: Int64, matching: [Int64]) in
        let values = (0..<(blob.count / 8)).map {
          Int64(littleEndian: blob.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self))
        }
        return (values.first ?? 0, Array(values.dropFirst()))
      }
    }
  }

  /// How a pruned search found its rows.
  enum Pass: Sendable, Hashable {
    /// Every row matching a term was ranked.
    case whole
    /// The rows of the rarest terms sufficed.
    case first
    /// The rows holding one of the term sets that can reach the first pass's k-th score.
    case second
  }

  /// The same rows as `rows(terms joined with OR, skip: 0, counts: nil)`, ranking fewer rows
  /// when common terms allow (`FTSPruning`).
  func pruned(_ terms: [String], _ pruning: FTSPruning) throws -> [(id: Int64, score: Double)] {
    try prunedPass(terms, pruning).rows
  }

  /// `pruned`, and which pass answered.
  func prunedPass(_ terms: [String], _ pruning: FTSPruning) throws -> (
    rows: [(id: Int64, score: Double)], pass: Pass
  ) {
    let plain = terms.joined(separator: " OR ")
    guard terms.count > 1 else { return (try rows(plain, skip: 0, counts: nil), .whole) }
    guard let counted = try counts(plain) else { return ([], .whole) }
    // A phrase FTS5 dropped (nothing left after its tokenizer) would shift the others.
    guard counted.matching.count == terms.count else {
      return (try rows(plain, skip: 0, counts: nil), .whole)
    }
    // A term found nowhere adds to no score: left out, the others keep their order, so each
    // row's score sums the same terms in the same order.
    let live = terms.indices.filter { counted.matching[$0] > 0 }
    let liveTerms = live.map { terms[$0] }
    let liveCounts = live.map { counted.matching[$0] }
    let tail = liveTerms.joined(separator: " OR ")
    let whole = { (try rows(tail, skip: 0, counts: liveCounts), Pass.whole) }
    guard liveTerms.count > 1, liveCounts.reduce(0, +) > Int64(pruning.minimumMatches),
      let first = pruning.firstPass(counts: liveCounts, limit: limit, rows: counted.rows)
    else { return try whole() }

    let bounds = liveCounts.map { pruning.bound(rows: counted.rows, matching: $0) }
    let firstQuery = FTSPruning.expression(terms: liveTerms, clauses: first.map { [$0] })
    let firstRows = try rows(firstQuery.expression, skip: firstQuery.skip, counts: liveCounts)
    guard firstRows.count >= limit, let theta = firstRows.last?.score else { return try whole() }
    if FTSPruning.othersBelow(theta, bounds: bounds, chosen: first) { return (firstRows, .first) }
    guard let clauses = pruning.clauses(bounds: bounds, theta: theta) else { return try whole() }
    let second = FTSPruning.expression(terms: liveTerms, clauses: clauses)
    let secondRows = try rows(second.expression, skip: second.skip, counts: liveCounts)
    // Every row of the first pass's best `limit` holds a clause: fewer would be a fault.
    return secondRows.count >= limit ? (secondRows, .second) : try whole()
  }
}
