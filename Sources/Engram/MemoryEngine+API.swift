import EngramCore
import EngramStore
import Foundation

// The engine's central verbs, one forwarding call each to the part that does it: search
// (and the query embeddings it uses), compaction, the doctor, and what works on a memory no
// engine has open (export, calendar, reindex). The rest of the public surface is grouped by
// topic: `conversation`, `memories`, `userPreferences`, `transfer`, `maintenance`,
// `agentRecords` (MemoryEngine+Conversation.swift and its siblings).
extension MemoryEngine {
  // MARK: - Search (HybridRetriever, Fusion)

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
  ///   - exact: scan every vector even when the approximate tier serves (hits found through
  ///     approximate vector candidates not proven exact carry `approximate` in `provenance`).
  /// - Throws: `EngramError.emptyText`, `EngramError.invalidK`, embedder and store errors.
  public func search(
    _ query: String, k: Int = 10, mode: SearchMode = .hybrid, filters: SearchFilters = SearchFilters(),
    recordAccess: Bool = true, exact: Bool = false
  ) async throws -> [SearchHit] {
    try await retriever.search(
      query, k: k, mode: mode, filters: filters, recordAccess: recordAccess, exact: exact)
  }

  /// Writes the access statistics gathered so far (normally done in the background and at
  /// close; call it to have them in the database now).
  /// - Throws: store errors (`.busy` when another process holds the write lock past the busy
  ///   timeout); the statistics are kept for the next attempt.
  public func flushAccessStatistics() throws {
    try checkOpen()
    try access.flush()
  }

  /// The embedding of a query text, from the cache when the same text was embedded lately.
  public func embedQuery(_ text: String) async throws -> [Float] {
    try await embedding.embedQuery(text)
  }

  /// Embeddings of several query texts (cached ones are reused; the rest in one batch).
  public func embedQueries(_ texts: [String]) async throws -> [[Float]] {
    try await embedding.embedQueries(texts)
  }

  // MARK: - A memory no engine has open (Exporter, CalendarExchange)

  /// Exports the memory at `path` without opening an engine: the database is opened
  /// read-only and no vector index is loaded, so memory stays bounded however large the
  /// memory is. Returns the number of lines. Only `user`'s rows are exported.
  /// - Throws: store errors (a missing, damaged or newer database), `SecureTemporaryFile.Failure`.
  @discardableResult
  public static func export(
    databaseAt path: String, user: String = StoreUser.defaultID, to destination: ExportDestination
  ) throws -> Int {
    try Exporter.export(databaseAt: path, user: user, to: destination)
  }

