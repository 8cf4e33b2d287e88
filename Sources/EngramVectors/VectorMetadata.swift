/// What a vector row belongs to in the memory store.
public enum VectorKind: UInt8, Sendable, Hashable, CaseIterable {
  /// A message of the conversation log.
  case message = 0
  /// A memory (fact, preference, note).
  case memory = 1
  /// A structured summary.
  case summary = 2
}

/// The metadata each row carries so that searches can be filtered without touching SQL.
public struct VectorMetadata: Sendable, Hashable {
  /// The kind of record the vector embeds.
  public var kind: VectorKind
  /// The conversation session the record belongs to (0 when none).
  public var session: Int64
  /// The user or agent scope the record is visible to (0 when global).
  public var scope: Int64
  /// The record's time (any monotonic unit the caller chooses, e.g. Unix milliseconds).
  public var timestamp: Int64

  /// Creates metadata; everything but the kind defaults to 0.
  public init(kind: VectorKind, session: Int64 = 0, scope: Int64 = 0, timestamp: Int64 = 0) {
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
  /// Allowed owner kinds.
  public var kinds: Set<VectorKind>?
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
    kinds: Set<VectorKind>? = nil, sessions: Set<Int64>? = nil, scopes: Set<Int64>? = nil,
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
