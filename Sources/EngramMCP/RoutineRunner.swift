import Engram
import EngramAgent
import Foundation

/// Runs routines (stored, named plans) for the MCP tools on one agent, the same agent and
/// orchestrator as `engram chat`: the steps that only look something up run at once, the
/// steps that change something wait for one confirmation of the whole plan. An MCP call cannot
/// ask the user a question in the middle, so the plan waiting for confirmation is returned
/// with its execution id, and a later `routine_run` with `confirm` set to that id runs it; an id
/// that is not the plan waiting now (another run came first, the plan was cancelled elsewhere)
/// is refused.
@MainActor final class RoutineRunner: Sendable {
  /// What one run came to.
  enum Outcome: Sendable {
    /// The routine ran (every step that could): the reply, under its execution id.
    case finished(text: String, execution: UUID)
    /// Steps that change something wait for confirmation: the plan as the user would see it.
    case waiting(summary: String, execution: UUID)
  }

  private let engine: MemoryEngine
  private var agent: Agent?
  /// The routine (its key) whose plan waits for confirmation.
  private var waitingRoutine: String?

  nonisolated init(engine: MemoryEngine) {
    self.engine = engine
  }

  /// The agent, started on first use (its turns filed under the conversation `mcp`).
  private func startedAgent() async throws -> Agent {
    if let agent { return agent }
    let registry = SkillRegistry(store: try await EngineSkillStateStore(engine: engine))
    try BuiltInSkills.register(in: registry)
    let agent = try await Agent(
      engine: engine, registry: registry, configuration: AgentConfiguration(sessionName: "mcp"))
    // Another call may have started one while this one awaited: keep the first.
    if let started = self.agent { return started }
    agent.dismissNotice()
    self.agent = agent
    return agent
  }

  /// Plans and runs `routine`: as far as its look-ups when a step needs confirmation.
  /// - Throws: ``RoutineRunError`` when the agent is busy or the turn failed; store errors.
  func run(_ routine: Routine) async throws -> Outcome {
    let agent = try await startedAgent()
    waitingRoutine = nil
    let state: AgentState
    do {
      state = try await agent.send(routine.name)
    } catch {
      throw RoutineRunError.agent(error)
    }
    return try outcome(of: state, routine: routine)
  }

  /// Runs the plan of `routine` waiting under `execution`.
  /// - Throws: ``RoutineRunError/stale`` when that is not the plan waiting now.
  func confirm(_ routine: Routine, execution: String) async throws -> Outcome {
    guard let agent, waitingRoutine == routine.key, case .waitingForConfirmation(let action) = agent.state,
      action.executionID.uuidString.lowercased() == execution.lowercased()
    else { throw RoutineRunError.stale(execution: execution, routine: routine.name) }
    waitingRoutine = nil
    let state: AgentState
    do {
      state = try await agent.confirm()
    } catch {
      throw RoutineRunError.agent(error)
    }
    return try outcome(of: state, routine: routine)
  }

  private func outcome(of state: AgentState, routine: Routine) throws -> Outcome {
    switch state {
    case .finished(let reply): return .finished(text: reply.text, execution: reply.executionID)
    case .waitingForConfirmation(let action):
      waitingRoutine = routine.key
      return .waiting(summary: action.confirmationText, execution: action.executionID)
    case .failed(let failure): throw RoutineRunError.failed(failure.message)
    default: throw RoutineRunError.failed("the routine did not finish")
    }
  }

  /// Waits for the agent's background work (before the engine closes).
  func finish() async {
    await agent?.waitForBackgroundWork()
  }
}

/// Why a routine could not run over MCP, as one sentence.
enum RoutineRunError: Error, CustomStringConvertible {
  case agent(AgentError)
  case failed(String)
  case stale(execution: String, routine: String)

  var description: String {
    switch self {
    case .agent(.busy): return "another routine is still running; try again when it has finished"
    case .agent(.emptyInput), .agent(.inputTooLong): return "the routine's name cannot be run as a request"
    case .agent(.nothingToConfirm): return "nothing waits for confirmation"
    case .failed(let message): return message
    case .stale(let execution, let routine):
      return
        "the confirmation '\(execution)' is stale: no run of the routine “\(routine)” waits under that id "
        + "(another run came first, or it was cancelled); call routine_run without confirm to plan it again"
    }
  }
}
