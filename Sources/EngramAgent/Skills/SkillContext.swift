/// What a skill sees when it runs: retrieved memories, preferences, the clock and memory.
public struct SkillContext: Sendable {
  /// The user's request text.
  public var userText: String
  /// Memories retrieved for this turn, best first.
  public var memories: [RecalledMemory]
  /// User preferences by key.
  public var preferences: [String: String]
  /// The clock and time zone.
  public var clock: AgentClock
  /// The memory engine.
  public var memory: any AgentMemory
  /// The language replies and confirmations use.
  public var language: MessageLanguage
  /// Where the skill may report the text of its reply while producing it (shown as it arrives;
  /// the returned `SkillOutput` remains the reply). Discards by default.
  public var partial: PartialOutput
  /// The reminders and events this conversation last created or showed (ids, newest focus
  /// first): what "it", "that" or "the second one" refer to.
  public var recentItems: [Int64]

  /// Creates a context; the language follows `userText` unless the `language` preference overrides it.
  public init(
    userText: String, memories: [RecalledMemory] = [], preferences: [String: String] = [:],
    clock: AgentClock, memory: any AgentMemory, language: MessageLanguage? = nil,
    partial: PartialOutput = .discard, recentItems: [Int64] = []
  ) {
    self.recentItems = recentItems
    self.userText = userText
    self.memories = memories
    self.preferences = preferences
    self.clock = clock
    self.memory = memory
    self.partial = partial
    self.language =
      language
      ?? MessageLanguage.resolve(text: userText, preference: preferences[MessageLanguage.preferenceKey])
  }
}
