import Engram
import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// The engine's topics as a skill sees them (`SkillContext.memories`, `agenda`, `preferences`),
/// and the adapters the agent builds over the engine.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct SkillContextTests {
  @Test func aSkillsMemorySearchFindsMemoriesOnlyWithKindsAndDates() async throws {
    let memory = try TestMemory()
    let context = context("green tea", memory: memory)
    let id = try await context.memories.remember(
      "I prefer green tea in the morning", kind: .preference, at: context.clock.now)
    // A turn saying the same is left out: every id the search returns is one forget deletes.
    _ = try await memory.engine.conversation.appendTurn(role: "user", content: "green tea is great")
    let hits = try await context.memories.search("green tea", k: 5)
    #expect(hits.map(\.id) == [id])
    #expect(hits.first?.kind == .memory)
    #expect(hits.first?.memoryKind == .preference)
    #expect(hits.first?.timestamp == context.clock.now)
    #expect(try await context.memories.forget(kind: .memory, id: id))
    #expect(try await context.memories.search("green tea", k: 5).isEmpty)
    #expect(try await memory.engine.search("green tea", k: 5).map(\.kind) == [.message])
  }

  @Test func aSkillsAgendaAndPreferencesAreTheEnginesTables() async throws {
    let memory = try TestMemory()
    let context = context("x", memory: memory)
    let due = wallClock(2025, 6, 12, 15, in: Zones.shanghai)
    let event = try await context.agenda.addItem(kind: .event, title: "standup", body: "room 2", due: due)
    #expect(try await memory.engine.agentRecords.item(event)?.body == "room 2")
    #expect(try await context.agenda.agenda(kind: .event).map(\.id) == [event])
    try await context.preferences.set("language", "zh")
    #expect(try await memory.engine.userPreferences.get("language") == "zh")
  }

  @Test func kindNamesMapToTheEnginesMemoryKinds() {
    #expect(RememberSkill.memoryKind(named: "fact") == .fact)
    #expect(RememberSkill.memoryKind(named: "preference") == .preference)
    #expect(RememberSkill.memoryKind(named: "reminder") == .event)
    #expect(RememberSkill.memoryKind(named: "hobby") == .fact)
    #expect(RememberSkill.memoryKind(named: nil) == .fact)
  }

  @Test func embedderAdapterFeedsTheRouter() async throws {
    let embedding = EmbedderPhraseEmbedding(try HashingEmbedder(dimension: 64))
    let vectors = try await embedding.embed(["remind me", "what time is it"])
    #expect(vectors.count == 2)
    #expect(vectors.allSatisfy { $0.count == 64 })
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let router = SkillRouter(registry: registry, embedding: embedding)
    let scores = try await router.semanticScores(
      for: "what time is it now", among: ["time.now", "note.create"])
    #expect(scores.first?.0 == "time.now")
  }
}
