import Foundation

/// How a search ranks its candidates.
public enum SearchMode: String, Sendable, CaseIterable, Codable {
  /// Full-text BM25 and vector cosine, fused.
  case hybrid
  /// Vector cosine only.
  case vector
  /// Full-text BM25 only.
  case keyword
}

/// Restrictions on which items a search may return. Empty fields restrict nothing.
public struct SearchFilters: Sendable, Equatable {
  /// Only these kinds (all kinds when empty).
  public var kinds: Set<ItemKind>
  /// Only items of this session (by the session's external name or numeric id).
  public var session: String?
  /// Only memories of this user scope.
  public var scopeUser: String?
  /// Only items at or after this time.
  public var since: Date?
  /// Only items before this time.
  public var until: Date?
  /// Whether superseded memories may be returned (their newer version usually is).
  public var includeSuperseded: Bool
  /// Never items of these sessions (by id): an agent leaves out its own dialogue.
  public var excludedSessions: Set<Int64>

  public init(
    kinds: Set<ItemKind> = [], session: String? = nil, scopeUser: String? = nil, since: Date? = nil,
    until: Date? = nil, includeSuperseded: Bool = false, excludedSessions: Set<Int64> = []
  ) {
    self.excludedSessions = excludedSessions
    self.kinds = kinds
    self.session = session
    self.scopeUser = scopeUser
    self.since = since
    self.until = until
    self.includeSuperseded = includeSuperseded
  }
}

/// One ranked search result: what a search returns, what a turn's context carries, and what
/// an agent's skills and answers quote.
public struct SearchHit: Sendable, Hashable {
  /// The item's kind.
  public var kind: ItemKind
  /// What a memory records (fact, preference, ...); nil for turns and summaries.
  public var memoryKind: MemoryKind?
  /// The item's id in its table.
  public var id: Int64
  /// The item's text.
  public var text: String
  /// The session's id, when the item belongs to one.
  public var sessionID: Int64?
  /// The speaker, for conversation turns.
  public var speaker: String?
  /// When the item happened (turn time, memory creation, summary start).
  public var timestamp: Date
  /// The BM25 score (higher is better), when full-text search found it.
  public var bm25: Double?
  /// The cosine similarity to the query, when vector search found it.
  public var cosine: Double?
  /// The fused score that ranked it (after the hybrid re-ranker, the fused score of the
  /// place the re-ranker gave it, so scores fall down the list on one scale).
  public var score: Double
  /// Which retrievers found it (`keyword`, `vector`), what else raised it (`neighbour`,
  /// `speaker`), and `approximate` when its vector candidates came from the approximate tier
  /// without a proof that they are the exact top candidates.
  public var provenance: [String]
  /// The item's metadata (e.g. LoCoMo `dia_id`).
  public var metadata: [String: JSONValue]

  /// Creates a hit.
  public init(
    kind: ItemKind, id: Int64, text: String, sessionID: Int64? = nil, speaker: String? = nil, timestamp: Date,
    bm25: Double? = nil, cosine: Double? = nil, score: Double = 0, provenance: [String] = [],
    metadata: [String: JSONValue] = [:], memoryKind: MemoryKind? = nil
  ) {
    self.kind = kind
    self.memoryKind = memoryKind
    self.id = id
    self.text = text
    self.sessionID = sessionID
    self.speaker = speaker
    self.timestamp = timestamp
    self.bm25 = bm25
    self.cosine = cosine
    self.score = score
    self.provenance = provenance
    self.metadata = metadata
  }
}
