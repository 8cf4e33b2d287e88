import Engram
import EngramEmbeddings
import Foundation
import Synchronization

@testable import EngramAgent

/// A temporary folder removed when released.
final class AgentTemporaryFolder {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("engram-agent-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  deinit { try? FileManager.default.removeItem(at: url) }
}

/// The instant every agent test runs at: Wednesday 2025-06-11 10:00 in Shanghai.
let testClock = AgentClock.fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai)

func openEngine(_ path: String) throws -> MemoryEngine {
  try MemoryEngine(
    path: path, configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 256)))
}

/// A real engine on a temporary database with the built-in skills (and any extra ones).
@MainActor
final class AgentHarness {
  let folder: AgentTemporaryFolder
  let engine: MemoryEngine
  let registry = SkillRegistry()

  init(extraSkills: [any Skill] = []) throws {
    folder = try AgentTemporaryFolder()
    engine = try openEngine(folder.path("memory.sqlite"))
    for skill in extraSkills { try registry.register(skill) }
    try BuiltInSkills.register(in: registry)
  }

  func agent(router: SkillRouter? = nil, planner: Planner? = nil) async throws -> Agent {
    try await Agent(
      engine: engine, registry: registry, router: router, planner: planner,
      configuration: AgentConfiguration(clock: testClock))
  }

  deinit { engine.close() }
}

/// A language model that always answers `reply`.
struct FixedReplyModel: LanguageModel {
  var reply: String
  func complete(messages: [ChatMessage]) async throws -> String { reply }
}

/// A latch a test opens by hand; waiting ignores cancellation on purpose (a slow skill that
/// finishes after its turn was cancelled).
final class Gate: Sendable {
  private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

  func wait() async {
    await withCheckedContinuation { continuation in
      let resumeNow = state.withLock { state -> Bool in
        if state.open { return true }
        state.waiters.append(continuation)
        return false
      }
      if resumeNow { continuation.resume() }
    }
  }

  func open() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.open = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }
}

/// A read-only skill that blocks on a gate: `slow job`.
struct SlowSkill: PhraseRuledSkill {
  let gate: Gate
  var id: String { "test.slow" }
  var displayName: String { "Slow job" }
  var description: String { "Runs a slow job." }
  var samplePhrases: [String] { ["slow job"] }
  var inputSchema: SkillInputSchema { .empty }
  var hasSideEffects: Bool { false }
  var requiresConfirmation: Bool { false }
  var timeout: Duration { .seconds(120) }
  func canHandle(_ text: String) -> Bool { text.contains("slow job") }
  func extractArguments(from text: String, clock: AgentClock) -> SkillArguments { SkillArguments() }
  func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    await gate.wait()
    return .text("slow job done")
  }
}

/// A read-only skill that, when it rains on `day`, asks for a reminder to be created next.
struct RainCheckSkill: PhraseRuledSkill {
  var id: String { "weather.ifRain" }
  var displayName: String { "If it rains" }
  var description: String { "Checks tomorrow's forecast and chains a reminder when rain is expected." }
  var samplePhrases: [String] { ["if it rains"] }
  var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter("title", .string, description: "what to be reminded of"),
      SkillParameter("when", .date, description: "when to remind"),
    ])
  }
  var hasSideEffects: Bool { false }
  var requiresConfirmation: Bool { false }
  func canHandle(_ text: String) -> Bool { false }
  func extractArguments(from text: String, clock: AgentClock) -> SkillArguments { SkillArguments() }
  func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    // The forecast always says rain.
    .chain(skill: "reminder.create", arguments: ["title": arguments["title"]!, "when": arguments["when"]!])
  }
}

/// A read-only skill returning a fixed forecast.
struct ForecastSkill: PhraseRuledSkill {
  var id: String { "weather.forecast" }
  var displayName: String { "Forecast" }
  var description: String { "Tells tomorrow's weather." }
  var samplePhrases: [String] { ["weather forecast"] }
  var inputSchema: SkillInputSchema { .empty }
  var hasSideEffects: Bool { false }
  var requiresConfirmation: Bool { false }
  func canHandle(_ text: String) -> Bool { false }
  func extractArguments(from text: String, clock: AgentClock) -> SkillArguments { SkillArguments() }
  func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    .text("rain expected")
  }
}

/// Collects the states an agent enters.
@MainActor
final class StateRecorder {
  private(set) var states: [AgentState] = []
  private var task: Task<Void, Never>?

  init(_ agent: Agent) {
    let stream = agent.stateUpdates()
    task = Task { @MainActor [weak self] in
      for await state in stream { self?.states.append(state) }
    }
  }

  /// Waits (yielding) until a recorded state satisfies `predicate`.
  func waitFor(_ predicate: (AgentState) -> Bool) async {
    while !states.contains(where: predicate) { await Task.yield() }
  }

  func stop() { task?.cancel() }
}
