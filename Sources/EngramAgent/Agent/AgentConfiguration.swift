/// How an `Agent` runs. Every field has a documented default.
public struct AgentConfiguration: Sendable {
  /// The session (by name) the agent's turns are appended to. Default `agent`.
  public var sessionName: String
  /// The prompt-context token budget: skill catalog (with a language model, which reads it)
  /// plus memories, preferences and recent turns. Default 1500.
  public var contextBudget: Int
  /// The least budget memories get when the catalog is large. Default 200.
  public var minimumMemoryBudget: Int
  /// How many memories to retrieve before trimming to the budget. Default 8.
  public var memoryCount: Int
  /// How many recent turns of the session the context considers. Default 6.
  public var recentCount: Int
  /// Which skills the agent offers. Default: all.
  public var scenario: SkillScenario
  /// Longer requests are refused with `AgentError.inputTooLong`. Default 8000 characters.
  public var maxInputCharacters: Int
  /// The clock and time zone for dates, reminders and traces. Default: the system clock.
  public var clock: AgentClock
  /// Whether to append the user's and the agent's turns to the conversation log. Default true.
  public var persistTurns: Bool
  /// Whether to count the prompt context's tokens with the language model's server (llama.cpp's
  /// `/tokenize`, one request per turn) and trim the context to `contextBudget` in those
  /// tokens, instead of the estimate. Default false (`engram chat --show-context` and
  /// `--context-budget` turn it on); without a planner, or with a server that cannot count,
  /// the estimate serves.
  public var countsTokensWithModel = false

  /// Creates a configuration with the documented defaults.
  public init(
    sessionName: String = "agent", contextBudget: Int = 1500, minimumMemoryBudget: Int = 200,
    memoryCount: Int = 8, recentCount: Int = 6, scenario: SkillScenario = .all,
    maxInputCharacters: Int = 8000, clock: AgentClock = .system(), persistTurns: Bool = true
  ) {
    self.sessionName = sessionName
    self.contextBudget = contextBudget
    self.minimumMemoryBudget = minimumMemoryBudget
    self.memoryCount = memoryCount
    self.recentCount = recentCount
    self.scenario = scenario
    self.maxInputCharacters = maxInputCharacters
    self.clock = clock
    self.persistTurns = persistTurns
  }
}
