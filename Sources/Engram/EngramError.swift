import Foundation

/// Why an engine operation failed. Store, index and embedder errors pass through with
/// their own types; these are the engine's own rules.
public enum EngramError: Error, Sendable, Equatable {
  /// The configuration is invalid (`field` says which value).
  case invalidConfiguration(field: String, reason: String)
  /// The database's vectors were made by another model than the configured embedder.
  case modelMismatch(database: String, databaseDimension: Int, configured: String, configuredDimension: Int)
  /// A search or write was given empty text.
  case emptyText
  /// A memory's text is longer than `TurnText.maxBytes` (`bytes` of UTF-8); nothing was
  /// stored. (A longer conversation turn or note is stored in parts.)
  case textTooLong(bytes: Int, limit: Int)
  /// `k` must be at least 1.
  case invalidK(Int)
  /// A token budget must be positive.
  case invalidBudget(Int)
  /// No item of this kind has this id.
  case notFound(kind: ItemKind, id: Int64)
  /// The embedder returned a vector of the wrong dimension or count.
  case embedderContract(expected: Int, actual: Int)
  /// The embedder returned a vector with NaN or infinity, or of zero length (`index`: the
  /// text's position in its batch); nothing was stored.
  case invalidEmbedding(index: Int, reason: InvalidEmbeddingReason)
  /// An export file line is not valid (1-based line number).
  case malformedExport(line: Int, reason: String)
  /// An export's embedding line (1-based line number) holds a vector the index cannot
  /// hold; nothing was imported.
  case invalidExportVector(line: Int, reason: InvalidEmbeddingReason)
  /// Importing an export needs an empty database.
  case importTargetNotEmpty(path: String)
  /// The engine was closed.
  case closed
  /// The operation was cancelled between batches; nothing of the unfinished batch was stored.
  case cancelled
  /// Other writers kept changing the memory while `reindex` embedded it, `rounds` times in a
  /// row; nothing was changed (run it again when the memory is quieter).
  case changedDuringReindex(rounds: Int)
  /// `reindex` changes the embedding model of the whole store, but other users (`users`)
  /// have rows in it that this engine's user cannot re-embed; nothing was changed.
  case reindexNeedsEveryUser(users: [String])
  /// Another process re-embedded the memory with `model` (`dimension`-d) while this engine
  /// was open: its index and embedder no longer fit; open the memory again.
  case embedderChangedElsewhere(model: String, dimension: Int)
}

extension EngramError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .invalidConfiguration(let field, let reason): return "invalid configuration \(field): \(reason)"
    case .modelMismatch(let database, let databaseDimension, let configured, let configuredDimension):
      return
        "the memory's vectors come from \(database) (\(databaseDimension)-d) but the configured embedder is "
        + "\(configured) (\(configuredDimension)-d); reindex the memory to switch models"
    case .emptyText: return "the text is empty"
    case .textTooLong(let bytes, let limit):
      return
        "the text is \(bytes) bytes, more than the \(limit) a memory holds; nothing was stored "
        + "(a long text is stored in parts as conversation turns or Markdown notes: `engram ingest`)"
    case .invalidK(let k): return "k must be at least 1 (got \(k))"
    case .invalidBudget(let budget): return "the token budget must be positive (got \(budget))"
    case .notFound(let kind, let id): return "no \(kind.rawValue) with id \(id)"
    case .embedderContract(let expected, let actual):
      return "the embedder returned \(actual) values where \(expected) were expected"
    case .invalidEmbedding(let index, let reason):
      return
        "the embedder returned \(reason.rawValue) for text \(index); nothing was stored (check the model)"
    case .malformedExport(let line, let reason): return "export line \(line): \(reason)"
    case .invalidExportVector(let line, let reason):
      return "export line \(line): the embedding vector has \(reason.rawValue); nothing was imported"
    case .importTargetNotEmpty(let path): return "\(path) already holds a memory; import into a new file"
    case .closed: return "the memory is closed"
    case .cancelled: return "cancelled"
    case .changedDuringReindex(let rounds):
      return
        "other writers changed the memory \(rounds) times while reindex embedded it; nothing was changed, "
        + "run reindex again when the memory is quieter"
    case .embedderChangedElsewhere(let model, let dimension):
      return
        "another process switched this memory to \(model) (\(dimension)-d) while it was open here; "
        + "restart to search it with the new model"
    case .reindexNeedsEveryUser(let users):
      return
        "the memory is shared with other users (\(users.joined(separator: ", "))) and reindex switches the "
        + "model of all of them; nothing was changed (export each user, reindex, and import them)"
    }
  }
}

/// What is wrong with a vector an embedder returned.
public enum InvalidEmbeddingReason: String, Sendable, Equatable {
  /// A component is NaN or infinite.
  case nonFinite = "NaN or infinity"
  /// Every component is zero, so the vector has no direction.
  case zero = "a zero vector"
  /// A component so large that the vector's length overflows (the index would score it 0).
  case overflow = "a component so large that its length overflows"
  /// The wrong number of components for the memory's embedder.
  case wrongDimension = "the wrong number of components for this memory's embedder"
}
