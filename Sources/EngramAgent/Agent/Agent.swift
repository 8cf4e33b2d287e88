import Engram
import EngramCore
import Foundation
import Observation

/// The agent loop over a memory engine: persist the turn, retrieve, route, confirm side
/// effects, execute with timeout and retry, render, persist the reply and a trace per step.
///
/// **Concurrency rule.** The agent is `@MainActor`: its state is read and written on the main
/// actor only, so any UI can observe it (it is `@Observable`). Engine, store, embedding and
/// skill work runs off the main actor and comes back to it to change state.
///
/// **One turn at a time.** Every `send`, `confirm` and decline gets an execution id (the turn's
/// UUID). While a turn is running (`retrieving`, `planning`, `executing`) a new `send` is refused
/// with `AgentError.busy`; while an action waits for confirmation, a new `send` first cancels that
/// action (its pending call becomes `cancelled`) and then starts. `cancel()` during a running turn
/// stops it and fails it with `.cancelled`. A result that arrives for an execution that is no
/// longer current (it was cancelled or replaced) is dropped: it never overwrites newer state.
///
/// **Prompt injection.** Routing reads only the user's text, never retrieved memories: text in
/// memory cannot trigger a skill. Memories reach the planner fenced as data, and side effects
/// always wait for the user's confirmation, which shows exactly what will be written.
@MainActor
@Observable
public final class Agent {
  /// The one state of the agent.
  public private(set) var state: AgentState = .idle
  /// A sentence for the user about what happened at start (for example unfinished actions from
  /// last time that were cancelled), or nil.
  public private(set) var startupNotice: String?
  /// The pending calls cancelled at start.
  public private(set) var cancelledAtStart: [PendingCall] = []
  /// The turn context of the latest turn (retrieved items, preferences, recent turns, the
  /// prompt text), for display and debugging.
  public internal(set) var lastContext: TurnContext?
  /// How many tokens `lastContext`'s prompt text counts, and who counted them (the language
  /// model's server when it can tokenize, else the estimate).
  public internal(set) var lastContextTokens: ContextTokenCount?
  /// How many turns have built their context: a change tells a front end that `lastContext`
  /// belongs to the turn now running.
  public internal(set) var contextsBuilt = 0
  /// The language model's server could not count tokens once: the estimate serves from then on.
  @ObservationIgnored var tokenizerFailed = false
  /// The question the agent asked for a missing argument, answered by the next `send`; nil
  /// when none waits.
  public internal(set) var awaitingAnswer: SlotQuestion?
  /// How many trace rows, pending-call updates or agent turns could not be written; such a
  /// failure never fails a turn whose work is done.
  public internal(set) var persistenceFailures = 0
  /// The partial reply text of the latest execution (read through `streamingText`).
  var streamingBuffer = StreamingBuffer()

  /// The engine.
  @ObservationIgnored public let engine: MemoryEngine
  /// The skills.
  @ObservationIgnored public let registry: SkillRegistry
  /// The configuration.
  @ObservationIgnored public let configuration: AgentConfiguration
  /// The session the agent's turns are appended to.
  @ObservationIgnored public let sessionID: Int64

  /// This agent's owner token: the pending calls it asks are its own to decide.
  @ObservationIgnored let ownerToken = ProcessOwner.register()
  @ObservationIgnored let router: SkillRouter
  @ObservationIgnored let planner: Planner?
  /// Checks a plan step's condition when the step runs.
  @ObservationIgnored let conditionChecker: ConditionChecker
  @ObservationIgnored var currentExecution: UUID?
  @ObservationIgnored var runningTask: Task<AgentState, Never>?
  @ObservationIgnored var suspended: SuspendedStep?
  /// The reminders and events this conversation last created or showed (`SkillContext.recentItems`).
  @ObservationIgnored var recentItems: [Int64] = []
  @ObservationIgnored var currentLanguage: MessageLanguage = .english
  @ObservationIgnored private var observers: [UUID: AsyncStream<AgentState>.Continuation] = [:]
  /// Embeds the turns of finished replies, one batch after another, off the critical path.
  @ObservationIgnored var backgroundEmbedding: Task<Void, Never>?

