import Engram
import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct EngineAgentMemoryTests {
  @Test func searchReturnsMemoriesWithKindsAndDates() async throws {
    let folder = try AgentTemporaryFolder()
    let engine = try openEngine(folder.path("m.sqlite"))
    defer { engine.close() }
    let memory = EngineAgentMemory(engine: engine, clock: testClock)
    let id = try await memory.remember(content: "I prefer green tea in the morning", kind: .preference)
    _ = try await engine.conversation.appendTurn(role: "user", content: "green tea is great")
    let hits = try await memory.search(query: "green tea", k: 5)
    #expect(hits.map(\.id) == [id])
    #expect(hits.first?.kind == .memory)
    #expect(hits.first?.memoryKind == .preference)
    #expect(hits.first?.timestamp == testClock.now)
    try await memory.forget(id: id)
    #expect(try await memory.search(query: "green tea", k: 5).isEmpty)
    await #expect(throws: EngramError.notFound(kind: .memory, id: id)) { try await memory.forget(id: id) }
  }

  @Test func itemsGoToTheAgentItemsTable() async throws {
    let folder = try AgentTemporaryFolder()
    let engine = try openEngine(folder.path("m.sqlite"))
    defer { engine.close() }
    let memory = EngineAgentMemory(engine: engine, clock: testClock)
    let due = wallClock(2025, 6, 12, 15, in: Zones.shanghai)
    let reminder = try await memory.storeReminder(title: "send minutes", date: due, body: nil)
    let event = try await memory.storeEvent(title: "standup", date: due, body: "room 2")
    let note = try await memory.storeNote(title: "ideas", date: nil, body: "a, b")
    #expect(try engine.agentRecords.item(reminder)?.kind == .reminder)
    #expect(try engine.agentRecords.item(reminder)?.dueAt == due)
    #expect(try engine.agentRecords.item(event)?.body == "room 2")
    #expect(try engine.agentRecords.item(note)?.dueAt == nil)
    await #expect(throws: AgentRecordError.emptyField("title")) {
      _ = try await memory.storeReminder(title: " ", date: due, body: nil)
    }
    try await memory.setPreference(key: "language", value: "zh")
    #expect(try await memory.preference(key: "language") == "zh")
    #expect(try await memory.preference(key: "missing") == nil)
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
