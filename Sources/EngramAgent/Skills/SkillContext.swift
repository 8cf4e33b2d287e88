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

  /// Creates a context; the language follows `userText` unless the `language` preference overrides it.
  public init(
    userText: String, memories: [RecalledMemory] = [], preferences: [String: String] = [:],
    clock: AgentClock, memory: any AgentMemory, language: MessageLanguage? = nil
  ) {
    self.userText = userText
    self.memories = memories
    self.preferences = preferences
    self.clock = clock
    self.memory = memory
    self.language =
      language
      ?? MessageLanguage.resolve(text: userText, preference: preferences[MessageLanguage.preferenceKey])
  }
}
