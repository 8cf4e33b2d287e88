import Engram
import EngramCore
import Foundation

/// The memory engine as the agent's `AgentMemory`: hybrid search, memories, preferences, and
/// reminders, events and notes in the engine's `agent_items` table. Its synchronous store
/// calls run on `BlockingWork`'s threads, never on the caller's cooperative thread.
///
/// Ids returned by `search` are ids of the memories table only (by default), so every id it
/// returns is one `forget(id:)` can delete. The agent's turn context, which also holds
/// conversation turns and summaries, comes from `MemoryEngine.context(for:budget:)` instead.
public struct EngineAgentMemory: AgentMemory {
  /// The engine.
  public let engine: MemoryEngine
  /// The item kinds `search` returns (memories only by default; see the type's note on ids).
  public var searchKinds: Set<ItemKind>
  /// Creation times of stored items come from this clock.
  public var clock: AgentClock

  /// Wraps `engine`.
  public init(engine: MemoryEngine, searchKinds: Set<ItemKind> = [.memory], clock: AgentClock = .system()) {
    self.engine = engine
    self.searchKinds = searchKinds
    self.clock = clock
  }

  /// Hybrid search (BM25 + vector) over `searchKinds`, best first, each with its date.
  /// - Throws: `EngramError` (`.emptyText`, `.invalidK`), embedder and store errors.
  public func search(query: String, k: Int) async throws -> [SearchHit] {
    try await engine.search(query, k: k, mode: .hybrid, filters: SearchFilters(kinds: searchKinds))
  }

  /// Stores a memory of `kind`, created now by `clock`.
  /// - Throws: `EngramError.emptyText`, embedder and store errors.
  public func remember(content: String, kind: MemoryKind) async throws -> Int64 {
    try await engine.memories.remember(content, kind: kind, at: clock.now)
  }

  /// Deletes memory `id`.
  /// - Throws: `EngramError.notFound` when no memory has that id.
  public func forget(id: Int64) async throws {
    let engine = engine
    guard try await engine.memories.forget(kind: .memory, id: id) else {
      throw EngramError.notFound(kind: .memory, id: id)
    }
  }

  /// Stores a reminder in `agent_items`, with its condition (``StepCondition/storedText``)
  /// when it has one.
  /// - Throws: `AgentRecordError.emptyField` for a blank title; store errors.
  public func storeReminder(title: String, date: Date, body: String?, condition: StepCondition?) async throws
    -> Int64
  {
    let (engine, now) = (engine, clock.now)
    let stored = condition?.storedText
    return try await BlockingWork.run {
      try engine.agentRecords.addItem(
        kind: .reminder, title: title, body: body, due: date, at: now, condition: stored)
    }
  }

  /// Stores a calendar event in `agent_items`.
  /// - Throws: `AgentRecordError.emptyField` for a blank title; store errors.
  public func storeEvent(title: String, date: Date, body: String?) async throws -> Int64 {
    let (engine, now) = (engine, clock.now)
    return try await BlockingWork.run {
      try engine.agentRecords.addItem(kind: .event, title: title, body: body, due: date, at: now)
    }
  }

  /// Reminders or events due in `from..<to`, soonest first.
  public func agenda(kind: AgentItemKind, from: Date?, to: Date?) async throws -> [AgentItem] {
    let engine = engine
    return try await BlockingWork.run { try engine.agentRecords.agenda(kind: kind, from: from, to: to) }
  }

  /// Changes an item's title and/or time.
  /// - Throws: `AgentRecordError.notFound` (deleted meanwhile) or `.emptyField`; store errors.
  public func updateItem(id: Int64, title: String?, date: Date?) async throws -> AgentItem {
    let engine = engine
    return try await BlockingWork.run { try engine.agentRecords.updateItem(id, title: title, due: date) }
  }

  /// Deletes an item.
  /// - Throws: `AgentRecordError.notFound` (deleted meanwhile); store errors.
  public func deleteItem(id: Int64) async throws {
    let engine = engine
    try await BlockingWork.run { try engine.agentRecords.deleteItem(id) }
  }

  /// Stores a note in `agent_items`.
  /// - Throws: `AgentRecordError.emptyField` for a blank title; store errors.
  public func storeNote(title: String, date: Date?, body: String) async throws -> Int64 {
    let (engine, now) = (engine, clock.now)
    return try await BlockingWork.run {
      try engine.agentRecords.addItem(kind: .note, title: title, body: body, due: date, at: now)
    }
  }

  /// The preference stored under `key`.
  public func preference(key: String) async throws -> String? {
    let engine = engine
    return try await engine.userPreferences.get(key)
  }

  /// Stores a preference (not pinned; pinning is the application's choice).
  public func setPreference(key: String, value: String) async throws {
    let engine = engine
    try await engine.userPreferences.set(key, value)
  }
}
