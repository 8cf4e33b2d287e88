import EngramCore
import Foundation

/// A long-term memory (`memories`).
public struct Memory: StoredRecord, Hashable {
  /// The row id; nil before insertion.
  public var id: Int64?
  /// What it records.
  public var kind: MemoryKind
  /// The text (indexed for full-text search).
  public var content: String
  /// 0...1; validated before any SQL runs.
  public var importance: Double
  /// Creation.
  public var createdAt: Date
  /// Last change.
  public var updatedAt: Date
  /// Last retrieval.
  public var lastAccessedAt: Date?
  /// How often it was retrieved.
  public var accessCount: Int
  /// Start of validity.
  public var validFrom: Date?
  /// End of validity.
  public var validUntil: Date?
  /// The memory that replaced this one.
  public var supersededBy: Int64?
  /// The messages it was drawn from (stored as a JSON array).
  public var sourceMessageIDs: [Int64]
  /// The user it belongs to.
  public var scopeUser: String?
  /// The agent it belongs to.
  public var scopeAgent: String?
  /// The session it came from.
  public var sessionID: Int64?
  /// Tags (stored as a JSON array).
  public var tags: [String]
  /// A JSON object (text).
  public var metadata: String

  /// Creates a memory.
  public init(
    id: Int64? = nil, kind: MemoryKind, content: String, importance: Double = 0.5, createdAt: Date,
    updatedAt: Date? = nil, lastAccessedAt: Date? = nil, accessCount: Int = 0, validFrom: Date? = nil,
    validUntil: Date? = nil, supersededBy: Int64? = nil, sourceMessageIDs: [Int64] = [],
    scopeUser: String? = nil, scopeAgent: String? = nil, sessionID: Int64? = nil, tags: [String] = [],
    metadata: String = "{}"
  ) {
    self.id = id
    self.kind = kind
    self.content = content
    self.importance = importance
    self.createdAt = createdAt
    self.updatedAt = updatedAt ?? createdAt
    self.lastAccessedAt = lastAccessedAt
    self.accessCount = accessCount
    self.validFrom = validFrom
    self.validUntil = validUntil
    self.supersededBy = supersededBy
    self.sourceMessageIDs = sourceMessageIDs
    self.scopeUser = scopeUser
    self.scopeAgent = scopeAgent
    self.sessionID = sessionID
    self.tags = tags
    self.metadata = metadata
  }

  /// The table.
  public static let tableName = "memories"
  /// The non-id columns, in binding order.
  public static let columns = [
    "kind", "content", "importance", "created_at", "updated_at", "last_accessed_at", "access_count",
    "valid_from", "valid_until", "superseded_by", "source_message_ids", "scope_user", "scope_agent",
    "session_id", "tags", "metadata",
  ]
  /// The column time filters apply to.
  public static var timeColumn: String? { "created_at" }
  /// The column session filters apply to.
  public static var sessionColumn: String? { "session_id" }

  /// Refuses an importance outside 0...1.
  public func validate(embeddingModel: () throws -> EmbeddingModel?) throws {
    guard importance >= 0, importance <= 1 else { throw StoreError.invalidImportance(importance) }
  }

  /// Appends the non-id columns.
  public func encode(to row: inout [SQLValue]) throws {
    row += [
      SQLValue(kind), SQLValue(content), SQLValue(importance), SQLValue(createdAt), SQLValue(updatedAt),
      SQLValue(lastAccessedAt), SQLValue(accessCount), SQLValue(validFrom), SQLValue(validUntil),
      SQLValue(supersededBy), .text("[" + sourceMessageIDs.map(String.init).joined(separator: ",") + "]"),
      SQLValue(scopeUser), SQLValue(scopeAgent), SQLValue(sessionID), .text(JSONText.encode(tags)),
      SQLValue(metadata),
    ]
  }

  /// Reads a row (id first).
  public init(row: some Row) throws {
    id = row.int64(at: 0)
    kind = try row.enumValue(MemoryKind.self, at: 1, table: "memories", column: "kind")
    content = row.string(at: 2)
    importance = row.double(at: 3)
    createdAt = row.date(at: 4)
    updatedAt = row.date(at: 5)
    lastAccessedAt = row.optionalDate(at: 6)
    accessCount = row.int(at: 7)
    validFrom = row.optionalDate(at: 8)
    validUntil = row.optionalDate(at: 9)
    supersededBy = row.optionalInt64(at: 10)
    let sources = row.string(at: 11)
    guard let ids = JSONText.decode([Int64].self, sources) else {
      throw StoreError.invalidColumnValue(table: "memories", column: "source_message_ids", value: sources)
    }
    sourceMessageIDs = ids
    scopeUser = row.optionalString(at: 12)
    scopeAgent = row.optionalString(at: 13)
    sessionID = row.optionalInt64(at: 14)
    let tagText = row.string(at: 15)
    guard let tags = JSONText.decode([String].self, tagText) else {
      throw StoreError.invalidColumnValue(table: "memories", column: "tags", value: tagText)
    }
    self.tags = tags
    metadata = row.string(at: 16)
  }
}

/// Small JSON helpers for the array columns.
enum JSONText {
  static func encode(_ strings: [String]) -> String {
    guard let data = try? JSONEncoder().encode(strings) else { return "[]" }
    return String(decoding: data, as: UTF8.self)
  }

  static func decode<T: Decodable>(_ type: T.Type, _ text: String) -> T? {
    try? JSONDecoder().decode(T.self, from: Data(text.utf8))
  }
}
