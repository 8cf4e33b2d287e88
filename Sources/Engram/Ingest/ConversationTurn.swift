import Foundation

/// One conversation turn read from an import file, before it is stored.
public struct ConversationTurn: Sendable, Equatable {
  /// Who spoke: `system`, `user`, `assistant` or `tool`.
  public var role: String
  /// The text of the turn.
  public var content: String
  /// The session the turn belongs to (an external name; nil for the file's default session).
  public var session: String?
  /// The speaker's name, when known.
  public var speaker: String?
  /// When the turn happened, when known.
  public var timestamp: Date?
  /// Free-form metadata kept with the turn (JSON object).
  public var metadata: [String: JSONValue]
  /// Where the turn came from in its file (1-based line, or the turn's index for JSON files).
  public var sourceLine: Int
  /// The format's own id of the message (a ChatGPT node, a Telegram message), when it has
  /// one: what makes a re-ingested turn recognised even if its text was edited.
  public var sourceID: String?

  public init(
    role: String, content: String, session: String? = nil, speaker: String? = nil,
    timestamp: Date? = nil, metadata: [String: JSONValue] = [:], sourceLine: Int = 0, sourceID: String? = nil
  ) {
    self.sourceID = sourceID
    self.role = role
    self.content = content
    self.session = session
    self.speaker = speaker
    self.timestamp = timestamp
    self.metadata = metadata
    self.sourceLine = sourceLine
  }
}

/// A session read from an import file: its external name, start time and turns.
public struct ConversationSession: Sendable, Equatable {
  /// The session's external name, unique within the file.
  public var name: String
  /// A title for people (a conversation's or chat's name), when the format has one.
  public var title: String?
  /// When the session started, when known.
  public var startedAt: Date?
  /// The turns, in order.
  public var turns: [ConversationTurn]
  /// What was left out of the session's record and why (a dangling reference).
  public var warnings: [IngestWarning]

  public init(
    name: String, title: String? = nil, startedAt: Date?, turns: [ConversationTurn],
    warnings: [IngestWarning] = []
  ) {
    self.name = name
    self.title = title
    self.startedAt = startedAt
    self.turns = turns
    self.warnings = warnings
  }
}
