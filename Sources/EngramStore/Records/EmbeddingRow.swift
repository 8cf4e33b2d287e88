import EngramCore
import Foundation

/// The embedding model configured in a database (`meta`).
public struct EmbeddingModel: Sendable, Hashable {
  /// The model's name.
  public var name: String
  /// Floats per vector.
  public var dimension: Int

  /// Creates a model description.
  public init(name: String, dimension: Int) {
    self.name = name
    self.dimension = dimension
  }
}

/// An embedding vector of a message, memory or summary (`embeddings`).
///
/// Vectors are stored as float32 in the host's byte order, which is little-endian on every
/// supported platform (x86-64, arm64).
public struct EmbeddingRow: StoredRecord, Hashable {
  /// The row id; nil before insertion.
  public var id: Int64?
  /// The owner's table.
  public var ownerKind: ItemKind
  /// The owner's id.
  public var ownerID: Int64
  /// The model that computed it (must match the database's).
  public var model: String
  /// Floats per vector (must match the database's and `vector.count`).
  public var dimension: Int
  /// The vector: finite values only.
  public var vector: [Float]
  /// When it was computed.
  public var createdAt: Date

  /// Creates a row; `dimension` is `vector.count`.
  public init(
    id: Int64? = nil, ownerKind: ItemKind, ownerID: Int64, model: String, vector: [Float], createdAt: Date
  ) {
    self.id = id
    self.ownerKind = ownerKind
    self.ownerID = ownerID
    self.model = model
    self.dimension = vector.count
    self.vector = vector
    self.createdAt = createdAt
  }

  /// The table.
  public static let tableName = "embeddings"
  /// The non-id columns, in binding order.
  public static let columns = ["owner_kind", "owner_id", "model", "dimension", "vector", "created_at"]
  /// The column time filters apply to.
  public static var timeColumn: String? { "created_at" }

  /// Refuses an empty vector, a length other than `dimension`, NaN or infinity, and a model
  /// or dimension other than the store's (`embeddingModel`), before any SQL runs.
  /// - Throws: as `validate(against:)`.
  public func validate(embeddingModel: () throws -> EmbeddingModel?) throws {
    try validate(against: try embeddingModel())
  }

  /// Refuses an empty vector, a length other than `dimension`, NaN or infinity, and a model
  /// or dimension other than `configured` (the store's; nil when none is configured).
  /// - Throws: `StoreError.emptyVector`, `.wrongDimension`, `.nonFiniteVector`,
  ///   `.embeddingModelNotConfigured`, `.modelMismatch`.
  public func validate(against configured: EmbeddingModel?) throws {
    guard !vector.isEmpty else { throw StoreError.emptyVector }
    guard vector.count == dimension else {
      throw StoreError.wrongDimension(expected: dimension, actual: vector.count)
    }
    if let index = vector.firstIndex(where: { !$0.isFinite }) {
      throw StoreError.nonFiniteVector(index: index)
    }
    guard let configured else { throw StoreError.embeddingModelNotConfigured }
    guard configured.name == model else {
      throw StoreError.modelMismatch(
        expectedModel: configured.name, expectedDimension: configured.dimension, actualModel: model,
        actualDimension: dimension)
    }
    guard configured.dimension == dimension else {
      throw StoreError.wrongDimension(expected: configured.dimension, actual: dimension)
    }
  }

  /// Appends the non-id columns: the model by name, the vector as plain float32 bytes.
  public func encode(to row: inout [SQLValue]) throws {
    row += [
      SQLValue(ownerKind), SQLValue(ownerID), SQLValue(model), SQLValue(dimension),
      .blob(vector.withUnsafeBytes { Array($0) }), SQLValue(createdAt),
    ]
  }

  /// As SQLite keeps the row (migration 8): the vector packed when that is smaller
  /// (`PackedFloat32`, lossless: 1,290 bytes instead of 1,536 for a MiniLM vector) and the
  /// model as NULL, which stands for the database's model (meta `embedding_model`, the only
  /// one its trigger admits): 38 bytes a row less. Three such MiniLM rows fit a 4 KiB page
  /// (two plain ones did).
  public func encodeStored(to row: inout [SQLValue]) throws {
    row += [
      SQLValue(ownerKind), SQLValue(ownerID), .null, SQLValue(dimension),
      .blob(vector.withUnsafeBufferPointer { EmbeddingCodec.encodeFloat32($0) }), SQLValue(createdAt),
    ]
  }

  /// The stored columns, a NULL model read as the database's.
  public static let selectList =
    "id, owner_kind, owner_id, coalesce(model, (SELECT value FROM meta WHERE key = 'embedding_model')), dimension, vector, created_at"

