import EngramCore

/// A full-text match.
public struct TextHit: Sendable, Hashable {
  /// The matching row's table.
  public var ownerKind: ItemKind
  /// The matching row's id.
  public var ownerID: Int64
  /// The BM25 relevance (`FTSRank`), negated so that higher is better (always
  /// > 0 for a match). Scores from different tables are comparable only roughly (each table
  /// has its own document statistics).
  public var bm25: Double

  /// Creates a hit.
  public init(ownerKind: ItemKind, ownerID: Int64, bm25: Double) {
    self.ownerKind = ownerKind
    self.ownerID = ownerID
    self.bm25 = bm25
  }
}

/// The FTS index of one source table and how many rows each side holds.
public struct FTSConsistency: Sendable, Hashable {
  /// The source table ("messages", "memories", "summaries").
  public var table: String
  /// Rows in the source table.
  public var sourceRows: Int
  /// Documents in its FTS index.
  public var indexedRows: Int
  /// Whether FTS5's own `integrity-check` passed.
  public var indexIntact: Bool
  /// Whether both counts agree and the index is intact.
  public var isConsistent: Bool { sourceRows == indexedRows && indexIntact }

  package init(table: String, sourceRows: Int, indexedRows: Int, indexIntact: Bool) {
    self.table = table
    self.sourceRows = sourceRows
    self.indexedRows = indexedRows
    self.indexIntact = indexIntact
  }
}

extension ItemKind {
  package var sourceTable: String {
    switch self {
    case .message: "messages"
    case .memory: "memories"
    case .summary: "summaries"
    }
  }

  /// The SQL expression of a row's indexed text: the same as the schema's triggers index
  /// (migration 4). A turn carries its speaker's name and its day.
  var indexedText: String {
    switch self {
    case .message: "engram_fts_text(coalesce(speaker || ': ', '') || content, created_at)"
    case .memory, .summary: "engram_fts_text(content)"
    }
  }

  package var timeColumn: String {
    switch self {
    case .message, .memory: "created_at"
    case .summary: "start_at"
    }
  }
}

extension Connection {
  /// Full-text search over messages, memories and summaries, best first.
  ///
  /// The query goes through `FTSQuery`, so any user text is safe: FTS syntax is searched
  /// as plain text and an empty or punctuation-only query returns `[]`.
  /// - Parameters:
  ///   - kinds: the tables to search.
  ///   - limit: the maximum number of hits overall.
  ///   - sessionID: only rows of this session.
  ///   - timeRange: only rows whose time (created_at; summaries' start_at) lies in this
  ///     half-open range of milliseconds.
  /// - Returns: hits sorted by descending `bm25` (positive, higher is better).
  public func searchText(
    _ query: String, kinds: Set<ItemKind> = Set(ItemKind.allCases), limit: Int = 20,
    sessionID: Int64? = nil, timeRange: Range<Int64>? = nil
  ) throws -> [TextHit] {
    try searchText(
      query, kinds: kinds, limit: limit, sessionID: sessionID, timeRange: timeRange, pruning: .standard)
  }

  /// `searchText` with a choice of pruning (`FTSPruning`); nil ranks every row that matches
  /// any term, the reference a pruned search must equal.
  func searchText(
    _ query: String, kinds: Set<ItemKind>, limit: Int, sessionID: Int64?, timeRange: Range<Int64>?,
    pruning: FTSPruning?
  ) throws -> [TextHit] {
    guard limit > 0 else { return [] }
    let terms = FTSQuery.terms(for: query)
    guard !terms.isEmpty else { return [] }
    var hits: [TextHit] = []
    for kind in ItemKind.allCases where kinds.contains(kind) {
      // The full-text indexes hold every user's rows; while the table holds no other user's
      // rows (one seek each way), the index alone answers, else the rows are joined.
      let filtered = try sessionID != nil || timeRange != nil || !holdsOnlyThisUser(kind.sourceTable)
      let search = RankedSearch(
        connection: self, kind: kind, limit: limit, filtered: filtered, sessionID: sessionID,
        timeRange: timeRange)
      let rows =
        if let pruning, pruning.prunesFilters || (sessionID == nil && timeRange == nil) {
          try search.pruned(terms, pruning)
        } else {
          try search.rows(terms.joined(separator: " OR "), skip: 0, counts: nil)
        }
      hits += rows.map { TextHit(ownerKind: kind, ownerID: $0.id, bm25: $0.score) }
    }
    if kinds.count > 1 {
      hits.sort { $0.bm25 != $1.bm25 ? $0.bm25 > $1.bm25 : $0.ownerID < $1.ownerID }
      if hits.count > limit { hits.removeSubrange(limit...) }
    }
    return hits
  }

