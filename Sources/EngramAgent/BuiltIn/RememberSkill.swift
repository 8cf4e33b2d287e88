import Engram

/// `memory.remember`: stores a fact or preference the user states. A statement of where the
/// user lives ("my home city is Lisbon", 我住在北京) also sets the `home_city` preference
/// `weather.current` uses.
public struct RememberSkill: Skill {
  /// Creates the skill.
  public init() {}

  public var id: String { "memory.remember" }
  public var displayName: String { "Remember" }
  public var description: String {
    "Stores a fact or preference the user tells you in long-term memory; returns the new memory id."
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter("content", .string, description: "the fact to remember, as a full sentence"),
      SkillParameter("kind", .string, required: false, description: "fact or preference (default fact)"),
    ])
  }
  public var category: String { "memory" }
  public var tags: Set<String> { ["memory", "personal"] }

  static let fillers = SkillWords.list("memory.remember.fillers")

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    let content = TextCues.strip(text, removing: nil, fillers: Self.fillers)
    guard !content.isEmpty else { return SkillArguments() }
    let preference = TextCues.containsAny(
      text, SkillWords.list("memory.remember.preference_words"))
    return ["content": .string(content), "kind": .string(preference ? "preference" : "fact")]
  }

  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    let content = arguments["content"]?.stringValue ?? ""
    switch context.language {
    case .english: return "Remember: “\(content)”?"
    case .chinese: return "记住：「\(content)」？"
    }
  }

  /// The memory kind a `kind` argument names. A planner may invent kinds, and the content
  /// matters more: `reminder` becomes `event`, anything else unknown (or nothing) `fact`.
  static func memoryKind(named name: String?) -> MemoryKind {
    guard let name else { return .fact }
    if name == "reminder" { return .event }
    return MemoryKind(rawValue: name) ?? .fact
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    guard let content = arguments["content"]?.stringValue else {
      throw SkillError.missingArgument(name: "content")
    }
    let kind = Self.memoryKind(named: arguments["kind"]?.stringValue)
    let id = try await context.memories.remember(content, kind: kind, at: context.clock.now)
    let extractor = PlaceExtractor(clock: context.clock)
    let homeCity = extractor.homeCity(statedIn: content) ?? extractor.homeCity(statedIn: context.userText)
    if let homeCity { try await context.preferences.set(WeatherSkill.homeCityKey, homeCity) }
    let message: String
    switch (context.language, homeCity) {
    case (.english, let city?):
      message = "Got it, I'll remember that, and use \(city) as your home city for the weather."
    case (.chinese, let city?): message = "好的，我记住了，查天气时默认用\(city)。"
    case (.english, nil): message = "Got it, I'll remember that."
    case (.chinese, nil): message = "好的，我记住了。"
    }
    return .created(CreatedItem(kind: .memory, id: id, title: content), message: message)
  }
}