  /// Reads a row (id first).
  public init(row: some Row) throws {
    id = row.int64(at: 0)
    ownerKind = try row.enumValue(ItemKind.self, at: 1, table: "embeddings", column: "owner_kind")
    ownerID = row.int64(at: 2)
    model = row.string(at: 3)
    dimension = row.int(at: 4)
    let dimension = self.dimension
    vector = row.withBlob(at: 5) { EmbeddingCodec.decoded($0, dimension: dimension) } ?? []
    createdAt = row.date(at: 6)
  }
}

/// One embedding with its owner's metadata, as the bulk reader delivers it.
public struct EmbeddingEntry: Sendable, Hashable {
  /// The embedding's row id.
  public var embeddingID: Int64
  /// The owner's table.
  public var ownerKind: ItemKind
  /// The owner's id.
  public var ownerID: Int64
  /// The owner's session (nil when it has none, or the owner row is missing).
  public var sessionID: Int64?
  /// The owner's time in ms: messages.created_at, memories.created_at, summaries.start_at
  /// (0 when the owner row is missing).
  public var time: Int64
  /// For memories: their kind.
  public var memoryKind: MemoryKind?
  /// For memories: their user scope.
  public var scopeUser: String?
  /// For memories: their agent scope.
  public var scopeAgent: String?
  /// For memories: whether another memory superseded this one.
  public var superseded: Bool

  package init(
    embeddingID: Int64, ownerKind: ItemKind, ownerID: Int64, sessionID: Int64?, time: Int64,
    memoryKind: MemoryKind?, scopeUser: String?, scopeAgent: String?, superseded: Bool
  ) {
    self.embeddingID = embeddingID
    self.ownerKind = ownerKind
    self.ownerID = ownerID
    self.sessionID = sessionID
    self.time = time
    self.memoryKind = memoryKind
    self.scopeUser = scopeUser
    self.scopeAgent = scopeAgent
    self.superseded = superseded
  }
}

extension EmbeddingEntry {
  /// The columns `read(_:scratch:_:)` reads, in its order, over `embeddings e` left-joined
  /// with its owner as `m` (turns), `mm` (memories) and `s` (summaries): each store adds the
  /// joins and the conditions its keys want.
  package static let selectColumns = """
    e.id, CASE e.owner_kind WHEN 'message' THEN 0 WHEN 'memory' THEN 1 ELSE 2 END, e.owner_id,
      coalesce(m.session_id, mm.session_id, s.session_id),
      coalesce(m.created_at, mm.created_at, s.start_at, 0),
      mm.kind, mm.scope_user, mm.scope_agent, mm.superseded_by IS NOT NULL, e.vector, e.dimension
    """

  /// Reads one row of `selectColumns` and calls `body` with its entry and its vector, a buffer
  /// valid only during the call: the row's own bytes when they are aligned plain float32,
  /// else decoded into `scratch` (reused from row to row; empty when the bytes cannot be
  /// decoded). Strings are read for memories' scopes only.
  @inline(__always)
  package static func read<R: Row>(
    _ row: R, scratch: inout [Float], _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void
  ) throws {
    let kinds: [ItemKind] = [.message, .memory, .summary]
    let kind = kinds[min(max(row.int(at: 1), 0), 2)]
    var entry = EmbeddingEntry(
      embeddingID: row.int64(at: 0), ownerKind: kind, ownerID: row.int64(at: 2),
      sessionID: row.optionalInt64(at: 3), time: row.int64(at: 4), memoryKind: nil, scopeUser: nil,
      scopeAgent: nil, superseded: false)
    if kind == .memory {
      entry.memoryKind = row.optionalString(at: 5).flatMap(MemoryKind.init(rawValue:))
      entry.scopeUser = row.optionalString(at: 6)
      entry.scopeAgent = row.optionalString(at: 7)
      entry.superseded = row.bool(at: 8)
    }
    let dimension = row.int(at: 10)
    try row.withBlob(at: 9) { raw in
      let count = raw.count / MemoryLayout<Float>.stride
      guard let base = raw.baseAddress, dimension > 0 else {
        return try body(entry, UnsafeBufferPointer(start: nil, count: 0))
      }
      if raw.count == 4 * dimension && Int(bitPattern: base) % MemoryLayout<Float>.alignment == 0 {
        try body(entry, UnsafeBufferPointer(start: base.assumingMemoryBound(to: Float.self), count: count))
      } else {
        // A blob stored inside a page may sit at any byte offset: misaligned plain rows, packed
        // rows and int8 rows are decoded into the one reused buffer.
        if scratch.count < dimension { scratch = [Float](repeating: 0, count: dimension) }
        try scratch.withUnsafeMutableBufferPointer { destination in
          let decoded = EmbeddingCodec.decode(raw, dimension: dimension, into: destination)
          try body(entry, UnsafeBufferPointer(start: destination.baseAddress, count: decoded ? dimension : 0))
        }
      }
    }
  }
}

