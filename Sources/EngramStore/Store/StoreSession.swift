import EngramCore
import Foundation

/// What the engine does inside one read (a consistent snapshot) or one write transaction
/// (all or nothing) of a `MemoryStore`: the store's named operations, by the names and
/// record types the SQLite `Connection` has always had.
///
/// It is the composition of role protocols, one per group of queries (`RecordQueries`,
/// `MetaQueries`, `ItemQueries`, `SearchQueries`, `EmbeddingQueries`, `ForgettingQueries`,
/// `MaintenanceQueries`, `ExportImportQueries`, `AgentRecordQueries`, `IngestQueries`):
/// code that needs one role can take that role alone.
///
/// A session belongs to the store's user (`MemoryStore.user`): every operation reads and
/// touches only that user's rows (sessions, turns, memories, summaries, embeddings and their
/// full-text and vector entries); rows written through it belong to that user. Meta keys are
/// the store's own (shared by its users), except the keys a store keeps per user (see
/// `MemoryStore.userMetaKey`).
///
/// A session is used by one thread for the duration of the closure it is passed to; it is
/// never kept beyond it. Errors are `StoreError` (the store's rules) or the backend's own
/// error type (`SQLiteError`, the PostgreSQL store's error).
public protocol StoreSession: RecordQueries, MetaQueries, ItemQueries, SearchQueries, EmbeddingQueries,
  ForgettingQueries, MaintenanceQueries, ExportImportQueries, AgentRecordQueries, IngestQueries
{}

/// Rows as typed records (`StoredRecord.swift`, `Connection+BatchInsert.swift`): insert,
/// update, delete, fetch, list, count and select any table's rows. Each store writes a
/// record its way (SQLite its stored form, PostgreSQL with its keyword terms); reading and
/// deleting are written once (`StoredRecord.swift`).
public protocol RecordQueries: SQLSession {
  /// Inserts `record` (its `id` is used when set, else assigned) and returns the row id.
  func insert<R: StoredRecord>(_ record: R) throws -> Int64
  /// Inserts `records` in order, all or nothing, and returns their row ids.
  func insert<R: StoredRecord>(contentsOf records: [R]) throws -> [Int64]
  /// Writes every column of `record` over the row with its id (`StoreError.notFound`).
  func update<R: StoredRecord>(_ record: R) throws
}

/// The store's `meta` keys and schema version (`Meta.swift`).
public protocol MetaQueries: AnyObject {
  /// The value of `key` in the store's meta, or nil.
  func meta(_ key: String) throws -> String?
  /// Sets `key` to `value`.
  func setMeta(_ key: String, _ value: String) throws
  /// Removes `key`; returns whether it existed.
  @discardableResult func deleteMeta(_ key: String) throws -> Bool
  /// The number of migrations applied to the store's schema.
  func userVersion() throws -> Int
}

/// Sessions, turns, memories and summaries by the engine's names for them (`Session.swift`,
/// `Message.swift`, `Queries/Retrieval.swift`): what writing and reading them needs beyond
/// `RecordQueries`.
public protocol ItemQueries: RecordQueries, SQLSession {
  /// The distinct non-null speakers of the conversation log, in binary order.
  func distinctSpeakers() throws -> [String]
  /// Every user that has a row (session, turn, memory, summary or embedding) in the store,
  /// in binary order: the one operation that looks across users (`reindex` changes the
  /// store-wide embedding model, so it must know whether other users' vectors exist).
  func storedUsers() throws -> [String]
}

/// Retrieval (`Queries/Retrieval.swift`, `FTS/Connection+Search.swift`): keyword
/// candidates, the ranking facts of candidates and their texts.
public protocol SearchQueries: SQLSession {
  /// Full-text search over the normalized text (`FTSText`), best first.
  func searchText(
    _ query: String, kinds: Set<ItemKind>, limit: Int, sessionID: Int64?, timeRange: Range<Int64>?
  ) throws -> [TextHit]
}