  /// Starts embedding the turns persisted without vectors (after the previous batch).
  func embedTurnsInBackground() {
    let engine = self.engine
    let previous = backgroundEmbedding
    backgroundEmbedding = Task.detached(priority: .utility) {
      await previous?.value
      _ = try? await engine.conversation.embedPendingTurns()
    }
  }

  /// Waits until the turns of finished replies are embedded (for tests and shutdown).
  public func waitForBackgroundWork() async {
    await backgroundEmbedding?.value
  }

  /// A turn's progress, kept while it waits for confirmation.
  struct TurnRun: Sendable {
    var executionID: UUID
    var context: SkillContext
    var route: RouteSource
    var queue: [PlanStep]
    var stepNumber = 0
    var total: Int
    var outputs: [SkillOutput] = []
    var previousText: String?
  }

  /// The step waiting for confirmation, with everything needed to run it.
  struct SuspendedStep: Sendable {
    var run: TurnRun
    var action: PendingAction
    /// The plan waiting for its one confirmation, when the action is a plan's.
    var plan: PlanRun? = nil
  }

  /// Starts an agent on `engine`: opens its session and cancels pending calls left unfinished
  /// by an earlier run (see `startupNotice`).
  ///
  /// - Parameters:
  ///   - engine: the memory the agent reads and writes.
  ///   - registry: the skills it may run.
  ///   - router: defaults to rules plus similarity with the engine's embedder.
  ///   - planner: the language-model planner, asked when rules and similarity find nothing.
  ///   - conditions: checks a plan step's condition; defaults to one that asks Open-Meteo
  ///     (`ENGRAM_WEATHER_URL`) for the weather.
  ///   - configuration: how the agent runs (session, budget, clock).
  /// - Throws: engine and store errors.
  public init(
    engine: MemoryEngine, registry: SkillRegistry, router: SkillRouter? = nil, planner: Planner? = nil,
    conditions: ConditionChecker? = nil,
    configuration: AgentConfiguration = AgentConfiguration()
  ) async throws {
    self.conditionChecker =
      conditions ?? ConditionChecker(weather: OpenMeteoWeatherService(configuration: .fromEnvironment()))
    self.engine = engine
    self.registry = registry
    self.configuration = configuration
    self.router =
      router ?? SkillRouter(registry: registry, embedding: EnginePhraseEmbedding(engine))
    self.planner = planner
    sessionID = try await engine.conversation.startSession(
      name: configuration.sessionName, at: configuration.clock.now)
    // Calls of live processes (another chat waiting for its user) are theirs to decide.
    let now = configuration.clock.now
    let unfinished =
      try await engine.agentRecords.pendingCalls(status: .pending)
      + engine.agentRecords.pendingCalls(status: .confirmed)
    let abandoned = unfinished.filter { call in
      ProcessOwner.owner(ofExecution: call.executionID).map { !ProcessOwner.isAlive($0) } ?? true
    }
    let cancelled = try await engine.agentRecords.cancelUnfinishedPendingCalls(
      abandoned.compactMap(\.id), at: now)
    cancelledAtStart = cancelled
    let language = MessageLanguage.resolve(
      text: "", preference: try await engine.userPreferences.get(MessageLanguage.preferenceKey))
    currentLanguage = language
    if !cancelled.isEmpty { startupNotice = Self.notice(cancelled: cancelled.count, language: language) }
  }

  isolated deinit { ProcessOwner.unregister(ownerToken) }

  /// The sentence telling the user that `count` unfinished actions were cancelled at start.
  public static func notice(cancelled count: Int, language: MessageLanguage) -> String {
    switch language {
    case .english:
      return count == 1
        ? "1 unfinished action from last time was cancelled."
        : "\(count) unfinished actions from last time were cancelled."
    case .chinese: return "上次有 \(count) 个未完成的操作已被取消。"
    }
  }

  /// The sentence shown when the user stops a running turn.
  public static func stoppedMessage(_ language: MessageLanguage) -> String {
    language == .english ? "Stopped." : "已停止。"
  }

  /// Clears `startupNotice` once the user has seen it.
  public func dismissNotice() { startupNotice = nil }

