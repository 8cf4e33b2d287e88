import EngramEmbeddings
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

extension MemoryEngine {
  /// Reads the embedder settings of the database at `path` (a file path or a PostgreSQL
  /// URI) without opening an engine and without writing anything (a read-only connection).
  ///
  /// `user` matters on PostgreSQL, where each user records their own embedder.
  /// - Returns: empty settings for a database with no schema yet.
  /// - Throws: `StoreError.schemaTooNew` for a database from a newer Engram; `SQLiteError`
  ///   (`.cannotOpen`, `.notADatabase`) for a missing or foreign file.
  public static func storedEmbedderSettings(path: String, user: String = StoreUser.defaultID) throws
    -> StoredEmbedderSettings
  {
    let settings = try StoreFactory.inspect(StoreLocation(parsing: path), user: user, settings(in:))
    return settings ?? StoredEmbedderSettings()
  }

  /// Reads `user`'s embedder settings on a connection of `pool` (a server of many users on
  /// PostgreSQL, where each user's memory records its own embedder), as
  /// ``storedEmbedderSettings(path:user:)`` does without a connection of its own.
  /// - Throws: `StoreError.invalidUser`; pool and PostgreSQL errors.
  public static func storedEmbedderSettings(pool: any StoreConnectionPool, user: String) throws
    -> StoredEmbedderSettings
  {
    try StoreFactory.inspect(pool, user: user, settings(in:))
  }

  private static func settings(in session: any StoreSession) throws -> StoredEmbedderSettings {
    let model = try session.embeddingModel()
    return StoredEmbedderSettings(
      spec: try session.meta(EmbedderSpec.metaKey), modelID: model?.name, dimension: model?.dimension)
  }

  /// The embedder spec recorded in the database at `path`, or nil (see
  /// `storedEmbedderSettings(path:)`).
  public static func storedEmbedderSpec(path: String) throws -> String? {
    try storedEmbedderSettings(path: path).spec
  }
}
