import Engram
import EngramAgent
import EngramTestSupport
import Foundation
import Observation
import Testing

// The Swift snippets of the EngramAgent documentation catalog
// (Sources/EngramAgent/EngramAgent.docc), verbatim: `scripts/check-docc-snippets.py` (run by
// `make docs`) fails when an article's snippet is not found here, so every snippet compiles
// with the tests and runs against a temporary memory made with the hashing embedder.

// AddingASkill.md: declare the skill
struct PackingListSkill: PhraseRuledSkill {
  var id: String { "travel.packing" }
  var displayName: String { "Packing list" }
  var description: String { "Suggests what to pack for a trip, from what the user told before." }
  var inputSchema: SkillInputSchema {
    SkillInputSchema([SkillParameter("city", .string, required: false, description: "where the trip goes")])
  }
  var hasSideEffects: Bool { false }
  var requiresConfirmation: Bool { false }
  var samplePhrases: [String] { ["what should I pack", "packing list"] }

  func canHandle(_ text: String) -> Bool {
    text.lowercased().contains("pack")
  }

  func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    guard let range = text.range(of: " for ") else { return SkillArguments() }
    let city = text[range.upperBound...].trimmingCharacters(in: .punctuationCharacters)
    return city.isEmpty ? SkillArguments() : ["city": .string(city)]
  }

  func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    var items = ["passport", "phone charger"]
    let allergies = try await context.memories.search("allergic", k: 3)
    if allergies.contains(where: { $0.text.localizedCaseInsensitiveContains("allergic") }) {
      items.append("allergy medication")
    }
    let city = arguments["city"]?.stringValue ?? "your trip"
    return .list(title: "Packing for \(city)", items: items)
  }
}

// AddingASkill.md: register it
func makeRegistry() throws -> SkillRegistry {
  let registry = SkillRegistry()
  try registry.register(PackingListSkill())
  try BuiltInSkills.register(in: registry)
  return registry
}

// AddingASkill.md: how a request reaches it
@MainActor
func askForPackingList(engine: MemoryEngine, registry: SkillRegistry) async throws -> String? {
  let agent = try await Agent(engine: engine, registry: registry)
  let state = try await agent.send("What should I pack for Lisbon?")
  guard case .finished(let reply) = state else { return nil }
  return reply.text
}

// EmbeddingTheAgent.md: create an agent
@MainActor
func makeAgent(engine: MemoryEngine) async throws -> Agent {
  let registry = SkillRegistry()
  try BuiltInSkills.register(in: registry)
  return try await Agent(
    engine: engine, registry: registry, configuration: AgentConfiguration(sessionName: "app"))
}

// EmbeddingTheAgent.md: one state to render
@MainActor
@Observable
final class ChatScreen {
  let agent: Agent
  private(set) var lines: [String] = []
  private(set) var question: String?

  init(agent: Agent) {
    self.agent = agent
  }

  func submit(_ text: String) async {
    lines.append("> \(text)")
    do throws(AgentError) {
      show(try await agent.send(text))
    } catch {
      if case .busy = error {
        lines.append("Still working on the previous request.")
      } else {
        lines.append("That request could not be sent.")
      }
    }
  }

  func answer(confirmed: Bool) async {
    if confirmed {
      if let state = try? await agent.confirm() { show(state) }
    } else {
      await agent.cancel()
      show(agent.state)
    }
  }

  private func show(_ state: AgentState) {
    question = nil
    switch state {
    case .waitingForConfirmation(let action):
      question = action.confirmationText
    case .finished(let reply):
      lines.append(reply.text)
    case .failed(let failure):
      lines.append(failure.message)
    case .idle, .retrieving, .planning, .executing:
      break
    }
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) @MainActor struct DocCSnippetTests {
  @Test func anApplicationSkillIsRegisteredRoutedAndRun() async throws {
    let folder = try AgentTemporaryFolder()
    let engine = try openEngine(folder.path("memory.sqlite"))
    defer { engine.close() }
    try await engine.memories.remember("Ann is allergic to peanuts", kind: .fact)
    let registry = try makeRegistry()
    #expect(registry.allSkills.first?.id == "travel.packing")
    #expect(registry.skill(id: "reminder.create") != nil)
    let text = try await askForPackingList(engine: engine, registry: registry)
    #expect(text == "Packing for Lisbon\n- passport\n- phone charger\n- allergy medication")

    // Alone, with a memory that holds no allergy: the list says only what it knows.
    let skill = PackingListSkill()
    #expect(skill.canHandle("Packing list for Oslo, please"))
    let arguments = skill.extractArguments(from: "what should I pack for Oslo?", clock: testClock)
    #expect(arguments == ["city": .string("Oslo")])
    let empty = try openEngine(folder.path("empty.sqlite"))
    defer { empty.close() }
    let context = SkillContext(userText: "packing list", clock: testClock, engine: empty)
    let output = try await skill.execute(arguments: SkillArguments(), context: context)
    #expect(output == .list(title: "Packing for your trip", items: ["passport", "phone charger"]))
  }

  @Test func aChatScreenConfirmsAndDeclines() async throws {
    let folder = try AgentTemporaryFolder()
    let engine = try openEngine(folder.path("memory.sqlite"))
    defer { engine.close() }
    let agent = try await makeAgent(engine: engine)
    let screen = ChatScreen(agent: agent)

    await screen.submit("remind me to call mom tomorrow at 3pm")
    #expect(screen.question?.hasPrefix("Create reminder “call mom”") == true)
    #expect(try await engine.agentRecords.items().isEmpty)
    await screen.answer(confirmed: true)
    #expect(screen.question == nil)
    #expect(screen.lines.last?.hasPrefix("Reminder set: “call mom”") == true)
    #expect(try await engine.agentRecords.items(kind: .reminder).map(\.title) == ["call mom"])

    await screen.submit("remind me to water the plants tomorrow at 9am")
    #expect(screen.question?.hasPrefix("Create reminder “water the plants”") == true)
    await screen.answer(confirmed: false)
    #expect(screen.lines.last == "OK, I cancelled it. Nothing was changed.")
    #expect(try await engine.agentRecords.items(kind: .reminder).count == 1)

    await screen.submit("   ")
    #expect(screen.lines.last == "That request could not be sent.")
    #expect(screen.lines.filter { $0.hasPrefix("> ") }.count == 3)
  }
}
