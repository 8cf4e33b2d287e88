import Engram
import EngramAgent
import EngramCore
import Foundation

/// The browser conversations of one user: each browser session (a cookie) has its own agent,
/// so its own state machine and at most one pending action. At most `maximum` are kept; the
/// least recently used goes first (its waiting action, if any, is declined).
@MainActor
public final class WebChats: Sendable {
  /// The default bound on conversations kept.
  public nonisolated static let defaultMaximum = 32

  private let engine: MemoryEngine
  private let clock: AgentClock
  private let maximum: Int
  private let makePlanner: (@Sendable (SkillRegistry) throws -> Planner)?
  private var chats: [String: Entry] = [:]

  private struct Entry {
    let agent: Agent
    var lastUsed: ContinuousClock.Instant
  }

  nonisolated init(
    engine: MemoryEngine, clock: AgentClock, maximum: Int,
    planner: (@Sendable (SkillRegistry) throws -> Planner)?
  ) {
    self.engine = engine
    self.clock = clock
    self.maximum = max(1, maximum)
    self.makePlanner = planner
  }

  /// How many conversations are kept.
  var count: Int { chats.count }

  /// The agent of browser session `id`, started on first use (its turns filed under the
  /// conversation `web-` plus the id's first 8 characters).
  /// - Throws: engine and store errors from starting the agent.
  func agent(for id: String) async throws -> Agent {
    if var entry = chats[id] {
      entry.lastUsed = .now
      chats[id] = entry
      return entry.agent
    }
    while chats.count >= maximum, let oldest = chats.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
      chats.removeValue(forKey: oldest.key)
      let agent = oldest.value.agent
      Task { @MainActor in
        _ = await agent.cancel()
        await agent.waitForBackgroundWork()
      }
    }
    let registry = SkillRegistry(store: try await EngineSkillStateStore(engine: engine))
    try BuiltInSkills.register(in: registry)
    let agent = try await Agent(
      engine: engine, registry: registry, planner: try makePlanner?(registry),
      configuration: AgentConfiguration(sessionName: "web-" + id.prefix(8), clock: clock))
    // Another request of this browser session may have started one while this one awaited.
    if let started = chats[id] { return started.agent }
    agent.dismissNotice()
    chats[id] = Entry(agent: agent, lastUsed: .now)
    return agent
  }

  /// The agent of browser session `id` when one was started.
  func existingAgent(for id: String) -> Agent? { chats[id]?.agent }

  /// Waits for every agent's background work (before the engine closes).
  func finish() async {
    for entry in chats.values { await entry.agent.waitForBackgroundWork() }
  }
}
