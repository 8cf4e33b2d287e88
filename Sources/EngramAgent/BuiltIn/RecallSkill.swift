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

  public var id: String { Self.skillID }
  /// The skill's id.
  public static let skillID = "memory.recall"
  public var displayName: String { "Recall" }
  public var description: String {
    "Looks up what the user told you before and answers from those memories; returns the memories with their dates."
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([SkillParameter("query", .string, description: "what to look up in memory")])
  }
  public var hasSideEffects: Bool { false }
  public var requiresConfirmation: Bool { false }
  public var retryCount: Int { 1 }
  public var category: String { "memory" }
  public var tags: Set<String> { ["memory", "personal"] }

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    let query = TextCues.strip(
      text, removing: nil, fillers: SkillWords.list("memory.recall.fillers"))
    return query.isEmpty ? SkillArguments() : ["query": .string(query)]
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    guard let query = arguments["query"]?.stringValue else { throw SkillError.missingArgument(name: "query") }
    let hits =
      context.turn.hits.isEmpty ? try await context.memories.search(query, k: limit) : context.turn.hits
    return answer.reply(to: query, from: hits, clock: context.clock, language: context.language)
  }
}
