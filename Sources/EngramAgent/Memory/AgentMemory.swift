import Engram
import Foundation

/// The memory operations skills rely on; the `Engram` engine conforms to it at integration time.
///
/// Every call may suspend and throw; errors are the conforming engine's own typed errors.
public protocol AgentMemory: Sendable {
  /// Returns up to `k` memories most relevant to `query`, best first.
  func search(query: String, k: Int) async throws -> [RecalledMemory]
  /// Stores a memory of `kind` and returns its id.
  func remember(content: String, kind: MemoryKind) async throws -> Int64
  /// Deletes the memory with `id`.
  func forget(id: Int64) async throws
  /// Stores a reminder due at `date` and returns its id.
  func storeReminder(title: String, date: Date, body: String?) async throws -> Int64
  /// Stores a calendar event starting at `date` and returns its id.
  func storeEvent(title: String, date: Date, body: String?) async throws -> Int64
  /// Stores a note (optionally dated) and returns its id.
  func storeNote(title: String, date: Date?, body: String) async throws -> Int64
  /// Reminders or events (`kind`) due in `from..<to` (either end open), soonest first.
  func agenda(kind: AgentItemKind, from: Date?, to: Date?) async throws -> [AgentItem]
  /// Changes a reminder's or event's title and/or time; returns it as it now is.
  func updateItem(id: Int64, title: String?, date: Date?) async throws -> AgentItem
  /// Deletes a reminder or event.
  func deleteItem(id: Int64) async throws
  /// Returns the preference stored under `key`, if any.
  func preference(key: String) async throws -> String?
  /// Stores `value` under the preference `key`, replacing any previous value.
  func setPreference(key: String, value: String) async throws
}

/// One retrieved item as skills see it: a memory (from `AgentMemory.search` or the turn's
/// context), or a conversation turn or session summary (from the turn's context only).
public struct RecalledMemory: Sendable, Hashable {
  /// The item's id in its table (a memory's id only when `kind` is `.memory`).
  public var id: Int64
  /// The remembered text.
  public var text: String
  /// What the item is: a stored memory (whose id `forget` takes), a turn or a summary.
  public var kind: ItemKind
  /// What a memory records (fact, preference, ...); nil for turns and summaries.
  public var memoryKind: MemoryKind?
  /// When the memory was recorded (or is due, for reminders and events), if known.
  public var date: Date?
  /// The retrieval score; higher is more relevant. Only the order is meaningful.
  public var score: Double
  /// Who said it, for conversation turns.
  public var speaker: String?
  /// The cosine similarity to the query, when vector search found it.
  public var cosine: Double?
  /// The BM25 score, when keyword search found it.
  public var bm25: Double?

  /// Creates a recalled item: a memory (a fact unless `memoryKind` says otherwise) by default.
  public init(
    id: Int64, text: String, kind: ItemKind = .memory, memoryKind: MemoryKind? = nil, date: Date? = nil,
    score: Double = 0, speaker: String? = nil, cosine: Double? = nil, bm25: Double? = nil
  ) {
    self.id = id
    self.text = text
    self.kind = kind
    self.memoryKind = kind == .memory ? memoryKind ?? .fact : nil
    self.date = date
    self.score = score
    self.speaker = speaker
    self.cosine = cosine
    self.bm25 = bm25
  }
}
