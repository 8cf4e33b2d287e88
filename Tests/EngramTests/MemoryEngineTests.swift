import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// A fresh temporary folder per test, removed afterwards.
final class TemporaryFolder {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("engram-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  deinit { try? FileManager.default.removeItem(at: url) }
}

/// A hashing-embedder configuration that keeps a snapshot at every size
/// (`snapshotMinimumRows` 0), so the snapshot tests' small memories exercise it;
/// `SnapshotThresholdTests` covers the default, which keeps none below 1,000 rows.
func hashingConfiguration(dimension: Int = 256) -> EngramConfiguration {
  var configuration = EngramConfiguration(embedder: try! HashingEmbedder(dimension: dimension))
  configuration.snapshotMinimumRows = 0
  return configuration
}

/// `configuration` with 5 candidates a retriever and no re-ranker, for
/// `checkAnExcludedSessionCannotCrowdTheOthersOut`.
func crowdingConfiguration(_ configuration: EngramConfiguration) -> EngramConfiguration {
  var configuration = configuration
  configuration.retrieval.candidatesPerRetriever = 5
  configuration.retrieval.reranker = nil
  return configuration
}

/// On an empty engine of `crowdingConfiguration`: the excluded session holds 12 turns that
/// match the query better than the one turn of the other session, which must still be
/// found in every mode (without the exclusion the chat's turns fill every place).
func checkAnExcludedSessionCannotCrowdTheOthersOut(_ engine: MemoryEngine) async throws {
  let kept = try await engine.conversation.startSession(name: "diary")
  let answer = try await engine.conversation.appendTurn(
    role: "user", content: "I left the violet umbrella at the station.", session: kept)
  let chat = try await engine.conversation.startSession(name: "chat")
  for index in 1...12 {
    _ = try await engine.conversation.appendTurn(
      role: "user", content: "violet umbrella? violet umbrella! \(index)", session: chat)
  }
  for mode in SearchMode.allCases {
    let hits = try await engine.search(
      "violet umbrella", k: 3, mode: mode, filters: SearchFilters(excludedSessions: [chat]),
      recordAccess: false)
    #expect(hits.map(\.id) == [answer], "mode \(mode)")
  }
  let all = try await engine.search("violet umbrella", k: 3, mode: .keyword, recordAccess: false)
  #expect(!all.contains { $0.id == answer })
}

func writeFile(_ text: String, to path: String) throws {
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct MemoryEngineTests {
  @Test func remembersAndFindsByEveryMode() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let climbing = try await engine.memories.remember("Alice goes rock climbing every Saturday", kind: .fact)
    _ = try await engine.memories.remember("The dentist appointment is on Tuesday", kind: .event)
    _ = try await engine.memories.remember("我周末去攀岩了", kind: .note)
    for mode in SearchMode.allCases {
      let hits = try await engine.search("rock climbing", k: 2, mode: mode)
      #expect(hits.first?.id == climbing, "mode \(mode)")
      #expect(hits.first?.kind == .memory)
    }
    let hybrid = try await engine.search("climbing Saturday", k: 1)
    #expect(hybrid[0].bm25 != nil && hybrid[0].cosine != nil)
    #expect(hybrid[0].provenance.contains("keyword") && hybrid[0].provenance.contains("vector"))
    let chinese = try await engine.search("攀岩", k: 1, mode: .keyword)
    #expect(chinese.first?.text == "我周末去攀岩了")
    // Access statistics are recorded for returned memories (off the read path).
    try engine.flushAccessStatistics()
    let item = try #require(try await engine.memories.get(climbing))
    #expect(item.accessCount >= 3)
  }

  @Test func anExcludedSessionsTurnsCannotCrowdTheOthersOut() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(
      path: folder.path("m.sqlite"), configuration: crowdingConfiguration(hashingConfiguration()))
    defer { engine.close() }
    try await checkAnExcludedSessionCannotCrowdTheOthersOut(engine)
  }

