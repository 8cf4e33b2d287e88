/// `memory.recall`: answers a question from retrieved memories, citing their dates.
public struct RecallSkill: Skill {
  /// How many memories to fetch when the context brought none.
  public var limit: Int
  /// Which memories answer, and how the answer reads.
  public var answer: MemoryAnswer

  /// Creates the skill.
  public init(limit: Int = 5, answer: MemoryAnswer = MemoryAnswer(modelID: MemoryAnswer.calibratedModel)) {
    self.limit = limit
    self.answer = answer
  }

  public var id: String { "memory.recall" }
  public var displayName: String { "Recall" }
  public var description: String {
    "Looks up what the user told you before and answers from those memories; returns the memories with their dates."
  }
  public var samplePhrases: [String] {
    [
      "do you remember", "what did i", "what's my", "what is my", "when did i", "where did i",
      "did i tell you",
      "还记得", "我之前", "我上次", "我说过", "我的是什么",
    ]
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([SkillParameter("query", .string, description: "what to look up in memory")])
  }
  public var hasSideEffects: Bool { false }
  public var requiresConfirmation: Bool { false }
  public var retryCount: Int { 1 }
  public var category: String { "memory" }
  public var tags: Set<String> { ["memory", "personal"] }

  public func canHandle(_ text: String) -> Bool {
    if TextCues.isForgetRequest(text) { return false }
    if TextCues.containsAny(
      text,
      [
        "do you remember", "what did i", "when did i", "where did i", "who did i", "did i tell", "did i say",
        "did i mention", "what's my", "what is my", "what are my", "who is my", "who's my", "where is my",
        "where's my", "when is my", "when's my", "recall", "have i told", "还记得", "记不记得", "记得吗", "我之前",
        "我上次", "我说过", "我提过", "我告诉过", "我跟你说过",
      ])
    {
      return true
    }
    return text.contains("我") && TextCues.isQuestion(text)
      && !TextCues.containsAny(text, ["几点了", "现在几点", "星期几", "几号", "等于", "加", "减", "乘", "除"])
  }

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    let query = TextCues.strip(
      text, removing: nil, fillers: ["do you remember", "please", "请问", "你还记得", "还记得"])
    return query.isEmpty ? SkillArguments() : ["query": .string(query)]
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    guard let query = arguments["query"]?.stringValue else { throw SkillError.missingArgument(name: "query") }
    let hits =
      context.memories.isEmpty ? try await context.memory.search(query: query, k: limit) : context.memories
    return answer.reply(to: query, from: hits, clock: context.clock, language: context.language)
  }
}
