import EngramCore
import EngramStore
import Foundation

/// A memory as the engine returns it.
public struct MemoryItem: Sendable, Equatable {
  public var id: Int64
  public var kind: MemoryKind
  public var content: String
  public var importance: Double
  public var createdAt: Date
  public var updatedAt: Date
  public var accessCount: Int
  public var lastAccessedAt: Date?
  public var validFrom: Date?
  public var validUntil: Date?
  /// The newer memory that replaced this one, if any (this one stays queryable).
  public var supersededBy: Int64?
  public var scopeUser: String?
  public var tags: [String]

  init(_ memory: Memory) {
    id = memory.id ?? 0
    kind = memory.kind
    content = memory.content
    importance = memory.importance
    createdAt = memory.createdAt
    updatedAt = memory.updatedAt
    accessCount = memory.accessCount
    lastAccessedAt = memory.lastAccessedAt
    validFrom = memory.validFrom
    validUntil = memory.validUntil
    supersededBy = memory.supersededBy
    scopeUser = memory.scopeUser
    tags = memory.tags
  }
}
