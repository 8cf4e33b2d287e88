import EngramTestSupport
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct SkillRegistryTests {
  @Test func duplicateIDIsATypedErrorAndLeavesRegistryUnchanged() throws {
    let registry = SkillRegistry()
    try registry.register(TimeNowSkill())
    #expect(throws: SkillRegistryError.duplicateID("time.now")) { try registry.register(TimeNowSkill()) }
    #expect(registry.allSkills.count == 1)
  }

  @Test func invalidIDIsRejected() {
    struct Blank: Skill {
      var id: String { "has space" }
      var displayName: String { "x" }
      var description: String { "x" }
      var inputSchema: SkillInputSchema { .empty }
      func extractArguments(from text: String, clock: AgentClock) -> SkillArguments { [:] }
      func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput { .text("") }
    }
    let registry = SkillRegistry()
    #expect(throws: SkillRegistryError.invalidID("has space")) { try registry.register(Blank()) }
  }

  @Test func unregisterRemovesAndUnknownThrows() throws {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    try registry.unregister(id: "calculator")
    #expect(registry.skill(id: "calculator") == nil)
    #expect(throws: SkillRegistryError.unknownSkill("calculator")) {
      try registry.unregister(id: "calculator")
    }
  }

  @Test func enabledStateIsPersistedThroughTheStore() async throws {
    let store = InMemorySkillStateStore()
    let registry = SkillRegistry(store: store)
    try BuiltInSkills.register(in: registry)
    try await registry.setEnabled(false, id: "memory.forget")
    #expect(!registry.isEnabled(id: "memory.forget"))
    #expect(store.isEnabled(skillID: "memory.forget") == false)
    #expect(!registry.skills().contains { $0.id == "memory.forget" })
    #expect(throws: SkillRegistryError.skillDisabled("memory.forget")) {
      try registry.enabledSkill(id: "memory.forget")
    }

    // A new registry over the same store starts with the persisted flag.
    let reopened = SkillRegistry(store: store)
    try BuiltInSkills.register(in: reopened)
    #expect(!reopened.isEnabled(id: "memory.forget"))
    #expect(reopened.isEnabled(id: "time.now"))
    await #expect(throws: SkillRegistryError.unknownSkill("nope")) {
      try await reopened.setEnabled(true, id: "nope")
    }
  }

  /// The memory's flags: a registry over `EngineSkillStateStore` starts with those stored
  /// before it was made, and a flag set through it is stored for the next one.
  @Test func theEnginesFlagsAreReadWhenTheStoreIsMadeAndWrittenThroughIt() async throws {
    let folder = try AgentTemporaryFolder()
    let engine = try openEngine(folder.path("memory.sqlite"))
    defer { engine.close() }
    try await engine.agentRecords.setSkillEnabled(false, id: "calculator")
    let registry = SkillRegistry(store: try await EngineSkillStateStore(engine: engine))
    try BuiltInSkills.register(in: registry)
    #expect(!registry.isEnabled(id: "calculator"))
    #expect(registry.isEnabled(id: "time.now"))
    try await registry.setEnabled(false, id: "time.now")
    #expect(try await engine.agentRecords.skillEnabled(id: "time.now") == false)
    #expect(try await engine.agentRecords.skillFlags() == ["calculator": false, "time.now": false])
    let reopened = SkillRegistry(store: try await EngineSkillStateStore(engine: engine))
    try BuiltInSkills.register(in: reopened)
    #expect(!reopened.isEnabled(id: "time.now"))
    #expect(reopened.isEnabled(id: "memory.recall"))
  }

  @Test func scenarioSelectsByTagsAndCategory() throws {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let office = registry.skills(in: SkillScenario(name: "office", tags: ["office"])).map(\.id)
    #expect(
      office == [
        "reminder.create", "calendar.create", "note.create", "time.now", "calculator", "reminder.list",
        "reminder.cancel", "reminder.update", "calendar.list", "calendar.cancel", "calendar.update",
      ])
    let memory = registry.skills(in: SkillScenario(name: "memory", tags: ["memory"])).map(\.id)
    #expect(memory == ["memory.remember", "memory.recall", "memory.forget"])
    #expect(registry.skills(in: .all).count == 15)
  }

  @Test func catalogListsEnabledSkillsWithParameters() async throws {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    try await registry.setEnabled(false, id: "calculator")
    let catalog = registry.catalog()
    #expect(catalog.contains("- reminder.create (Create reminder): Creates a reminder"))
    #expect(catalog.contains("when: date, required"))
    #expect(catalog.contains("[asks for confirmation]"))
    #expect(!catalog.contains("- calculator"))
    #expect(
      !catalog.contains(
        "- time.now (Current time): Tells the current time, date and weekday in the user's time zone, or in the time zone of a named city or zone. ["
      ))
    #expect(catalog.contains("    zone: string, optional — IANA time zone identifier"))
  }
}
