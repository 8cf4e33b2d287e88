import Engram
import EngramTestSupport
import Foundation
import Testing

// The Swift snippets of the Engram documentation catalog (Sources/Engram/Engram.docc), verbatim:
// `scripts/check-docc-snippets.py` (run by `make docs`) fails when an article's snippet is not
// found here, so every snippet compiles with the tests and runs against a temporary memory
// made with the hashing embedder.

// GettingStarted.md: open a memory
func openMemory(at path: String) throws -> MemoryEngine {
  let configuration = EngramConfiguration(embedder: try HashingEmbedder(dimension: 256))
  return try MemoryEngine(path: path, configuration: configuration)
}

// GettingStarted.md: remember facts and preferences
func rememberAboutAnn(in engine: MemoryEngine) async throws -> Int64 {
  let id = try await engine.memories.remember(
    "Ann is allergic to peanuts", kind: .fact, importance: 0.9)
  try await engine.userPreferences.set("seat", "aisle", pinned: true)
  return id
}

// GettingStarted.md: record a conversation
func recordTrip(in engine: MemoryEngine) async throws -> Int64 {
  let session = try await engine.conversation.startSession(name: "lisbon")
  try await engine.conversation.appendTurn(
    role: "user", content: "I'm going to Lisbon for a week in May!", speaker: "Ann", session: session)
  try await engine.conversation.appendTurn(
    role: "assistant", content: "Nice! Do you need a hotel?", session: session)
  return session
}

// GettingStarted.md: ingest a chat history
func ingestHistory(from file: String, into engine: MemoryEngine) async throws -> Int {
  let report = try await engine.conversation.ingest(path: file)
  return report.turns
}

// GettingStarted.md: search
func searchAllergies(in engine: MemoryEngine) async throws -> [SearchHit] {
  let hits = try await engine.search("what is Ann allergic to?", k: 5)
  return hits.filter { $0.score > 0 }
}

// GettingStarted.md: give a language model its context
func promptContext(for request: String, in engine: MemoryEngine) async throws -> String {
  let context = try await engine.context(for: request, budget: 800)
  return context.rendered
}

// MemoryModel.md: memories
func moveAnn(in engine: MemoryEngine) async throws -> (current: [MemoryItem], all: [MemoryItem]) {
  let old = try await engine.memories.remember("Ann lives in Porto", kind: .fact)
  try await engine.memories.update(old, content: "Ann lives in Lisbon")
  let current = try await engine.memories.list(kind: .fact)
  let all = try await engine.memories.list(kind: .fact, includeSuperseded: true)
  return (current, all)
}

// MemoryModel.md: summaries
func planCompaction(of engine: MemoryEngine) async throws -> CompactionReport {
  try await engine.compact(dryRun: true)
}

// HybridSearch.md: modes
func compareModes(in engine: MemoryEngine) async throws -> [SearchMode: [Int64]] {
  var found: [SearchMode: [Int64]] = [:]
  for mode in SearchMode.allCases {
    let hits = try await engine.search("peanut allergy", k: 3, mode: mode, recordAccess: false)
    found[mode] = hits.map(\.id)
  }
  return found
}

