/// The metadata each row carries so that searches can be filtered without touching SQL.
public struct VectorMetadata: Sendable, Hashable {
  /// How many kind tags there are: a kind is a caller-defined tag below this limit (the
  /// index knows nothing of what the tags mean; each has its own posting list).
  public static let kindLimit: UInt8 = 8

  /// The caller's tag for what the vector embeds, below `kindLimit`.
  public var kind: UInt8
  /// The conversation session the record belongs to (0 when none).
  public var session: Int64
  /// The user or agent scope the record is visible to (0 when global).
  public var scope: Int64
  /// The record's time (any monotonic unit the caller chooses, e.g. Unix milliseconds).
  public var timestamp: Int64

  /// Creates metadata; everything but the kind defaults to 0.
  /// - Precondition: `kind < VectorMetadata.kindLimit`.
  public init(kind: UInt8, session: Int64 = 0, scope: Int64 = 0, timestamp: Int64 = 0) {
    precondition(kind < Self.kindLimit, "vector kind tags are below \(Self.kindLimit)")
    self.kind = kind
    self.session = session
    self.scope = scope
    self.timestamp = timestamp
  }
}

/// One search result: a row id and its cosine similarity to the query.
public struct VectorHit: Sendable, Hashable {
  /// The id given when the vector was added.
  public var id: Int64
  /// Cosine similarity in [-1, 1] (a dot product of unit vectors).
  public var score: Float

  /// Creates a hit.
  public init(id: Int64, score: Float) {
    self.id = id
    self.score = score
  }
}

/// Restricts a search to rows whose metadata matches every condition given (nil = any).
///
/// The index gathers the allowed rows from per-kind, per-session and per-scope posting
/// lists (or the id map for an allow-list) and scores only those, so a selective filter
/// costs a fraction of a full scan.
public struct VectorFilter: Sendable, Hashable {
  /// Allowed kind tags.
  public var kinds: Set<UInt8>?
  /// Allowed sessions.
  public var sessions: Set<Int64>?
  /// Allowed scopes.
  public var scopes: Set<Int64>?
  /// Allowed timestamps (inclusive).
  public var timeRange: ClosedRange<Int64>?
  /// Allowed ids.
  public var ids: Set<Int64>?

  /// Creates a filter; omitted conditions allow everything.
  public init(
    kinds: Set<UInt8>? = nil, sessions: Set<Int64>? = nil, scopes: Set<Int64>? = nil,
    timeRange: ClosedRange<Int64>? = nil, ids: Set<Int64>? = nil
  ) {
    self.kinds = kinds
    self.sessions = sessions
    self.scopes = scopes
    self.timeRange = timeRange
    self.ids = ids
  }

  /// Whether the filter allows every row.
  public var isEmpty: Bool {
    kinds == nil && sessions == nil && scopes == nil && timeRange == nil && ids == nil
  }
}
