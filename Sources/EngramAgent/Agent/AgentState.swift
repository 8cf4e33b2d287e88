import Foundation

/// Where the agent stands. One enum, never several flags: a UI renders exactly one of these.
///
/// Transitions (see `Agent`):
/// `idle | finished | failed` --send--> `retrieving` -> `planning` -> `executing(…)`* ->
/// `finished | failed | waitingForConfirmation`;
/// `waitingForConfirmation` --confirm--> `executing(…)` -> … ; --cancel--> `finished`;
/// --send--> (the pending action is cancelled) `retrieving` …;
/// any running state --cancel--> `failed(.cancelled)`.
public enum AgentState: Sendable, Hashable {
  /// Nothing has happened yet.
  case idle
  /// Persisting the user's turn and retrieving memories for the prompt context.
  case retrieving
  /// Routing by rules and similarity, or asking the language model for a plan.
  case planning
  /// Running step `step` of `total` (1-based); `total` grows when a skill chains another.
  case executing(skillID: String, step: Int, total: Int)
  /// A side effect waits for `confirm()` or `cancel()`.
  case waitingForConfirmation(PendingAction)
  /// The turn ended with a reply.
  case finished(AgentReply)
  /// The turn ended with an error; `AgentFailure.message` is the sentence to show.
  case failed(AgentFailure)

  /// Whether work is in progress (a new `send` is refused with `AgentError.busy`).
  public var isRunning: Bool {
    switch self {
    case .retrieving, .planning, .executing: return true
    case .idle, .waitingForConfirmation, .finished, .failed: return false
    }
  }
}

/// A side effect the user must confirm, exactly as it will run.
public struct PendingAction: Sendable, Hashable, Identifiable {
  /// The `pending_calls` row id.
  public var id: Int64
  /// The execution (agent turn) it belongs to.
  public var executionID: UUID
  /// The skill to run.
  public var skillID: String
  /// The step number within the execution (1-based) and the number of steps known so far.
  public var step: Int
  /// The number of steps known so far.
  public var total: Int
  /// The validated arguments the skill will receive.
  public var arguments: SkillArguments
  /// The skill's `confirmationText`: what will be written, in the reply language.
  public var confirmationText: String
  /// The language of the turn.
  public var language: MessageLanguage
}

/// How the request was routed.
public enum RouteSource: String, Sendable, Hashable {
  /// A high-precision pattern or rule scores picked one skill.
  case rules
  /// The intent model picked a skill, or no skill.
  case intent
  /// A question no skill claimed was answered from memory (or memory had nothing).
  case memory
  /// The line answered a question the agent had asked (a missing argument).
  case dialogue
  /// Embedding similarity picked the skill.
  case semantic
  /// Rules tied and similarity could not separate them.
  case tieBreak
  /// The language model planned the steps or answered directly.
  case planner
  /// A routine: its name ran its steps, or a sentence defined it.
  case routine
  /// No skill fitted and no language model was configured.
  case none
}

/// The agent's answer to one turn.
public struct AgentReply: Sendable, Hashable {
  /// The execution it answers.
  public var executionID: UUID
  /// The text to show (the rendering of `outputs`, or a direct answer).
  public var text: String
  /// The skill outputs, in step order (chain requests are not included; the step they asked for is).
  public var outputs: [SkillOutput]
  /// The language of `text`.
  public var language: MessageLanguage
  /// How the request was routed.
  public var route: RouteSource
  /// Something the person should know about how the reply was made, on one line: the language
  /// model failed and the reply is the answer from memory alone (`FriendlyMessage.fallbackNotice`).
  public var notice: String? = nil
}

/// Why a turn failed, with the sentence to show.
public struct AgentFailure: Sendable, Hashable {
  /// The typed cause.
  public enum Reason: Sendable, Hashable {
    /// A skill rejected its arguments, failed, timed out or was refused.
    case skill(SkillError)
    /// The planned skill is unknown or turned off.
    case registry(SkillRegistryError)
    /// The language model's reply could not be used.
    case planner(PlannerError)
    /// The language model could not be reached.
    case languageModel(LanguageModelError)
    /// The routing embedding misbehaved.
    case router(RouterError)
    /// The user (or a newer request) cancelled the running turn.
    case cancelled
    /// Another error (engine, store, embedder), described for the log.
    case other(String)
  }

  /// The execution that failed.
  public var executionID: UUID
  /// The typed cause.
  public var reason: Reason
  /// A friendly sentence in the turn's language (from `FriendlyMessage`).
  public var message: String
  /// The skill that failed, if a step failed.
  public var skillID: String?
}

/// Errors `Agent.send` and `Agent.confirm` throw before any work starts (state unchanged).
public enum AgentError: Error, Sendable, Hashable {
  /// A turn is running; one turn at a time (see `Agent`'s concurrency rule).
  case busy(executionID: UUID)
  /// The text is empty or whitespace.
  case emptyInput
  /// The text is longer than `AgentConfiguration.maxInputCharacters`.
  case inputTooLong(count: Int, limit: Int)
  /// `confirm()` was called with no action waiting for confirmation.
  case nothingToConfirm
}