// HybridSearch.md: retrieval weights
func keywordHeavyConfiguration() throws -> EngramConfiguration {
  var configuration = EngramConfiguration(embedder: try HashingEmbedder(dimension: 256))
  configuration.retrieval.vectorWeight = 0.25
  configuration.retrieval.reranker = nil
  return configuration
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct DocCSnippetTests {
  /// A JSON-lines chat export of four turns in two sessions (docs/tour/chat.jsonl).
  static let chatExport = """
    {"session": "lisbon", "speaker": "Ann", "role": "user", "timestamp": "2025-04-02T17:59:00Z", \
    "content": "I'm going to Lisbon for a week in May!"}
    {"session": "lisbon", "speaker": "assistant", "role": "assistant", "timestamp": "2025-04-02T18:00:00Z", \
    "content": "Nice! Do you need a hotel?"}
    {"session": "lisbon", "speaker": "Ann", "role": "user", "timestamp": "2025-04-02T18:01:00Z", \
    "content": "Yes, somewhere in Alfama, and I'm allergic to peanuts, so no breakfast buffets please."}
    {"session": "work", "speaker": "Ann", "role": "user", "timestamp": "2025-04-03T09:00:00Z", \
    "content": "明天下午三点和设计团队开会"}

    """

  @Test func gettingStartedOpensRemembersIngestsAndSearches() async throws {
    let folder = try TemporaryFolder()
    let engine = try openMemory(at: folder.path("memory.sqlite"))
    defer { engine.close() }
    #expect(engine.embedder.modelID.contains("hashing"))

    let memory = try await rememberAboutAnn(in: engine)
    #expect(try await engine.memories.get(memory)?.content == "Ann is allergic to peanuts")
    #expect(try await engine.userPreferences.get("seat") == "aisle")

    let session = try await recordTrip(in: engine)
    let turns = try await engine.conversation.recentTurns(limit: 10, session: session)
    #expect(turns.map(\.text) == ["I'm going to Lisbon for a week in May!", "Nice! Do you need a hotel?"])
    #expect(turns.map(\.speaker) == ["Ann", "assistant"])

    let export = folder.path("chat.jsonl")
    try Data(Self.chatExport.utf8).write(to: URL(fileURLWithPath: export))
    #expect(try await ingestHistory(from: export, into: engine) == 4)

    let hits = try await searchAllergies(in: engine)
    #expect(hits.contains { $0.kind == .memory && $0.id == memory })
    #expect(hits.contains { $0.kind == .message && $0.text.contains("Alfama") })

    let prompt = try await promptContext(for: "plan dinner with Ann", in: engine)
    #expect(prompt.contains("Ann is allergic to peanuts"))
    #expect(prompt.contains("aisle"))
  }

  @Test func memoryModelKeepsHistoryAndPlansCompaction() async throws {
    let folder = try TemporaryFolder()
    let engine = try openMemory(at: folder.path("memory.sqlite"))
    defer { engine.close() }
    let (current, all) = try await moveAnn(in: engine)
    #expect(current.map(\.content) == ["Ann lives in Lisbon"])
    #expect(Set(all.map(\.content)) == ["Ann lives in Porto", "Ann lives in Lisbon"])

    let old = try await engine.conversation.startSession(name: "last spring")
    let then = Date().addingTimeInterval(-90 * 86_400)
    for (index, text) in ["Hi!", "The boiler needs servicing in March.", "Thanks!"].enumerated() {
      try await engine.conversation.appendTurn(
        role: "user", content: text, session: old, at: then.addingTimeInterval(Double(index)))
    }
    let report = try await planCompaction(of: engine)
    #expect(report.dryRun)
    #expect(report.sessionsSummarized == 1)
    #expect(report.summariesCreated == 1)
    // A dry run changes nothing.
    #expect(try await engine.conversation.recentTurns(limit: 10, session: old).count == 3)
  }

  @Test func hybridSearchComparesModesAndTakesWeights() async throws {
    let folder = try TemporaryFolder()
    let engine = try openMemory(at: folder.path("memory.sqlite"))
    defer { engine.close() }
    let peanuts = try await engine.memories.remember("Ann is allergic to peanuts", kind: .fact)
    try await engine.memories.remember("Ann's sister Maya gets married on 21 June", kind: .event)
    let found = try await compareModes(in: engine)
    #expect(Set(found.keys) == Set(SearchMode.allCases))
    #expect(found[.keyword]?.first == peanuts)
    #expect(found[.hybrid]?.first == peanuts)

    let configuration = try keywordHeavyConfiguration()
    #expect(configuration.retrieval.vectorWeight == 0.25)
    #expect(configuration.retrieval.reranker == nil)
    let other = try MemoryEngine(path: folder.path("other.sqlite"), configuration: configuration)
    defer { other.close() }
    let stored = try await other.memories.remember("Ann is allergic to peanuts", kind: .fact)
    #expect(try await other.search("peanuts", k: 1).map(\.id) == [stored])
  }
}
