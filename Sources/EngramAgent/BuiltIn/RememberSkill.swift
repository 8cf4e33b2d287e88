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
  public var samplePhrases: [String] {
    [
      "remember that", "remember", "keep in mind", "don't forget that i", "i prefer", "记住", "帮我记住", "请记住",
      "你要记得",
      "我喜欢", "我不喜欢",
    ]
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter("content", .string, description: "the fact to remember, as a full sentence"),
      SkillParameter("kind", .string, required: false, description: "fact or preference (default fact)"),
    ])
  }
  public var category: String { "memory" }
  public var tags: Set<String> { ["memory", "personal"] }

  static let fillers = [
    "please", "remember that", "remember", "keep in mind that", "keep in mind", "don't forget that",
    "note that", "for me", "请", "帮我", "你要", "记住", "记得", "一下", "哦", "啊", "吧",
  ]

  public func canHandle(_ text: String) -> Bool {
    let lower = text.lowercased()
    if lower.contains("remind") || lower.contains("do you remember") || TextCues.isQuestion(text)
      || TextCues.isForgetRequest(text)
    {
      return false
    }
    return TextCues.containsAny(
      text,
      [
        "remember", "keep in mind", "don't forget that i", "i prefer", "i like", "i love", "i hate",
        "i'm allergic",
        "i am allergic", "my favorite", "my favourite", "记住", "你要记得", "我喜欢", "我不喜欢", "我爱", "我讨厌", "我对", "过敏",
        "我最喜欢",
      ])
  }

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    let content = TextCues.strip(text, removing: nil, fillers: Self.fillers)
    guard !content.isEmpty else { return SkillArguments() }
    let preference = TextCues.containsAny(
      text, ["prefer", "i like", "i love", "i hate", "favorite", "favourite", "喜欢", "讨厌", "我爱"])
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
    let id = try await context.memory.remember(content: content, kind: kind)
    let extractor = PlaceExtractor(clock: context.clock)
    let homeCity = extractor.homeCity(statedIn: content) ?? extractor.homeCity(statedIn: context.userText)
    if let homeCity { try await context.memory.setPreference(key: WeatherSkill.homeCityKey, value: homeCity) }
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