  /// Whether every row of `table` (a per-user table) is this connection's user's, or it has
  /// none: two seeks of its `user_id` index.
  func holdsOnlyThisUser(_ table: String) throws -> Bool {
    let statement = try cachedStatement(
      "SELECT (SELECT min(user_id) FROM \(table)), (SELECT max(user_id) FROM \(table))")
    return try statement.first { row in
      (row.isNull(at: 0) || row.string(at: 0) == user) && (row.isNull(at: 1) || row.string(at: 1) == user)
    } ?? true
  }

  /// Source rows against FTS documents for each indexed table, with FTS5's own
  /// `integrity-check` (contentless tables count their documents in `<table>_docsize`).
  ///
  /// - Parameter deep: also run FTS5's `integrity-check`, which reads every block of the
  ///   index. It is a write command (it changes nothing, but needs a writable database), so a
  ///   read-only connection runs it on a private copy of the index (see
  ///   `ftsIntegrityCheckOnCopy`); without it only the counts are compared.
  public func ftsConsistency(deep: Bool = true) throws -> [FTSConsistency] {
    try ItemKind.allCases.map { kind in
      let source = kind.sourceTable
      let fts = source + "_fts"
      let sourceRows = Int(try scalarInt("SELECT count(*) FROM \(source)") ?? 0)
      let indexedRows = Int(try scalarInt("SELECT count(*) FROM \(fts)_docsize") ?? 0)
      var intact = true
      if deep {
        do {
          if isReadOnly {
            try ftsIntegrityCheckOnCopy(fts)
          } else {
            try savepoint { try execute("INSERT INTO \(fts) (\(fts)) VALUES ('integrity-check')") }
          }
        } catch let error as SQLiteError where error.code == .corrupt || error.code == .error {
          intact = false
        }
      }
      return FTSConsistency(
        table: source, sourceRows: sourceRows, indexedRows: indexedRows, indexIntact: intact)
    }
  }

  /// FTS5's `integrity-check` of the index `fts`, run on a copy of its tables in a private
  /// temporary database (deleted when it closes), for a connection that cannot write.
  ///
  /// The copy is taken inside this connection's read transaction, byte for byte (every
  /// block as stored), so it is damaged exactly where the original is.
  /// - Throws: `SQLiteError` (`.corrupt` when the index is damaged).
  /// - Complexity: O(size of the index): every block is read once and written to the copy.
  func ftsIntegrityCheckOnCopy(_ fts: String) throws {
    let definition = try cachedStatement(
      "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?"
    ).binding([.text(fts)]).first { $0.string(at: 0) }
    guard let definition else {
      throw SQLiteError(
        extendedCode: SQLiteError.Code.corrupt.rawValue, message: "the full-text index \(fts) is missing",
        sql: nil, path: path)
    }
    let copy = try Connection(path: "", mode: .readWriteCreate)
    try copy.execute(definition)
    // FTS5's shadow tables, filled from the original's (defensive mode forbids writing
    // them: off on this private connection only).
    copy.setDefensive(false)
    let shadows = try prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN (?, ?, ?, ?, ?)"
    ).bindingAndMap(["data", "idx", "content", "docsize", "config"].map { .text(fts + "_" + $0) }) {
      $0.string(at: 0)
    }
    try copy.transaction {
      for shadow in shadows {
        try copy.execute("DELETE FROM \"\(shadow)\"")
        let rows = try prepare("SELECT * FROM \"\(shadow)\"")
        let placeholders = Array(repeating: "?", count: rows.columnCount).joined(separator: ", ")
        let insert = try copy.prepare("INSERT INTO \"\(shadow)\" VALUES (\(placeholders))")
        try rows.forEachRow { row in
          try insert.bind((0..<row.columnCount).map { row.value(at: $0) })
          try insert.execute()
        }
      }
    }
    try copy.execute("INSERT INTO \(fts) (\(fts)) VALUES ('integrity-check')")
  }

  /// Rebuilds the three FTS indexes from their source tables ('delete-all', then
  /// re-insert every row through `engram_fts_text`). Runs in one transaction.
  public func rebuildFTS() throws {
    try transaction {
      for kind in ItemKind.allCases {
        let source = kind.sourceTable
        let fts = source + "_fts"
        try execute("INSERT INTO \(fts) (\(fts)) VALUES ('delete-all')")
        try execute("INSERT INTO \(fts) (rowid, body) SELECT id, \(kind.indexedText) FROM \(source)")
      }
    }
  }

  /// `PRAGMA integrity_check`: the problems found, empty when the database is sound.
  public func integrityCheck() throws -> [String] {
    let rows = try prepare("PRAGMA integrity_check").map { $0.string(at: 0) }
    return rows == ["ok"] ? [] : rows
  }
}