/// Embeddings, their model, generation and change log, and the vector snapshot's stamp
/// (`EmbeddingRow.swift`, `EmbeddingCodec.swift`, `Connection+VectorSnapshot.swift`).
public protocol EmbeddingQueries: MetaQueries, SQLSession {
  /// Inserts or replaces the embedding of the row's owner; returns its id.
  @discardableResult func upsertEmbedding(_ row: EmbeddingRow) throws -> Int64
  /// Inserts or replaces the embeddings of distinct owners (PostgreSQL: in one statement).
  func upsertEmbeddings(_ rows: [EmbeddingRow]) throws
  /// Re-encodes the owners' float32 embeddings as int8 codes; returns how many changed.
  @discardableResult func quantizeEmbeddings(ownerKind: ItemKind, ownerIDs: [Int64]) throws -> Int
  /// The counter bumped by every change of the embeddings.
  func embeddingGeneration() throws -> Int64
  /// The generation and the epoch redrawn at every change (nil when none is kept).
  func embeddingState() throws -> (generation: Int64, epoch: String?)
  /// Draws a new epoch.
  func renewEmbeddingEpoch() throws
  /// Calls `body` for every embedding of `ownerKinds`, in id order.
  func forEachEmbedding(
    ownerKinds: Set<ItemKind>, _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void) throws
  /// Calls `body` for every embedding with an id above `id`, in id order.
  func forEachEmbedding(
    idAbove id: Int64, _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void) throws
  /// Calls `body` for the current embedding of each id and owner given (each row once).
  func forEachEmbedding(
    ids: Set<Int64>, owners: Set<EmbeddingChanges.OwnerKey>,
    _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void) throws
  /// The decoded vector of each owner's embedding, in order (nil for an owner without one);
  /// see `StoreSession+EmbeddingVectors.swift`.
  func embeddingVectors(owners: [(kind: ItemKind, id: Int64)]) throws -> [[Float]?]
  /// The meta key of the user's vector snapshot stamp (SQLite keeps one per user in the
  /// file's meta, PostgreSQL's meta is the user's own).
  var vectorSnapshotMetaKey: String { get }
}

/// Forgetting an item with every copy of its text (`Queries/Forgetting.swift`).
public protocol ForgettingQueries: RecordQueries, SQLSession {}

/// Compaction, counts and the store's health: candidates and turns to compact, row counts,
/// the embedding census, orphans, integrity and full-text checks (`Queries/Maintenance.swift`,
/// written once, and each store's own: `Connection+Maintenance.swift`).
public protocol MaintenanceQueries: SQLSession {
  /// Rows per table of `reportedTables`.
  func rowCounts() throws -> [String: Int]

  /// How the stored embeddings relate to their owners and the configured model.
  func embeddingCensus(model: String, dimension: Int) throws -> EmbeddingCensus

  /// Deletes embeddings whose owner is gone; returns how many.
  func deleteOrphanEmbeddings() throws -> Int

  /// Problems the store's integrity check finds (empty when none).
  func integrityCheck() throws -> [String]

  /// Rebuilds the full-text indexes from their source rows.
  func rebuildFTS() throws

  /// Whether each full-text index agrees with its source rows (`deep`: check every entry).
  func ftsConsistency(deep: Bool) throws -> [FTSConsistency]
}

/// Export and import, row by row (`Connection+ExportImport.swift`).
public protocol ExportImportQueries: SQLSession {
  /// Calls `columns` once with the column names of `table`, then `body` for each of its
  /// rows (this user's rows where the table is per user) ordered by `order`. `table` and
  /// `order` are schema names, never user text. Per-user columns are left out.
  func forEachExportedRow(
    of table: String, orderedBy order: String, columns: ([String]) throws -> Void,
    _ body: (any ExportedRow) throws -> Void) throws
  /// Checks references at commit instead of per statement (rows come in table order).
  func deferForeignKeys() throws
  /// Inserts one row of `table` from exported columns (names checked by the caller);
  /// `replacing` replaces a row with the same key. Per-user tables get the session's user.
  func insertExportedRow(into table: String, columns: [String], values: [SQLValue], replacing: Bool) throws
  /// Whether the table holds a row exactly as `insertExportedRow` would store these values.
  func exportedRowExists(in table: String, columns: [String], values: [SQLValue]) throws -> Bool
  /// The first imported row whose reference points at no row, checked before commit (nil
  /// when none, or when the store reports references only at commit).
  func firstDanglingReference() throws -> DanglingReference?
  /// How many of this user's rows of `table` have a rowid below `rowid` (nil when unknown).
  func userRows(in table: String, before rowid: Int64) throws -> Int?
}