extension EmbeddingQueries {
  /// Sets the embedding model of the store (SQLite: the file's; PostgreSQL: the user's). The
  /// same model again is a no-op.
  ///
  /// - Parameter replace: when true, a different model replaces the configured one and every
  ///   embedding it governed is deleted (they belong to the old model's space).
  /// - Throws: `StoreError.invalidEmbeddingModel`, `StoreError.modelMismatch` when another
  ///   model is configured and `replace` is false.
  public func configureEmbeddingModel(model: String, dimension: Int, replace: Bool = false) throws {
    guard !model.isEmpty, dimension > 0 else {
      throw StoreError.invalidEmbeddingModel(model: model, dimension: dimension)
    }
    try atomically {
      if let current = try embeddingModel() {
        if current.name == model && current.dimension == dimension { return }
        guard replace else {
          throw StoreError.modelMismatch(
            expectedModel: current.name, expectedDimension: current.dimension, actualModel: model,
            actualDimension: dimension)
        }
        try execute(scoped: "DELETE FROM embeddings WHERE \(dialect.embeddingModelScope)", [])
      }
      try setMeta("embedding_model", model)
      try setMeta("embedding_dimension", String(dimension))
    }
  }

  /// The embedding of (`ownerKind`, `ownerID`), or nil.
  public func embedding(ownerKind: ItemKind, ownerID: Int64) throws -> EmbeddingRow? {
    try rows(
      scoped: """
        SELECT \(dialect.selectList(EmbeddingRow.self)) FROM embeddings
        WHERE owner_kind = $2 AND owner_id = $3 AND \(dialect.user) = $1
        """, [SQLValue(ownerKind), .integer(ownerID)]
    ) { try EmbeddingRow(row: $0) }.first
  }

  /// Deletes the embedding of (`ownerKind`, `ownerID`); returns whether it existed.
  @discardableResult
  public func deleteEmbedding(ownerKind: ItemKind, ownerID: Int64) throws -> Bool {
    try execute(
      scoped: "DELETE FROM embeddings WHERE \(dialect.user) = $1 AND owner_kind = $2 AND owner_id = $3",
      [SQLValue(ownerKind), .integer(ownerID)]) > 0
  }

  /// Owners of `kind` that have no embedding yet, in id order (for background embedding).
  public func ownersWithoutEmbedding(_ kind: ItemKind, limit: Int) throws -> [Int64] {
    try rows(
      scoped: """
        SELECT t.id FROM \(kind.sourceTable) t WHERE t.\(dialect.user) = $1 AND NOT EXISTS
        (SELECT 1 FROM embeddings e WHERE \(dialect.sameUser("e")) AND e.owner_kind = $2 AND e.owner_id = t.id)
        ORDER BY t.id LIMIT $3
        """, [SQLValue(kind), SQLValue(max(0, limit))]
    ) { $0.int64(at: 0) }
  }

  /// The highest embedding id of the user (0 when there is none).
  public func maxEmbeddingID() throws -> Int64 {
    try integer(scoped: "SELECT coalesce(max(id), 0) FROM embeddings WHERE \(dialect.user) = $1") ?? 0
  }
}

extension Connection {
  /// Inserts or replaces the embedding of (`ownerKind`, `ownerID`); returns its row id.
  /// - Throws: the `EmbeddingRow.validate(against:)` errors; `SQLiteError`.
  @discardableResult
  public func upsertEmbedding(_ row: EmbeddingRow) throws -> Int64 {
    try row.validate(against: try embeddingModel())
    let statement = try cachedStatement(
      """
      INSERT INTO embeddings (owner_kind, owner_id, model, dimension, vector, created_at, user_id)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
      ON CONFLICT (owner_kind, owner_id) DO UPDATE SET
        model = excluded.model, dimension = excluded.dimension, vector = excluded.vector,
        created_at = excluded.created_at
      WHERE embeddings.user_id = excluded.user_id
      RETURNING id
      """)
    try statement.bind(try row.storedValues(), startingAt: 1)
    try statement.bind(user, at: 7)
    // No row back: the owner's embedding belongs to another user, and is left alone.
    guard let id = try statement.first({ $0.int64(at: 0) }) else {
      throw StoreError.notFound(table: row.ownerKind.sourceTable, id: row.ownerID)
    }
    return id
  }

  /// The counter bumped by every change to `embeddings`; a vector-index snapshot is valid
  /// only for the generation it was written at.
  public func embeddingGeneration() throws -> Int64 {
    try scalarInt("SELECT generation FROM embedding_generation WHERE id = 1") ?? 0
  }

