import Foundation

/// Where a memory lives and how the engine reaches it: the SQLite file (`Database`) or a
/// PostgreSQL database. The engine works only through this protocol and `StoreSession`.
///
/// A store is opened for one user (`user`, see `StoreUser`): every session it hands out
/// reads and writes only that user's rows, so many users can share one database and never
/// see each other's memories.
///
/// Operations that only some backends have (a WAL checkpoint, `VACUUM`, a vector snapshot
/// file beside the database...) are asked for through `capabilities` and `maintain(_:)`;
/// a backend without one throws `StoreError.unsupported(operation:store:)`.
public protocol MemoryStore: AnyObject, Sendable {
  /// Where the store lives, for messages (a file path, or a connection URI without its
  /// password).
  var locationDescription: String { get }
  /// The user whose rows this store's sessions see (`StoreUser.defaultID` when none given).
  var user: String { get }
  /// Whether the store was opened read-only: `writeTransaction` then throws
  /// `StoreError.databaseReadOnly`, and nothing is ever written.
  var isReadOnly: Bool { get }
  /// What the backend can do beyond the sessions' operations.
  var capabilities: StoreCapabilities { get }

  /// Runs `body` in one read transaction (one consistent snapshot of committed data).
  /// - Throws: `StoreError.closed`, the backend's errors, or what `body` throws.
  func readTransaction<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T
  /// Runs `body` in one write transaction: committed when it returns, rolled back when it
  /// throws (all or nothing). Writers are serialized.
  /// - Throws: `StoreError.databaseReadOnly`, `StoreError.closed`, the backend's errors
  ///   (nothing is written then), or what `body` throws.
  func writeTransaction<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T
  /// `writeTransaction` for bookkeeping the next writer can do as well (access statistics,
  /// the vector snapshot's stamp): when another process holds the write lock it fails at
  /// once (SQLite: `SQLiteError.Code.busy`, nothing written) instead of waiting for it.
  /// - Throws: as `writeTransaction`.
  func writeTransactionWithoutWaiting<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T
  /// Runs a maintenance operation (outside any transaction).
  /// - Throws: `StoreError.unsupported` when `capabilities` lacks it, the backend's errors.
  func maintain(_ operation: StoreMaintenance) throws
  /// Whether each full-text index agrees with its source rows; `deep` checks every entry
  /// (on SQLite that runs on the writer, outside a transaction, or on a private copy of each
  /// index when the database is read-only).
  func fullTextConsistency(deep: Bool) throws -> [FTSConsistency]
  /// The file the engine keeps its vector-index snapshot in, when the backend keeps one
  /// beside its data (`capabilities.contains(.vectorSnapshotFile)`), else nil. One file per
  /// user.
  var vectorSnapshotURL: URL? { get }
  /// How searches find their candidates in this store (see `CandidateSource`).
  var candidateSource: any CandidateSource { get }
  /// The newest embedding generation of the store's user as a feed following it knows it,
  /// without asking the database (PostgreSQL's `LISTEN/NOTIFY`); nil when no feed follows it
  /// (every SQLite store: the caller reads `StoreSession.embeddingGeneration()` itself).
  func followedEmbeddingGeneration() -> Int64?
  /// The bytes the store occupies (SQLite: the file and its WAL; a shared server: an
  /// estimate of this user's rows), for compaction reports. 0 when unknown.
  func storageBytes() -> Int
  /// Closes the store (waiting for running calls); later calls throw `StoreError.closed`.
  /// Closing twice is harmless.
  func close()
}

extension MemoryStore {
  /// `writeTransaction`: a store whose writers never wait for another process's lock (a
  /// server serializes them row by row) has nothing to skip.
  public func writeTransactionWithoutWaiting<T: Sendable>(_ body: (any StoreSession) throws -> T) throws -> T
  {
    try writeTransaction(body)
  }

  /// No feed: the generation is read from the database.
  public func followedEmbeddingGeneration() -> Int64? { nil }
}

/// What a store can do beyond the operations of `StoreSession`.
public struct StoreCapabilities: OptionSet, Sendable, Hashable {
  public let rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }

  /// `StoreMaintenance.checkpoint`: fold the write-ahead log into the main file.
  public static let checkpoint = StoreCapabilities(rawValue: 1 << 0)
  /// `StoreMaintenance.vacuum`: rewrite the file to give free pages back.
  public static let vacuum = StoreCapabilities(rawValue: 1 << 1)
  /// `StoreMaintenance.optimizeFullText`: merge the full-text index segments.
  public static let optimizeFullText = StoreCapabilities(rawValue: 1 << 2)
  /// A vector-index snapshot file beside the data (`MemoryStore.vectorSnapshotURL`).
  public static let vectorSnapshotFile = StoreCapabilities(rawValue: 1 << 3)
  /// Other processes may change the data: the engine checks the embedding generation
  /// before a search (every store so far).
  public static let sharedWriters = StoreCapabilities(rawValue: 1 << 4)
}

/// Maintenance operations some stores have (see `StoreCapabilities`).
public enum StoreMaintenance: String, Sendable, Hashable, CaseIterable {
  /// Fold the write-ahead log into the main file and truncate it.
  case checkpoint
  /// Rewrite the store to give free space back.
  case vacuum
  /// Merge the full-text index segments.
  case optimizeFullText

  /// The capability the operation needs.
  public var capability: StoreCapabilities {
    switch self {
    case .checkpoint: .checkpoint
    case .vacuum: .vacuum
    case .optimizeFullText: .optimizeFullText
    }
  }
}

/// The user a store is opened for: every row belongs to exactly one user.
public enum StoreUser {
  /// The user of memories written without one (and of every row of a database from before
  /// users existed).
  public static let defaultID = "default"
  /// The longest user id, in UTF-8 bytes.
  public static let maximumLength = 128

  /// `id` when it is a valid user id: 1...128 bytes of ASCII letters, digits, `.`, `_`,
  /// `-` and `@`, not starting with `.` or `-`.
  /// - Throws: `StoreError.invalidUser`.
  public static func validated(_ id: String) throws -> String {
    let bytes = Array(id.utf8)
    guard !bytes.isEmpty, bytes.count <= maximumLength, bytes[0] != UInt8(ascii: "."),
      bytes[0] != UInt8(ascii: "-"),
      bytes.allSatisfy({ byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
          || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
          || byte == UInt8(ascii: "@")
      })
    else { throw StoreError.invalidUser(id) }
    return id
  }
}