  /// Streams the export of the memory at `path` to `sink` (see `Transfer.export(into:)`).
  @discardableResult
  public static func export(
    databaseAt path: String, user: String = StoreUser.defaultID,
    into sink: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> Int {
    try Exporter.export(databaseAt: path, user: user, into: sink)
  }

  /// The calendar of the memory at `path` (see `Transfer.calendarText(stamp:)`), opened read-only
  /// without an engine; with what it holds.
  public static func calendar(
    databaseAt path: String, user: String = StoreUser.defaultID, stamp: Date = Date()
  )
    throws -> (text: String, summary: CalendarExportSummary)
  {
    try CalendarExchange.calendarText(databaseAt: path, user: user, stamp: stamp)
  }

  /// Writes the calendar of the memory at `path` to `file` (mode 0600, renamed into place
  /// when complete).
  /// - Throws: store errors, `SecureTemporaryFile.Failure`.
  @discardableResult
  public static func exportCalendar(
    databaseAt path: String, user: String = StoreUser.defaultID, toFile file: String, stamp: Date = Date()
  ) throws -> CalendarExportSummary {
    try CalendarExchange.export(databaseAt: path, user: user, toFile: file, stamp: stamp)
  }

  /// Whether `data` begins as an iCalendar file does (`BEGIN:VCALENDAR`, after an optional
  /// byte-order mark and blank lines).
  public static func isICalendar(_ data: Data) -> Bool {
    var bytes = data.prefix(4096)[...]
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
    let text = String(decoding: bytes, as: UTF8.self).drop { $0.isWhitespace || $0.isNewline }
    return text.uppercased().hasPrefix("BEGIN:VCALENDAR")
  }

  // MARK: - Compaction (Compactor)

  /// Compacts old conversation and near-duplicate memories.
  ///
  /// For every session whose turns are all older than `olderThan` and not yet summarized:
  /// an extractive structured summary is stored (embedded and searchable), the session's
  /// turns are marked covered by it, covered low-information turns (greetings, thanks)
  /// are deleted, and the remaining covered turns' embeddings are re-stored as int8.
  /// Memories whose embedding has cosine >= `duplicateThreshold` with a newer memory of
  /// the same kind are marked superseded by it (never deleted). Then the index drops its
  /// tombstones, FTS indexes are optimized, the WAL is checkpointed and the file vacuumed.
  ///
  /// Sessions are compacted in transactions of whole sessions (at most
  /// `sessionsPerTransaction` sessions and about `turnsPerTransaction`
  /// turns each), so an interruption leaves every session either untouched or fully
  /// compacted, and memory and lock time stay bounded however large the memory is.
  ///
  /// A dry run is a planning query: it reads each eligible session's turn texts once (no
  /// vectors, no summaries, no index) and reports exactly what the real run would delete,
  /// since summaries never quote a low-information turn unless a session has nothing else.
  ///
  /// - Parameters:
  ///   - olderThan: only turns older than this are compacted (default: the policy's).
  ///   - now: the time ages are measured from.
  ///   - dryRun: report the plan without changing anything.
  ///   - progress: called with the phase and counts as the work advances.
  /// - Complexity: O(turns) reads for a dry run; O(Σ session² · dimension) for the
  ///   summaries of a real run, plus a `VACUUM` of the file.
  public func compact(
    olderThan: TimeInterval? = nil, now: Date = Date(), dryRun: Bool = false,
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> CompactionReport {
    try await compactor.compact(olderThan: olderThan, now: now, dryRun: dryRun, progress: progress)
  }

  /// The turns a summary quotes verbatim (from its structured JSON).
  public func quotedMessageIDs(ofSummary id: Int64) throws -> [Int64] {
    try compactor.quotedMessageIDs(ofSummary: id)
  }

  // MARK: - Doctor (Doctor)

  /// Checks that store, full-text indexes and vector index agree: SQLite's integrity check,
  /// FTS row counts and FTS5's own check, every message, memory and summary having exactly
  /// one embedding of the configured model and dimension, and the vector index holding
  /// exactly the stored embeddings.
  ///
  /// - Parameter repair: rebuild what can be rebuilt: FTS indexes, orphan embeddings,
  ///   missing embeddings (embedded now) and the vector index with its snapshot.
  public func doctor(repair: Bool = false) async throws -> DoctorReport {
    try await doctor.doctor(repair: repair)
  }

  // MARK: - Reindex (Reindexer)

  /// Re-embeds everything in the memory at `path` with `configuration.embedder` and switches
  /// the database's model in one transaction (all or nothing), then opens it.
  ///
  /// The old model is not needed: texts are read from the store.
  ///
  /// - Parameters:
  ///   - path: the memory's location (a SQLite path or a PostgreSQL URI).
  ///   - configuration: the engine's configuration, with the new embedder.
  ///   - embedderSpec: when given, recorded as `meta.embedder_spec` in the same
  ///     transaction as the new vectors, so a crash can never leave vectors of one model with
  ///     the spec of the other (a tool reopening the file would then refuse it).
  ///   - progress: called with the phase and counts as the work advances.
  /// - Throws: `EngramError.emptyText` for a blank `embedderSpec` (nothing changed); embedder
  ///   and store errors.
  public static func reindex(
    path: String, configuration: EngramConfiguration, embedderSpec: String? = nil,
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> MemoryEngine {
    try await Reindexer.reindex(
      path: path, configuration: configuration, embedderSpec: embedderSpec, progress: progress)
  }
}