/// The agent's own records: preferences, skill state, pending calls, traces, reminders,
/// notes and routines (`Queries/AgentRecords.swift`, written once over `SQLSession`, and the
/// records' own lookups beside them).
public protocol AgentRecordQueries: SQLSession {}

/// What ingest asks before it stores (`Connection+Ingest.swift`): the turns stored already
/// by key, and a memory with the same text.
public protocol IngestQueries: AnyObject {
  /// The stored turns among `keys` (this user's ingest `source_key`s), by key.
  func ingestedTurns(sourceKeys keys: [Int64]) throws -> [Int64: IngestedTurn]

  /// The current memory of `kind` whose text is exactly `content` (same `scopeUser`), if any.
  func identicalMemory(content: String, kind: MemoryKind, scopeUser: String?) throws -> Int64?
}

extension MetaQueries {
  /// The embedding model configured in `meta` (this user's), or nil before one is.
  public func embeddingModel() throws -> EmbeddingModel? {
    guard let name = try meta("embedding_model"), let dimensionText = try meta("embedding_dimension"),
      let dimension = Int(dimensionText)
    else { return nil }
    return EmbeddingModel(name: name, dimension: dimension)
  }
}

extension StoreSession {
  /// Every embedding, in id order.
  public func forEachEmbedding(_ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void) throws {
    try forEachEmbedding(ownerKinds: Set(ItemKind.allCases), body)
  }

  /// The item `kind` `id` with what its embedding text is made from, or nil.
  public func embeddableItem(_ kind: ItemKind, id: Int64) throws -> EmbeddableItem? {
    switch kind {
    case .message:
      guard let message = try fetch(Message.self, id: id) else { return nil }
      return EmbeddableItem(
        kind: .message, id: id, content: message.content, speaker: message.speaker, time: message.createdAt,
        previous: try message.sessionID.flatMap {
          try previousTurnContent(sessionID: $0, time: message.createdAt, id: id)
        })
    case .memory:
      return try fetch(Memory.self, id: id).map {
        EmbeddableItem(kind: .memory, id: id, content: $0.content, time: $0.createdAt)
      }
    case .summary:
      return try fetch(Summary.self, id: id).map {
        EmbeddableItem(kind: .summary, id: id, content: $0.content, time: $0.startAt)
      }
    }
  }
}

/// An error of the database under a store (SQLite's, PostgreSQL's), with the database's own
/// message: the engine reports it as it is (for example for a bad row of an import).
public protocol StoreDatabaseError: Error {
  /// The database's message.
  var message: String { get }
}

/// One row of an export, read column by column without copying (see
/// `StoreSession.forEachExportedRow`). Valid only inside the callback it is passed to.
public typealias ExportedRow = Row

/// A row whose reference points at no row: its table, its rowid (nil when the table has none)
/// and the table it refers to.
public struct DanglingReference: Sendable, Hashable {
  public var table: String
  public var rowid: Int64?
  public var parent: String

  public init(table: String, rowid: Int64?, parent: String) {
    self.table = table
    self.rowid = rowid
    self.parent = parent
  }
}

extension ExportImportQueries {
  /// None known before commit (PostgreSQL reports a broken reference at commit).
  public func firstDanglingReference() throws -> DanglingReference? { nil }
  /// Unknown.
  public func userRows(in table: String, before rowid: Int64) throws -> Int? { nil }
}
