/// `time.now`: tells the current date and time in the user's time zone.
public struct TimeNowSkill: Skill {
  /// Creates the skill.
  public init() {}

  public var id: String { "time.now" }
  public var displayName: String { "Current time" }
  public var description: String { "Tells the current time, date and weekday in the user's time zone." }
  public var samplePhrases: [String] {
    [
      "what time is it", "current time", "what's the date", "what day is it", "现在几点", "几点了", "今天几号", "今天星期几",
      "现在时间",
    ]
  }
  public var inputSchema: SkillInputSchema { .empty }
  public var hasSideEffects: Bool { false }
  public var requiresConfirmation: Bool { false }
  public var retryCount: Int { 1 }
  public var category: String { "utility" }
  public var tags: Set<String> { ["utility", "office"] }

  public func canHandle(_ text: String) -> Bool {
    TextCues.containsAny(
      text,
      [
        "what time", "what's the time", "the time now", "current time", "time is it", "what day is",
        "what's the date",
        "what is the date", "today's date", "what date", "几点了", "几点钟了", "现在几点", "现在时间", "什么时间了", "今天几号",
        "今天是几号", "星期几", "礼拜几", "周几", "几月几号", "今天日期", "现在是什么时候",
      ])
  }

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments { SkillArguments() }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    let rendered = TextCues.render(context.clock.now, clock: context.clock, language: context.language)
    let zone = context.clock.timeZone.identifier
    switch context.language {
    case .english: return .text("It's \(rendered), \(zone).")
    case .chinese: return .text("现在是 \(rendered)，\(zone)。")
    }
  }
}
