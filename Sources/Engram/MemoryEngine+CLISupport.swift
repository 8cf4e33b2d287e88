import EngramStore
import Foundation

/// What the `meta` table says about a database before an engine opens it: which embedder
/// made its vectors, so a tool can build the same one.
public struct StoredEmbedderSettings: Sendable, Equatable {
  /// The embedder spec a tool recorded (`meta.embedder_spec`), if any.
  public var spec: String?
  /// The embedding model recorded by the engine (`meta.embedding_model`), if any.
  public var modelID: String?
  /// The embedding dimension recorded by the engine, if any.
  public var dimension: Int?
}

/// Sizes of the in-memory vector index.
public struct VectorIndexStatistics: Sendable, Equatable {
  /// Live rows (tombstones excluded).
  public var rows: Int
  /// Rows deleted but not yet reclaimed.
  public var tombstones: Int
  /// Bytes the index holds in memory.
  public var bytes: Int
}

extension MemoryEngine {
  /// The `meta` key under which tools record how to build the database's embedder.
  public static let embedderSpecKey = "embedder_spec"

  /// Reads the embedder settings of the database at `path` without opening an engine and
  /// without writing anything (a read-only connection).
  ///
  /// - Returns: empty settings for a database with no schema yet.
  /// - Throws: `StoreError.schemaTooNew` for a database from a newer Engram; `SQLiteError`
  ///   (`.cannotOpen`, `.notADatabase`) for a missing or foreign file.
  public static func storedEmbedderSettings(path: String) throws -> StoredEmbedderSettings {
    let connection = try Connection(path: path, mode: .readOnlyNoTrace)
    guard try Migrator.checkVersion(connection) > 0 else { return StoredEmbedderSettings() }
    return try connection.transaction(.deferred) {
      let model = try connection.embeddingModel()
      return StoredEmbedderSettings(
        spec: try connection.meta(embedderSpecKey), modelID: model?.name, dimension: model?.dimension)
    }
  }

  /// The embedder spec recorded in the database at `path`, or nil (see
  /// `storedEmbedderSettings(path:)`).
  public static func storedEmbedderSpec(path: String) throws -> String? {
    try storedEmbedderSettings(path: path).spec
  }

  /// Records how this database's embedder is built (`meta.embedder_spec`).
  /// - Throws: `EngramError.emptyText` for a blank spec; store errors.
  public func setEmbedderSpec(_ spec: String) throws {
    try checkOpen()
    guard !spec.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw EngramError.emptyText }
    try database.write { try $0.setMeta(Self.embedderSpecKey, spec) }
  }

  /// A value of the `meta` table (`last_compaction`, `created_at`, ...), or nil.
  public func metaValue(_ key: String) throws -> String? {
    try checkOpen()
    return try database.read { try $0.meta(key) }
  }

  /// How many memories of each kind are stored (superseded ones included); kinds with
  /// none are absent.
  public func memoryCountsByKind() throws -> [MemoryKind: Int] {
    try checkOpen()
    let rows = try database.read { connection in
      try connection.prepare("SELECT kind, count(*) FROM memories GROUP BY kind").map {
        ($0.string(at: 0), Int($0.int64(at: 1)))
      }
    }
    var counts: [MemoryKind: Int] = [:]
    for (kind, count) in rows {
      if let kind = MemoryKind(rawValue: kind) { counts[kind, default: 0] += count }
    }
    return counts
  }

  /// Rows and bytes of the in-memory vector index.
  public var vectorIndexStatistics: VectorIndexStatistics {
    let index = self.index
    return VectorIndexStatistics(
      rows: index.count, tombstones: index.tombstoneCount, bytes: index.memoryBytes)
  }

  /// The stored enabled flag of a skill (`skill_state`), or nil when never set.
  public func skillEnabled(id: String) throws -> Bool? {
    try checkOpen()
    return try database.read { try $0.skillState(skillID: id)?.enabled }
  }

  /// Stores whether a skill is enabled.
  public func setSkillEnabled(_ enabled: Bool, id: String, at date: Date = Date()) throws {
    try checkOpen()
    try database.write {
      try $0.setSkillState(SkillState(skillID: id, enabled: enabled, updatedAt: Timestamp.milliseconds(date)))
    }
  }
}
