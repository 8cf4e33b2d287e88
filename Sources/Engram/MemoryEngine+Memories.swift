import EngramCore
import Foundation

extension MemoryEngine {
  /// The memories: stored, replaced, read and forgotten (see ``Memories``).
  public var memories: Memories { Memories(records: memoryRecords, forgetting: forgetting) }

  /// The memories of a memory store (`engine.memories`): facts, preferences, notes and the
  /// like, each stored with its embedding, replaced with history kept, read back, and
  /// forgotten with every copy of them.
  ///
  /// A view of the engine's parts that forwards each call (it holds no state of its own).
  public struct Memories: Sendable {
    let records: MemoryRecords
    let forgetting: Forgetting

    /// Stores a memory and its embedding; returns its id. A current memory of the same kind
    /// (and `scopeUser`) with exactly this text is not stored again: its id is returned
    /// (`rememberReporting` says which happened).
    ///
    /// - Throws: `EngramError.emptyText`; `StoreError.invalidImportance` outside 0...1.
    @discardableResult
    public func remember(
      _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
      scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
      session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
    ) async throws -> Int64 {
      try await rememberReporting(
        content, kind: kind, importance: importance, scopeUser: scopeUser, scopeAgent: scopeAgent, tags: tags,
        validFrom: validFrom, validUntil: validUntil, session: session, sourceMessageIDs: sourceMessageIDs,
        at: date
      ).id
    }

    /// ``remember(_:kind:importance:scopeUser:scopeAgent:tags:validFrom:validUntil:session:sourceMessageIDs:at:)``,
    /// saying whether the memory is new (false: an identical one was stored already, and its
    /// id is returned).
    public func rememberReporting(
      _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
      scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
      session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
    ) async throws -> (id: Int64, isNew: Bool) {
      try await records.remember(
        content, kind: kind, importance: importance, scopeUser: scopeUser, scopeAgent: scopeAgent, tags: tags,
        validFrom: validFrom, validUntil: validUntil, session: session, sourceMessageIDs: sourceMessageIDs,
        at: date)
    }

    /// Replaces a memory's content (and its kind, when `kind` is given) with history kept: a
    /// new memory is stored and the old one is marked superseded by it (still readable and
    /// searchable with `includeSuperseded`). Returns the new memory's id (the old one when
    /// nothing changed).
    @discardableResult
    public func update(
      _ id: Int64, content: String, kind: MemoryKind? = nil, importance: Double? = nil, at date: Date = Date()
    ) async throws -> Int64 {
      try await records.updateMemory(id, content: content, kind: kind, importance: importance, at: date)
    }

    /// The memory with this id, or nil.
    public func get(_ id: Int64) throws -> MemoryItem? {
      try records.memory(id)
    }

    /// Memories, newest first.
    public func list(kind: MemoryKind? = nil, limit: Int = 100, includeSuperseded: Bool = false) throws
      -> [MemoryItem]
    {
      try records.memories(kind: kind, limit: limit, includeSuperseded: includeSuperseded)
    }

    /// Deletes an item (a memory by default, or a turn or summary) and every copy of it (see
    /// ``forgetReporting(kind:id:dryRun:)``); returns whether it existed.
    @discardableResult
    public func forget(kind: ItemKind = .memory, id: Int64) throws -> Bool {
      try forgetting.forget(kind: kind, id: id)
    }

    /// Deletes an item with its embedding and full-text entry, and every copy of it the
    /// memory holds, in one transaction; returns what was removed, or nil when no item of
    /// `kind` has `id` (nothing changed).
    ///
    /// The copies (docs/forgetting.md):
    /// - a turn: every summary that covers or quotes it (the session's other turns become
    ///   uncovered; the next `compact` summarizes them again without it);
    /// - a memory: every turn, summary, trace step and finished pending call whose text
    ///   contains the memory's text (case of ASCII letters ignored; in trace and call
    ///   arguments also in its JSON-escaped form). A turn is deleted whole: it states what was
    ///   forgotten. Calls still waiting for an answer are left to the conversation holding them;
    /// - a summary: only itself (its turns become uncovered).
    ///
    /// - Parameters:
    ///   - kind: the item's kind.
    ///   - id: the item's id in its table.
    ///   - dryRun: compute the report inside the transaction, then roll it back.
    @discardableResult
    public func forgetReporting(kind: ItemKind, id: Int64, dryRun: Bool = false) throws -> ForgetReport? {
      try forgetting.forgetReporting(kind: kind, id: id, dryRun: dryRun)
    }

    /// Forgets the items matching a query (keyword and vector, fused) that the query actually
    /// names (`Fusion.names`: both retrievers agree, or the text contains it); with `dryRun`
    /// nothing is deleted. Returns what matched.
    public func forget(
      matching query: String, kinds: Set<ItemKind> = [.memory], limit: Int = 10, dryRun: Bool
    ) async throws -> [SearchHit] {
      try await forgetting.forget(matching: query, kinds: kinds, limit: limit, dryRun: dryRun)
    }
  }
}
