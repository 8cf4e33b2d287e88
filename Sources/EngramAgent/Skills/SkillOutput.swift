import Engram
import Foundation

/// Something a skill created in the agenda (`SkillContext.agenda`).
public struct CreatedItem: Sendable, Hashable {
  /// What was created.
  public enum Kind: String, Sendable, Hashable {
    /// A reminder.
    case reminder
    /// A calendar event.
    case event
    /// A note.
    case note
    /// A plain memory.
    case memory
  }

  /// What was created.
  public var kind: Kind
  /// The engine's id for it.
  public var id: Int64
  /// Its title (or content, for memories).
  public var title: String
  /// Its date, if it has one.
  public var date: Date?

  /// Creates a description of a created item.
  public init(kind: Kind, id: Int64, title: String, date: Date? = nil) {
    self.kind = kind
    self.id = id
    self.title = title
    self.date = date
  }
}

/// The semantic result of a skill; the UI decides how to render it.
public enum SkillOutput: Sendable, Hashable {
  /// A plain answer.
  case text(String)
  /// An answer drawn from memories, with the memories it used.
  case memories(answer: String, hits: [SearchHit])
  /// A reminder, event, note or memory was stored; `message` confirms it.
  case created(CreatedItem, message: String)
  /// A memory was deleted.
  case forgotten(id: Int64, message: String)
  /// A titled list of items.
  case list(title: String, items: [String])
  /// Reminders or events shown to the user (`ids` in the order of `lines`); "it" and "the
  /// second one" refer to them next.
  case agenda(title: String, ids: [Int64], lines: [String])
  /// A stored reminder or event was changed (moved, renamed); `message` says how.
  case changed(CreatedItem, message: String)
  /// A stored reminder or event was deleted (cancelled).
  case removed(CreatedItem, message: String)
  /// Asks the agent to run `skill` next with `arguments`.
  case chain(skill: String, arguments: SkillArguments)

  /// A one-paragraph text rendering, for terminals and traces.
  public var text: String {
    switch self {
    case .text(let text): return text
    case .memories(let answer, _): return answer
    case .created(_, let message): return message
    case .forgotten(_, let message): return message
    case .list(let title, let items):
      return ([title] + items.map { "- \($0)" }).joined(separator: "\n")
    case .agenda(let title, _, let lines):
      return ([title] + lines.map { "- \($0)" }).joined(separator: "\n")
    case .changed(_, let message): return message
    case .removed(_, let message): return message
    case .chain(let skill, _): return "→ \(skill)"
    }
  }
}
