import Engram
import EngramAgent
import Foundation

/// `engram chat`: talks to the agent over the memory, asking before anything is written.
public enum ChatCommand: Command {
  /// The conversation the turns are filed under when `--session` is not given.
  public static let defaultSession = "chat"

  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "chat", abstract: "Talk to the agent: remember, recall, remind, with your confirmation.",
    discussion: """
      Each line is a request. The agent retrieves memories, picks a skill by rules and
      similarity (or asks the --llm planner when none fits) and replies. Anything that
      writes is shown first and runs only after you answer y (n cancels). Commands:
      /help, /history [N], /memories [N], /skills, /quit.

      Reminders that are due are shown when the chat starts and as they come due while it
      runs (each once: `engram reminders --watch` and other chats will not show it again).
      --now fixes the clock as `engram route --now` does (ISO 8601 with an offset).

      When standard input is not a terminal, lines are read from it: no prompts, one reply
      per line on standard output, a confirmation printed as a line and answered by the next
      input line (y or n); end of input ends the session with status 0.

      --llm takes an OpenAI-compatible server (Ollama, llama.cpp, OpenAI); the bearer key is
      read from $ENGRAM_LLM_API_KEY. Plain http is refused unless the host is this machine or
      --allow-insecure is given. `make llm` builds a small local one (docs/llm.md). When the
      model fails on a question, the answer from memory is given with a one-line notice.

      --show-context prints, before each reply, the prompt context the model sees (retrieved
      memories, preferences, recent turns) and its token count: counted by the --llm server's
      /tokenize when it has one (llama.cpp), else estimated. --context-budget N caps it (in
      those tokens).
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
    @Option(valueName: "URL", help: "An OpenAI-compatible server that plans requests no rule fits.")
    var llm: String?
    @Option(valueName: "NAME", help: "The model name sent to the --llm server.") var llmModel: String?
    @Flag(help: "Allow plain http to an --llm host that is not this machine.") var allowInsecure = false
    @Option(valueName: "NAME", help: "The conversation the turns are filed under.")
    var session = ChatCommand.defaultSession
    @Option(valueName: "ISO8601", help: ArgumentHelp.now) var now: String?
    @Flag(help: "Print each turn's prompt context and its token count (on standard error) before the reply.")
    var showContext = false
    @Option(valueName: "N", help: "The prompt context's token budget (default 1500).") var contextBudget: Int?

    /// The defaults.
    public init() {}
  }

  /// Opens the memory, starts the agent and runs the conversation.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let languageModel = try languageModelConfiguration(options)
    let session = options.session
    let clock = try RouteCommand.clock(from: options.now)
    guard !session.trimmingCharacters(in: .whitespaces).isEmpty else {
      throw UsageError(.invalidValue(argument: "--session", value: session, expected: "a non-empty name"))
    }
    var configuration = AgentConfiguration(sessionName: session, clock: clock)
    // The context's tokens as the --llm server counts them, where they are shown or capped.
    configuration.countsTokensWithModel = options.showContext || options.contextBudget != nil
    if let budget = options.contextBudget {
      guard budget >= 1 else {
        throw UsageError(
          .invalidValue(argument: "--context-budget", value: String(budget), expected: "a positive number"))
      }
      configuration.contextBudget = budget
      // The budget asked for is the budget: memories get no floor above it.
      configuration.minimumMemoryBudget = min(configuration.minimumMemoryBudget, budget)
    }
    Interruption.install()
    defer { Interruption.uninstall() }
    try await EngineAccess.mappingErrors {
      try await converse(
        context, languageModel: languageModel, configuration: configuration, showContext: options.showContext)
    }
  }

  @MainActor
  private static func converse(
    _ context: CommandContext, languageModel: LanguageModelConfiguration?, configuration: AgentConfiguration,
    showContext: Bool
  ) async throws {
    let engine = try await EngineAccess.openOffPool(context)
    try await EngineAccess.closing(engine) { engine in
      let registry = SkillRegistry(store: try await EngineSkillStateStore(engine: engine))
      try BuiltInSkills.register(in: registry)
      let planner = try languageModel.map { configuration in
        Planner(
          model: try OpenAIChatClient(configuration: configuration, environment: context.environment),
          registry: registry)
      }
      let agent = try await Agent(
        engine: engine, registry: registry, planner: planner,
        configuration: configuration)
      // The last replies' turns are still being embedded in the background: finish before the
      // engine closes (and before exit, which must not find OpenBLAS mid-computation).
      do {
        try await ChatSession(agent: agent, context: context, showContext: showContext).run()
      } catch {
        await agent.waitForBackgroundWork()
        throw error
      }
      await agent.waitForBackgroundWork()
    }
  }

  /// The planner's server from `--llm`, `--llm-model` and `--allow-insecure`, or nil without `--llm`.
  /// - Throws: ``UsageError`` for a missing partner option, a bad URL, or plain http to another host.
  static func languageModelConfiguration(_ options: Options) throws(UsageError) -> LanguageModelConfiguration?
  {
    try languageModelConfiguration(
      llm: options.llm, model: options.llmModel, allowInsecure: options.allowInsecure)
  }

  /// The planner's server from the values of `--llm`, `--llm-model` and `--allow-insecure`
  /// (`engram chat` and `engram serve` take the same three).
  static func languageModelConfiguration(llm: String?, model: String?, allowInsecure insecure: Bool)
    throws(UsageError) -> LanguageModelConfiguration?
  {
    guard let text = llm else {
      if model != nil { throw UsageError("--llm-model needs --llm URL") }
      if insecure { throw UsageError("--allow-insecure applies only with --llm URL") }
      return nil
    }
    guard let model else { throw UsageError("--llm needs --llm-model NAME") }
    guard let url = URL(string: text) else {
      throw UsageError(.invalidValue(argument: "--llm", value: text, expected: "an http or https URL"))
    }
    let configuration = LanguageModelConfiguration(baseURL: url, model: model, allowInsecureRemote: insecure)
    do {
      _ = try configuration.validatedEndpoint()
    } catch {
      switch error {
      case .insecureEndpoint(let host):
        throw UsageError(
          "refusing plain http to \(host): your memories would cross the network unencrypted; "
            + "use https, a server on this machine, or --allow-insecure")
      case .emptyModelName:
        throw UsageError(.invalidValue(argument: "--llm-model", value: model, expected: "a model name"))
      default:
        throw UsageError(.invalidValue(argument: "--llm", value: text, expected: "an http or https URL"))
      }
    }
    return configuration
  }
}