  /// A stream of every state the agent enters from now on, in order (for UIs without
  /// Observation and for tests). The stream ends when the consumer stops iterating.
  public func stateUpdates() -> AsyncStream<AgentState> {
    let (stream, continuation) = AsyncStream.makeStream(of: AgentState.self)
    let id = UUID()
    observers[id] = continuation
    continuation.onTermination = { [weak self] _ in
      Task { @MainActor in self?.observers[id] = nil }
    }
    return stream
  }

  // MARK: - Requests

  /// Handles one user request and returns the state the turn ended in: `finished`, `failed`,
  /// or `waitingForConfirmation` (answer with `confirm()` or `cancel()`).
  ///
  /// - Throws: `AgentError.emptyInput`, `.inputTooLong`, or `.busy` when a turn is running;
  ///   nothing changes then. Every other problem ends the turn in `failed`.
  @discardableResult
  public func send(_ text: String) async throws(AgentError) -> AgentState {
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw .emptyInput }
    guard text.count <= configuration.maxInputCharacters else {
      throw .inputTooLong(count: text.count, limit: configuration.maxInputCharacters)
    }
    try checkNotBusy()
    let replaced = suspended
    suspended = nil
    let execution = UUID()
    currentExecution = execution
    return await launch(execution) { agent in
      if let replaced { await agent.abandon(replaced, reason: "superseded by a new request") }
      return await agent.runTurn(execution, text: text)
    }
  }

  /// Runs the action waiting for confirmation, then the rest of the turn.
  /// - Throws: `AgentError.nothingToConfirm` when no action waits; `.busy` while a turn runs.
  @discardableResult
  public func confirm() async throws(AgentError) -> AgentState {
    try checkNotBusy()
    guard let step = suspended, case .waitingForConfirmation = state else { throw .nothingToConfirm }
    suspended = nil
    let execution = step.run.executionID
    currentExecution = execution
    transition(
      .executing(skillID: step.action.skillID, step: step.action.step, total: step.action.total),
      for: execution)
    if let plan = step.plan {
      return await launch(execution) { agent in await agent.runConfirmedPlan(plan, action: step.action) }
    }
    return await launch(execution) { agent in await agent.runConfirmed(step) }
  }

  /// Declines the action waiting for confirmation (the turn finishes with "cancelled, nothing
  /// changed"), or stops a running turn (it fails with `.cancelled`). Returns false when there
  /// was nothing to cancel.
  @discardableResult
  public func cancel() async -> Bool {
    if state.isRunning, let execution = currentExecution {
      runningTask?.cancel()
      runningTask = nil
      currentExecution = nil
      let failure = AgentFailure(
        executionID: execution, reason: .cancelled,
        message: Self.stoppedMessage(currentLanguage), skillID: nil)
      setState(.failed(failure))
      return true
    }
    guard let step = suspended, case .waitingForConfirmation = state else { return false }
    suspended = nil
    let execution = step.run.executionID
    currentExecution = execution
    _ = await launch(execution) { agent in await agent.decline(step) }
    return true
  }

  // MARK: - State

  func checkNotBusy() throws(AgentError) {
    if state.isRunning, let execution = currentExecution { throw .busy(executionID: execution) }
    // A decline or replacement in flight: the action is taken but the state not yet changed.
    if case .waitingForConfirmation(let action) = state, suspended == nil {
      throw .busy(executionID: action.executionID)
    }
  }

  /// Whether `execution` is still the one allowed to change state.
  func isCurrent(_ execution: UUID) -> Bool { currentExecution == execution }

  /// Sets `state` when `execution` is current; a stale execution's result is dropped.
  @discardableResult
  func transition(_ new: AgentState, for execution: UUID) -> Bool {
    guard isCurrent(execution) else { return false }
    setState(new)
    return true
  }

  private func setState(_ new: AgentState) {
    state = new
    for continuation in observers.values { continuation.yield(new) }
  }

  private func launch(
    _ execution: UUID, _ work: @escaping @MainActor @Sendable (Agent) async -> AgentState
  ) async -> AgentState {
    let task = Task { @MainActor in await work(self) }
    runningTask = task
    let result = await withTaskCancellationHandler {
      await task.value
    } onCancel: {
      task.cancel()
    }
    if isCurrent(execution) { runningTask = nil }
    return result
  }
}
