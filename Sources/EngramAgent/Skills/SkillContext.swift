import Engram

/// What a skill sees when it runs: the turn's context (retrieved items, preferences, recent
/// turns), the clock, and the engine's topics a skill reads and writes.
public struct SkillContext: Sendable {
  /// The user's request text.
  public var userText: String
  /// What the engine gathered for this turn, from one call: the retrieved items as search hits
  /// (best first), every preference (`allPreferences`), the recent turns and the prompt text.
  public var turn: TurnContext
  /// The clock and time zone (what a skill stores is created at its `now`).
  public var clock: AgentClock
  /// The memories: searched, remembered, forgotten (the engine's `memories`).
  public var memories: MemoryEngine.Memories
  /// The agenda: reminders, events and notes (the engine's `agentRecords`).
  public var agenda: AgentRecords
  /// The user's key-value preferences (the engine's `userPreferences`).
  public var preferences: MemoryEngine.UserPreferences
  /// The language replies and confirmations use.
  public var language: MessageLanguage
  /// Where the skill may report the text of its reply while producing it (shown as it arrives;
  /// the returned `SkillOutput` remains the reply). Discards by default.
  public var partial: PartialOutput
  /// The reminders and events this conversation last created or showed (ids, newest focus
  /// first): what "it", "that" or "the second one" refer to.
  public var recentItems: [Int64]
  /// The condition about a later moment the step runs under, which what it creates keeps and
  /// which is checked then (a reminder's, docs/requests.md); nil for none.
  public var laterCondition: StepCondition?

  /// Creates a context over `engine`'s topics; the language follows `userText` unless the
  /// turn's `language` preference overrides it.
  ///
  /// The topics work while `engine` is open: whoever makes the context keeps the engine.
  public init(
    userText: String, turn: TurnContext = TurnContext(), clock: AgentClock, engine: MemoryEngine,
    language: MessageLanguage? = nil, partial: PartialOutput = .discard, recentItems: [Int64] = []
  ) {
    self.recentItems = recentItems
    self.userText = userText
    self.turn = turn
    self.clock = clock
    self.memories = engine.memories
    self.agenda = engine.agentRecords
    self.preferences = engine.userPreferences
    self.partial = partial
    self.language =
      language
      ?? MessageLanguage.resolve(
        text: userText, preference: turn.allPreferences[MessageLanguage.preferenceKey])
  }
}