  /// The embedding generation and, when it can be trusted, the random epoch drawn when the
  /// embeddings last changed (`meta.embedding_epoch` = "generation:hex").
  ///
  /// The generation alone is a counter: two copies of one database that change in
  /// different ways reach the same number. The epoch is redrawn by every change (see
  /// `installEmbeddingEpochTrigger()`), so a snapshot stamped with it belongs to exactly
  /// one history. An epoch tagged with another generation was left behind by a writer
  /// that does not maintain it: it is ignored (nil), and no snapshot is trusted.
  public func embeddingState() throws -> (generation: Int64, epoch: String?) {
    let generation = try embeddingGeneration()
    guard let value = try meta(Self.embeddingEpochKey),
      let separator = value.firstIndex(of: ":"),
      Int64(value[..<separator]) == generation
    else { return (generation, nil) }
    return (generation, String(value[value.index(after: separator)...]))
  }

  /// The `meta` key of the embedding epoch.
  public static let embeddingEpochKey = "embedding_epoch"

  /// Draws a new embedding epoch for the current generation (for a database last changed
  /// by a writer that did not keep one).
  public func renewEmbeddingEpoch() throws {
    try run(
      """
      INSERT INTO meta (key, value)
      SELECT ?1, generation || ':' || lower(hex(randomblob(8))) FROM embedding_generation WHERE id = 1
      ON CONFLICT (key) DO UPDATE SET value = excluded.value
      """, [.text(Self.embeddingEpochKey)])
  }

  /// Installs, on this connection only, the trigger that redraws the embedding epoch at
  /// every change of the embedding generation (a TEMP trigger: the file's schema is not
  /// changed, and a writer without it leaves an epoch that `embeddingState()` ignores).
  public func installEmbeddingEpochTrigger() throws {
    try execute(
      """
      CREATE TEMP TRIGGER IF NOT EXISTS engram_embedding_epoch
      AFTER UPDATE OF generation ON main.embedding_generation
      BEGIN
        INSERT INTO meta (key, value)
        VALUES ('\(Self.embeddingEpochKey)', NEW.generation || ':' || lower(hex(randomblob(8))))
        ON CONFLICT (key) DO UPDATE SET value = excluded.value;
      END
      """)
  }

  /// Calls `body` for every embedding, in embedding id order, with its owner's metadata and
  /// its vector as a buffer valid only during the call (no per-row allocation; strings are
  /// read for memories' scopes only).
  ///
  /// - Parameter ownerKinds: which owners to include (all by default).
  /// - Complexity: one pass over `embeddings` with a primary-key lookup of each owner.
  public func forEachEmbedding(
    ownerKinds: Set<ItemKind> = Set(ItemKind.allCases),
    _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void
  ) throws {
    let statement = try cachedStatement(
      """
      \(Self.embeddingEntrySelect)
      WHERE +e.user_id = ?4 AND ((?1 AND e.owner_kind = 'message') OR (?2 AND e.owner_kind = 'memory')
        OR (?3 AND e.owner_kind = 'summary'))
      ORDER BY e.id
      """)
    try statement.bind(ownerKinds.contains(.message), at: 1)
    try statement.bind(ownerKinds.contains(.memory), at: 2)
    try statement.bind(ownerKinds.contains(.summary), at: 3)
    try statement.bind(user, at: 4)
    try forEachEmbeddingEntry(statement, body)
  }

  /// The columns `forEachEmbeddingEntry` reads, with the owner joins; a WHERE clause follows.
  ///
  /// `NOT INDEXED`: the rows are read in id order from the table itself (a scan, a range or
  /// id seeks). Given the choice, SQLite read them through the (owner_kind, owner_id) index
  /// for the owner-kind test and then sorted the whole result, vectors included, by id: a
  /// temporary b-tree of every vector, which made a load without a snapshot superlinear.
  static let embeddingEntrySelect = """
    SELECT \(EmbeddingEntry.selectColumns)
    FROM embeddings e NOT INDEXED
    LEFT JOIN messages m ON e.owner_kind = 'message' AND m.id = e.owner_id
    LEFT JOIN memories mm ON e.owner_kind = 'memory' AND mm.id = e.owner_id
    LEFT JOIN summaries s ON e.owner_kind = 'summary' AND s.id = e.owner_id
    """

  /// Steps `statement` (a bound `embeddingEntrySelect` query) and calls `body` per row, as
  /// `forEachEmbedding` describes.
  func forEachEmbeddingEntry(
    _ statement: Statement, _ body: (EmbeddingEntry, UnsafeBufferPointer<Float>) throws -> Void
  ) throws {
    var scratch: [Float] = []
    try statement.forEachRow { try EmbeddingEntry.read($0, scratch: &scratch, body) }
  }
}
