import Engram
import Foundation

/// The memory operations skills rely on; the `Engram` engine conforms to it at integration time.
///
/// Every call may suspend and throw; errors are the conforming engine's own typed errors.
public protocol AgentMemory: Sendable {
  /// Returns up to `k` memories most relevant to `query`, best first.
  func search(query: String, k: Int) async throws -> [RecalledMemory]
  /// Stores a memory and returns its id.
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
  func agenda(kind: AgentItemRecord.Kind, from: Date?, to: Date?) async throws -> [AgentItemRecord]
  /// Changes a reminder's or event's title and/or time; returns it as it now is.
  func updateItem(id: Int64, title: String?, date: Date?) async throws -> AgentItemRecord
  /// Deletes a reminder or event.
  func deleteItem(id: Int64) async throws
  /// Returns the preference stored under `key`, if any.
  func preference(key: String) async throws -> String?
  /// Stores `value` under the preference `key`, replacing any previous value.
  func setPreference(key: String, value: String) async throws
}

/// The kind of a stored memory: an open set of names so the engine can add its own.
public struct MemoryKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
  /// The stable name stored with the memory.
  public let rawValue: String

  /// Creates a kind from its stored name.
  public init(rawValue: String) { self.rawValue = rawValue }

  /// A fact about the user or the world.
  public static let fact = MemoryKind(rawValue: "fact")
  /// A user preference.
  public static let preference = MemoryKind(rawValue: "preference")
  /// A free-form note.
  public static let note = MemoryKind(rawValue: "note")
  /// A reminder with a due date.
  public static let reminder = MemoryKind(rawValue: "reminder")
  /// A calendar event.
  public static let event = MemoryKind(rawValue: "event")
  /// A conversation turn retrieved as context: not a stored memory, so its id is no
  /// memory's id.
  public static let conversationTurn = MemoryKind(rawValue: "turn")
  /// A session summary retrieved as context: not a stored memory either.
  public static let conversationSummary = MemoryKind(rawValue: "session-summary")

  /// Whether items of this kind are stored memories (whose ids `forget` takes).
  public var isStoredMemory: Bool { self != .conversationTurn && self != .conversationSummary }

  /// The stored name.
  public var description: String { rawValue }
}

/// One memory returned by `AgentMemory.search`.
public struct RecalledMemory: Sendable, Hashable {
  /// The memory's id in the engine.
  public var id: Int64
  /// The remembered text.
  public var text: String
  /// What kind of memory it is.
  public var kind: MemoryKind
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

  /// Creates a recalled memory.
  public init(
    id: Int64, text: String, kind: MemoryKind = .fact, date: Date? = nil, score: Double = 0,
    speaker: String? = nil, cosine: Double? = nil, bm25: Double? = nil
  ) {
    self.id = id
    self.text = text
    self.kind = kind
    self.date = date
    self.score = score
    self.speaker = speaker
    self.cosine = cosine
    self.bm25 = bm25
  }
}
