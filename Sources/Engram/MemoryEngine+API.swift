import EngramCore
import EngramStore
import Foundation

// The engine's public API, one forwarding call per operation to the part that does it.
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

  // MARK: - Conversation (Conversation)

  /// Starts a session; returns its id. An existing session with the same name is reused.
  public func startSession(name: String? = nil, title: String? = nil, at date: Date = Date()) throws -> Int64
  {
    try conversation.startSession(name: name, title: title, at: date)
  }

  /// Marks a session ended.
  public func endSession(_ id: Int64, at date: Date = Date()) throws {
    try conversation.endSession(id, at: date)
  }

  /// Appends one conversation turn (stored and embedded in one transaction); returns its id.
  ///
  /// - Throws: `EngramError.emptyText` for blank text; embedder and store errors. Nothing is
  ///   stored when any step fails.
  ///
  /// With `embedNow: false` the turn is stored at once (searchable by keyword) and embedded
  /// later by `embedPendingTurns()`, off the caller's critical path.
  @discardableResult
  public func appendTurn(
    role: String, content: String, speaker: String? = nil, session: Int64? = nil, at date: Date = Date(),
    metadata: [String: JSONValue] = [:], embedNow: Bool = true
  ) async throws -> Int64 {
    try await conversation.appendTurn(
      role: role, content: content, speaker: speaker, session: session, at: date, metadata: metadata,
      embedNow: embedNow)
  }

  /// Embeds the turns this engine stored with `embedNow: false` (up to `limit` of them);
  /// returns how many. Only those turns are read, so the cost does not grow with the memory;
  /// turns left unembedded by a process that stopped first are found by `doctor(repair:)`.
  @discardableResult
  public func embedPendingTurns(limit: Int = 1024) async throws -> Int {
    try await conversation.embedPendingTurns(limit: limit)
  }

  /// The most recent turns, oldest first.
  public func recentTurns(limit: Int, session: Int64? = nil) throws -> [SearchHit] {
    try conversation.recentTurns(limit: limit, session: session)
  }

  // MARK: - Memories (Memories)

  /// Stores a memory and its embedding; returns its id. A current memory of the same kind
  /// (and `scopeUser`) with exactly this text is not stored again: its id is returned
  /// (`rememberReporting` says which happened).
  ///
  /// - Throws: `EngramError.emptyText`; `StoreError.invalidImportance` outside 0...1.
  @discardableResult
  public func remember(
    _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
    scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
    session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
  ) async throws -> Int64 {
    try await rememberReporting(
      content, kind: kind, importance: importance, scopeUser: scopeUser, scopeAgent: scopeAgent, tags: tags,
      validFrom: validFrom, validUntil: validUntil, session: session, sourceMessageIDs: sourceMessageIDs,
      at: date
    ).id
  }

  /// `remember`, saying whether the memory is new (false: an identical one was stored
  /// already, and its id is returned).
  public func rememberReporting(
    _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
    scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
    session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
  ) async throws -> (id: Int64, isNew: Bool) {
    try await memoryRecords.remember(
      content, kind: kind, importance: importance, scopeUser: scopeUser, scopeAgent: scopeAgent, tags: tags,
      validFrom: validFrom, validUntil: validUntil, session: session, sourceMessageIDs: sourceMessageIDs,
      at: date)
  }

  /// Replaces a memory's content (and its kind, when `kind` is given) with history kept: a new
  /// memory is stored and the old one is marked superseded by it (still readable and
  /// searchable with `includeSuperseded`). Returns the new memory's id (the old one when
  /// nothing changed).
  @discardableResult
  public func updateMemory(
    _ id: Int64, content: String, kind: MemoryKind? = nil, importance: Double? = nil, at date: Date = Date()
  ) async throws -> Int64 {
    try await memoryRecords.updateMemory(id, content: content, kind: kind, importance: importance, at: date)
  }

  /// The memory with this id, or nil.
  public func memory(_ id: Int64) throws -> MemoryItem? {
    try memoryRecords.memory(id)
  }

  /// Memories, newest first.
  public func memories(kind: MemoryKind? = nil, limit: Int = 100, includeSuperseded: Bool = false) throws
    -> [MemoryItem]
  {
    try memoryRecords.memories(kind: kind, limit: limit, includeSuperseded: includeSuperseded)
  }

  // MARK: - Forgetting (Forgetting)

  /// Deletes an item and every copy of it (see ``forgetReporting(kind:id:dryRun:)``);
  /// returns whether it existed.
  @discardableResult
  public func forget(kind: ItemKind = .memory, id: Int64) throws -> Bool {
    try forgetting.forget(kind: kind, id: id)
  }

  /// Deletes an item with its embedding and full-text entry, and every copy of it the
  /// memory holds, in one transaction; returns what was removed, or nil when no item of
  /// `kind` has `id` (nothing changed).
  ///
  /// The copies (docs/forgetting.md):
  /// - a turn: every summary that covers or quotes it (the session's other turns become
  ///   uncovered; the next `compact` summarizes them again without it);
  /// - a memory: every turn, summary, trace step and finished pending call whose text
  ///   contains the memory's text (case of ASCII letters ignored; in trace and call
  ///   arguments also in its JSON-escaped form). A turn is deleted whole: it states what was
  ///   forgotten. Calls still waiting for an answer are left to the conversation holding them;
  /// - a summary: only itself (its turns become uncovered).
  ///
  /// - Parameter dryRun: compute the report inside the transaction, then roll it back.
  @discardableResult
  public func forgetReporting(kind: ItemKind, id: Int64, dryRun: Bool = false) throws -> ForgetReport? {
    try forgetting.forgetReporting(kind: kind, id: id, dryRun: dryRun)
  }

  // MARK: - Preferences (Preferences)

  /// Sets a key-value preference (pinned ones go into every prompt context).
  public func setPreference(_ key: String, _ value: String, pinned: Bool = false) throws {
    try preferenceRecords.setPreference(key, value, pinned: pinned)
  }

  /// A preference's value, or nil.
  public func preference(_ key: String) throws -> String? {
    try preferenceRecords.preference(key)
  }

  /// All preferences as (key, value, pinned), by key.
  public func preferences() throws -> [(key: String, value: String, pinned: Bool)] {
    try preferenceRecords.preferences()
  }

  /// Forgets the memories matching a query (keyword and vector, fused) that the query
  /// actually names (both retrievers agree, or the text contains it); with `dryRun` nothing
  /// is deleted. Returns what matched.
  public func forget(matching query: String, kinds: Set<ItemKind> = [.memory], limit: Int = 10, dryRun: Bool)
    async throws -> [SearchHit]
  {
    try await forgetting.forget(matching: query, kinds: kinds, limit: limit, dryRun: dryRun)
  }

  // MARK: - Ingest (Ingestor)

  /// Reads a conversation export, or Markdown notes, and stores what is not stored yet.
  ///
  /// The format is detected from the content unless `options.format` names it (see
  /// `ConversationFile.Format` and `docs/ingest.md`). Ingest is idempotent and resumable:
  /// every turn has a stable key (the format's message id, else a hash of session, time,
  /// speaker and text) and a stored turn is skipped; turns are committed in batches, so a
  /// stopped ingest keeps a prefix and running it again completes it. A malformed line or
  /// record refuses the file with its line number before anything is stored. Markdown notes
  /// (a `.md` file, or a folder of them, read recursively) become memories of kind `note`,
  /// one per note or per heading section of a long note; an identical memory is not stored twice.
  ///
  /// - Parameters:
  ///   - path: a file (`-` reads standard input) or a folder of Markdown notes.
  ///   - options: the format to force, and the order of day and month for WhatsApp dates.
  ///   - progress: called with the phase and counts as the work advances.
  /// - Throws: `ImportError` for a file that cannot be read or parsed, `EngramError.cancelled`.
  @discardableResult
  public func ingest(
    path: String, options: IngestOptions = IngestOptions(),
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> IngestReport {
    try await ingestor.ingest(path: path, options: options, progress: progress)
  }

  /// Stores a parsed conversation file (see `ingest(path:progress:)`).
  public func ingest(
    _ file: ConversationFile, path: String, sessionPrefix: String = "",
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> IngestReport {
    try await ingestor.ingest(file, path: path, sessionPrefix: sessionPrefix, progress: progress)
  }

  // MARK: - Export and import (Exporter, Importer)

  /// Writes the whole memory as JSONL: a header line, one line per row of every table
  /// (vectors as base64 of their stored bytes), and an `end` line with the number of lines
  /// before it and their checksum. Returns the number of lines, header and end included.
  ///
  /// A file is written to a temporary file created exclusively with mode 0600 beside it,
  /// then renamed into place; `-` writes to standard output.
  /// - Complexity: O(rows) time; memory bounded by one chunk of lines (about 1 MiB) and
  ///   the longest row, whatever the memory's size.
  @discardableResult
  public func export(to path: String) throws -> Int {
    try exporter.export(to: path)
  }

  /// Streams the export to `sink` in chunks of whole lines (each chunk is valid UTF-8 on
  /// its own). Returns the number of lines.
  @discardableResult
  public func export(into sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
    try exporter.export(into: sink)
  }

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

  /// Streams the export of the memory at `path` to `sink` (see ``export(into:)``).
  @discardableResult
  public static func export(
    databaseAt path: String, user: String = StoreUser.defaultID,
    into sink: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> Int {
    try Exporter.export(databaseAt: path, user: user, into: sink)
  }

  /// Imports an export into this memory, which must be empty; all or nothing.
  ///
  /// The file is read line by line in one transaction, so memory stays bounded by the
  /// longest line whatever the export's size. Ids, times, vectors and every other column
  /// are kept exactly, so exporting the result gives the same lines. Every line must be
  /// valid UTF-8; every vector must have the embedder's dimension and finite components
  /// whose squares sum to a finite, non-zero length; a version 2 export must end with its
  /// `end` line, whose line count and checksum must match (a truncated or altered file is
  /// refused). The vector index is rebuilt from the imported rows on the next search (or
  /// the next open). Returns the number of rows imported.
  ///
  /// - Throws: `EngramError.importTargetNotEmpty`, `EngramError.malformedExport` (with the
  ///   line), `EngramError.invalidExportVector` (with the line), `ImportError.invalidUTF8`
  ///   (with the line), `ImportError.unreadable`, `EngramError.modelMismatch` when the
  ///   export's vectors come from another model.
  @discardableResult
  public func importExport(from path: String) throws -> Int {
    try importer.importExport(from: path)
  }

  // MARK: - iCalendar (CalendarExchange)

  /// The memory's reminders and events as one iCalendar (RFC 5545) calendar: events as
  /// VEVENT (DTEND one hour after DTSTART unless an end is stored), reminders as VTODO with
  /// DUE, STATUS and a display alarm at the due time; UTC times, CRLF line ends, lines folded
  /// at 75 octets. UIDs are stable (`engram-<kind>-<id>@<database id>`, or the UID an item was
  /// imported with), so a calendar app updates rather than duplicates on a second export.
  /// `stamp` is the DTSTAMP.
  public func calendarText(stamp: Date = Date()) throws -> String {
    try calendar.calendarText(stamp: stamp).text
  }

  /// The calendar of the memory at `path` (see ``calendarText(stamp:)``), opened read-only
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

  /// Stores the events (VEVENT) and reminders (VTODO) of an iCalendar file, all or nothing.
  ///
  /// An item whose UID is stored already (imported before, or exported from this memory) is
  /// not added again: it is updated when the file changes it, else left as it is. Times in
  /// UTC or with a `TZID` (an IANA identifier, directly or through the file's VTIMEZONE) are
  /// exact; floating times are read in `timeZone`, and a date alone (an all-day item) is that
  /// day at 09:00 in `timeZone`. A VTODO is due at its DUE, else its DTSTART; COMPLETED
  /// marks it done. An RRULE is kept as text (not expanded). Cancelled components and
  /// overrides of one occurrence (RECURRENCE-ID) are skipped.
  ///
  /// - Throws: `ICalendarError` (with the line) for a file that is not iCalendar, a line that
  ///   cannot be read, a component left open, a bad date or an unknown time zone; store
  ///   errors. Nothing is stored then.
  @discardableResult
  public func importCalendar(_ data: Data, timeZone: TimeZone = .current, at now: Date = Date()) throws
    -> CalendarImportSummary
  {
    try calendar.importCalendar(data, timeZone: timeZone, at: now)
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
  ///   - dryRun: report the plan without changing anything.
  /// - Complexity: O(turns) reads for a dry run; O(Σ session² · dimension) for the
  ///   summaries of a real run, plus a `VACUUM` of the file.
  public func compact(
    olderThan: TimeInterval? = nil, now: Date = Date(), dryRun: Bool = false,
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> CompactionReport {
    try await compactor.compact(olderThan: olderThan, now: now, dryRun: dryRun, progress: progress)
  }

  // MARK: - Maintenance (Maintenance, also `maintenance`)

  /// Rows per table.
  public func tableCounts() throws -> [String: Int] {
    try maintenance.tableCounts()
  }

  /// The store's size: for SQLite the file and its WAL on disk.
  public func databaseBytes() -> Int {
    maintenance.databaseBytes()
  }

  /// Moves the WAL's pages into the database file and truncates the WAL.
  /// - Throws: `StoreError.unsupported` on a store without a WAL of its own (PostgreSQL).
  public func checkpoint() throws {
    try maintenance.checkpoint()
  }

  // MARK: - Compaction, continued

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
  /// - Parameter embedderSpec: when given, recorded as `meta.embedder_spec` in the same
  ///   transaction as the new vectors, so a crash can never leave vectors of one model with
  ///   the spec of the other (a tool reopening the file would then refuse it).
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

// The engine's housekeeping reads, forwarded to `maintenance`.
extension MemoryEngine {
  /// A value of the `meta` table (`last_compaction`, `created_at`, ...), or nil.
  public func metaValue(_ key: String) throws -> String? {
    try maintenance.metaValue(key)
  }

  /// How many memories of each kind are stored (superseded ones included); kinds with
  /// none are absent.
  public func memoryCountsByKind() throws -> [MemoryKind: Int] {
    try maintenance.memoryCountsByKind()
  }

  /// Rows and bytes of the in-memory vector index.
  public var vectorIndexStatistics: VectorIndexStatistics {
    maintenance.vectorIndexStatistics
  }
}