  @Test func weeklyActivityCountsTurnsAndMemoriesPerWeekFromMonday() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    // 2025-06-08 is a Sunday, 2025-06-09 a Monday.
    let sunday = Date(timeIntervalSince1970: 1_749_384_000)  // 2025-06-08T12:00:00Z
    _ = try await engine.conversation.appendTurn(role: "user", content: "one", at: sunday)
    _ = try await engine.conversation.appendTurn(
      role: "user", content: "two", at: sunday.addingTimeInterval(86_400))
    _ = try await engine.conversation.appendTurn(
      role: "user", content: "three", at: sunday.addingTimeInterval(2 * 86_400))
    _ = try await engine.memories.remember("a fact", kind: .fact, at: sunday.addingTimeInterval(86_400))
    let weeks = try await engine.maintenance.weeklyActivity()
    #expect(weeks.map(\.turns) == [1, 2])
    #expect(weeks.map(\.memories) == [0, 1])
    #expect(
      weeks.map { DateParser.iso8601($0.weekStart, timeZone: .gmt) } == [
        "2025-06-02T00:00:00Z", "2025-06-09T00:00:00Z",
      ])
  }

  @Test func updatingAMemorysKindKeepsTheOldVersionSuperseded() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let id = try await engine.memories.remember("dinner with Ana on Friday", kind: .fact)
    #expect(try await engine.memories.update(id, content: "dinner with Ana on Friday") == id)
    let newID = try await engine.memories.update(id, content: "dinner with Ana on Friday", kind: .event)
    #expect(newID != id)
    #expect(try await engine.memories.get(newID)?.kind == .event)
    #expect(try await engine.memories.get(id)?.supersededBy == newID)
  }

  @Test(arguments: [
    "\"unbalanced", "(a OR", "NOT", "AND AND", "NEAR(x y", "col:value", "*", "-x", "^start", "a\"b'c",
    "'; DROP TABLE memories; --", "🙂", String(repeating: "x ", count: 5_000),
  ])
  func queriesThatLookLikeSyntaxAreSearchedAsText(query: String) async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let note = try await engine.memories.remember("NOT a col:value (a OR b) x", kind: .note)
    for mode in SearchMode.allCases {
      // No syntax error: the query is text. Whatever is found is the one note, and a vector
      // search (which always ranks every row) finds it.
      let hits = try await engine.search(query, k: 3, mode: mode)
      #expect(hits.allSatisfy { $0.id == note && $0.kind == .memory }, "\(mode): \(hits)")
      if mode == .vector { #expect(hits.count == 1, "\(query)") }
    }
    #expect(try await engine.memories.list().count == 1)
  }

  @Test func rejectsBadArguments() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    await #expect(throws: EngramError.invalidK(0)) { try await engine.search("x", k: 0) }
    await #expect(throws: EngramError.emptyText) { try await engine.search("   ") }
    await #expect(throws: EngramError.emptyText) { try await engine.memories.remember("") }
    await #expect(throws: (any Error).self) { try await engine.memories.remember("x", importance: 2) }
    await #expect(throws: (any Error).self) { try await engine.memories.remember("x", importance: .nan) }
    await #expect(throws: EngramError.invalidBudget(0)) { try await engine.context(for: "x", budget: 0) }
    #expect(try await engine.memories.list().isEmpty)
  }

  @Test func hitsCarryTextMetadataAndNeighbourProvenance() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let session = try await engine.conversation.startSession(name: "s")
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let question = try await engine.conversation.appendTurn(
      role: "user", content: "Where did you go hiking last weekend?", speaker: "Ann", session: session,
      at: start, metadata: ["dia_id": "D1:1"])
    let answer = try await engine.conversation.appendTurn(
      role: "assistant", content: "Up the ridge trail by the lake", speaker: "Bob", session: session,
      at: start.addingTimeInterval(60), metadata: ["dia_id": "D1:2", "n": 2])
    let memory = try await engine.memories.remember("Bob likes the ridge trail", kind: .preference)

    let hits = try await engine.search("hiking weekend", k: 10, filters: SearchFilters(kinds: [.message]))
    let first = try #require(hits.first { $0.id == question && $0.kind == .message })
    #expect(first.text == "Where did you go hiking last weekend?")
    #expect(first.speaker == "Ann" && first.sessionID == session && first.timestamp == start)
    #expect(first.metadata == ["dia_id": "D1:1"])
    // The answer follows a matching question: it gains a share of the question's score.
    let second = try #require(hits.first { $0.id == answer && $0.kind == .message })
    #expect(second.provenance.contains("neighbour"))
    #expect(second.metadata == ["dia_id": "D1:2", "n": 2])
    #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.score >= $1.score })
    // A large k ranks by sorting instead of insertion; the order is the same.
    let many = try await engine.search("hiking weekend", k: 50, filters: SearchFilters(kinds: [.message]))
    #expect(many.map(\.id) == hits.map(\.id) && many.map(\.score) == hits.map(\.score))

    let remembered = try await engine.search("ridge trail", k: 10, filters: SearchFilters(kinds: [.memory]))
    #expect(remembered.map(\.id) == [memory])
    #expect(remembered.first?.text == "Bob likes the ridge trail")
    #expect(remembered.first?.memoryKind == .preference)
    try engine.flushAccessStatistics()
    #expect(try await engine.memories.get(memory)?.accessCount == 1)
  }

  @Test(arguments: [
    "", " ", "\t\n\r\u{0B}\u{0C}", "\u{3000}\u{00A0}\u{2028}\u{85}", "x", " \u{200B} ", "\u{FEFF}",
  ])
  func blankQueriesAreThoseTrimmingWouldEmpty(text: String) {
    #expect(
      TextChecks.isBlank(text) == text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
  }

  @Test func blankMatchesTrimmingForEveryASCIIScalar() {
    for value in UInt8(0)..<128 {
      let text = String(UnicodeScalar(value))
      #expect(
        TextChecks.isBlank(text) == text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
        "scalar \(value)")
    }
  }

  @Test func filtersByKindSessionAndTime() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let old = Date(timeIntervalSince1970: 1_600_000_000)
    let new = Date(timeIntervalSince1970: 1_700_000_000)
    let first = try await engine.conversation.startSession(name: "first", at: old)
    let second = try await engine.conversation.startSession(name: "second", at: new)
    let oldTurn = try await engine.conversation.appendTurn(
      role: "user", content: "we talked about the garden", session: first, at: old)
    let newTurn = try await engine.conversation.appendTurn(
      role: "user", content: "the garden needs water", session: second, at: new)
    let memory = try await engine.memories.remember("garden tools are in the shed", at: new)

    let turns = try await engine.search("garden", k: 10, filters: SearchFilters(kinds: [.message]))
    #expect(Set(turns.map(\.id)) == [oldTurn, newTurn])
    let memories = try await engine.search("garden", k: 10, filters: SearchFilters(kinds: [.memory]))
    #expect(memories.map(\.id) == [memory])
    let inSecond = try await engine.search("garden", k: 10, filters: SearchFilters(session: "second"))
    #expect(inSecond.map(\.id) == [newTurn])
    let bySessionID = try await engine.search("garden", k: 10, filters: SearchFilters(session: String(first)))
    #expect(bySessionID.map(\.id) == [oldTurn])
    let unknown = try await engine.search("garden", k: 10, filters: SearchFilters(session: "nope"))
    #expect(unknown.isEmpty)
    let recent = try await engine.search(
      "garden", k: 10,
      filters: SearchFilters(kinds: [.message], since: Date(timeIntervalSince1970: 1_650_000_000)))
    #expect(recent.map(\.id) == [newTurn])
    let early = try await engine.search(
      "garden", k: 10, filters: SearchFilters(until: Date(timeIntervalSince1970: 1_650_000_000)))
    #expect(early.map(\.id) == [oldTurn])
  }

  @Test func updatesKeepHistoryAndForgetRemovesEverywhere() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let old = try await engine.memories.remember("Bob lives in Paris", kind: .fact)
    let new = try await engine.memories.update(old, content: "Bob lives in Berlin")
    #expect(try await engine.memories.get(old)?.supersededBy == new)
    let current = try await engine.search("Bob lives", k: 5)
    #expect(current.map(\.id) == [new])
    let all = try await engine.search("Bob lives", k: 5, filters: SearchFilters(includeSuperseded: true))
    #expect(Set(all.map(\.id)) == [old, new])

    let preview = try await engine.memories.forget(matching: "Berlin", dryRun: true)
    #expect(preview.map(\.id) == [new])
    #expect(try await engine.memories.get(new) != nil)
    let forgotten = try await engine.memories.forget(matching: "Berlin", dryRun: false)
    #expect(forgotten.map(\.id) == [new])
    #expect(try await engine.memories.get(new) == nil)
    #expect(try await engine.search("Berlin", k: 5, mode: .keyword).isEmpty)
    #expect(try await engine.search("Berlin", k: 5, mode: .vector).allSatisfy { $0.id != new })
    #expect(try await engine.memories.forget(id: 999_999) == false)
  }

  @Test func reopensFromSnapshotAndRebuildsWhenItIsStaleOrDamaged() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    var engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    let id = try await engine.memories.remember("the spare key is under the blue flower pot")
    await engine.close()
    engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    #expect(engine.indexSource == .snapshot)
    #expect(try await engine.search("spare key", k: 1, mode: .vector).first?.id == id)
    // A write the snapshot does not know about (as after a crash before close).
    let second = try await engine.memories.remember("the car is parked on level 3")
    let snapshot = try Data(contentsOf: try #require(engine.snapshotURL))
    await engine.close()
    try snapshot.write(to: URL(fileURLWithPath: path + ".vectors"))
    engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    #expect(engine.indexSource == .database)
    #expect(try await engine.search("car parked level", k: 1, mode: .vector).first?.id == second)
    await engine.close()
    // A damaged snapshot is ignored, never trusted.
    try Data("garbage".utf8).write(to: URL(fileURLWithPath: path + ".vectors"))
    engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    #expect(engine.indexSource == .database)
    #expect(try await engine.doctor().healthy)
    await engine.close()
  }

  @Test func refusesAnotherModelUntilReindexed() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration(dimension: 128))
    let id = try await engine.memories.remember("tea with oat milk, no sugar", kind: .preference)
    await engine.close()
    #expect(throws: EngramError.self) {
      try MemoryEngine(path: path, configuration: hashingConfiguration(dimension: 64))
    }
    let reindexed = try await MemoryEngine.reindex(
      path: path, configuration: hashingConfiguration(dimension: 64))
    defer { reindexed.close() }
    #expect(reindexed.embedder.dimension == 64)
    #expect(try await reindexed.search("oat milk tea", k: 1, mode: .vector).first?.id == id)
    #expect(try await reindexed.doctor().healthy)
  }

  /// Regression (found by the CLI kill test): `engram reindex` stored the new embedder spec
  /// in a second transaction, so a kill between the two left vectors of the new model under
  /// the old spec, and the CLI refused to open the memory. The spec now commits with them.
  @Test func reindexRecordsTheEmbedderSpecWithTheVectors() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration(dimension: 64))
    _ = try await engine.memories.remember("tea with oat milk, no sugar", kind: .preference)
    try await engine.maintenance.setEmbedderSpec("hashing:64")
    await engine.close()

    // A reindex that fails while embedding changes neither the vectors nor the spec.
    await #expect(throws: EngramError.self) {
      try await MemoryEngine.reindex(
        path: path, configuration: EngramConfiguration(embedder: BrokenEmbedder(fault: .nan)),
        embedderSpec: "broken")
    }
    #expect(try MemoryEngine.storedEmbedderSettings(path: path).spec == "hashing:64")
    // A blank spec is refused before anything changes.
    await #expect(throws: EngramError.emptyText) {
      try await MemoryEngine.reindex(
        path: path, configuration: hashingConfiguration(dimension: 32), embedderSpec: "  ")
    }
    #expect(try MemoryEngine.storedEmbedderSettings(path: path).modelID == "hashing-v1-64")

    let reindexed = try await MemoryEngine.reindex(
      path: path, configuration: hashingConfiguration(dimension: 32), embedderSpec: "hashing:32")
    await reindexed.close()
    let settings = try MemoryEngine.storedEmbedderSettings(path: path)
    #expect(settings.spec == "hashing:32")
    #expect(settings.modelID == "hashing-v1-32")
  }

  @Test func deferredTurnsAreKeywordSearchableAtOnceAndEmbeddedLater() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let id = try await engine.conversation.appendTurn(
      role: "user", content: "the violin lesson moved to Thursday", embedNow: false)
    #expect(try await engine.search("violin lesson", k: 1, mode: .keyword).first?.id == id)
    #expect(try await engine.search("violin lesson", k: 1, mode: .vector).isEmpty)
    #expect(try await engine.doctor().healthy == false)
    #expect(try await engine.conversation.embedPendingTurns() == 1)
    #expect(try await engine.search("violin lesson", k: 1, mode: .vector).first?.id == id)
    #expect(try await engine.conversation.embedPendingTurns() == 0)
    #expect(try await engine.doctor().healthy)
    // The same query text is embedded once and reused.
    let first = try await engine.embedQuery("violin")
    #expect(try await engine.embedQueries(["violin", "lesson"])[0] == first)
  }

  @Test func anotherEngineOnTheSameFileSeesEveryWrite() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let first = try MemoryEngine(path: path, configuration: hashingConfiguration())
    let second = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer {
      first.close()
      second.close()
    }
    let id = try await first.memories.remember("the boat is moored at pier seven")
    let seen = try await second.search("boat moored pier", k: 1, mode: .vector)
    #expect(seen.first?.id == id)
    let other = try await second.memories.remember("the kayak is in the garage")
    #expect(try await first.search("kayak garage", k: 1, mode: .vector).first?.id == other)
    #expect(try await first.memories.forget(id: other))
    #expect(try await second.search("kayak garage", k: 1, mode: .vector).first?.id != other)
    #expect(try await first.doctor().healthy)
    #expect(try await second.doctor().healthy)
  }

  @Test func concurrentSearchesAndWritesAgree() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        for index in 0..<40 {
          _ = try await engine.memories.remember("fact number \(index) about topic \(index % 5)")
        }
      }
      for _ in 0..<3 {
        group.addTask {
          // A search running beside the writer sees only whole, committed memories: at most k,
          // each once, each one of the facts written.
          for index in 0..<30 {
            let hits = try await engine.search("topic \(index % 5)", k: 5, recordAccess: false)
            #expect(hits.count <= 5)
            #expect(Set(hits.map(\.id)).count == hits.count, "\(hits.map(\.id))")
            #expect(hits.allSatisfy { $0.kind == .memory && $0.text.hasPrefix("fact number ") }, "\(hits)")
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(try await engine.memories.list(limit: 1000).count == 40)
    #expect(try await engine.doctor().healthy)
  }
}
