import EngramEmbeddings
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram

/// Ingest adds each turn once: the same export twice adds nothing, a later cumulative export
/// adds only its new turns, and an ingest that stopped part way is completed by the next.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct IngestIdempotenceTests {
  /// `count` turns in sessions of 40, a minute apart.
  func conversation(_ count: Int, edit: [Int: String] = [:], ids: Bool = false) -> ConversationFile {
    let start = Date(timeIntervalSince1970: 1_735_689_600)
    var sessions: [ConversationSession] = []
    for index in 0..<count {
      if index % 40 == 0 {
        sessions.append(ConversationSession(name: "s\(index / 40)", startedAt: start, turns: []))
      }
      let turn = ConversationTurn(
        role: index % 2 == 0 ? "user" : "assistant", content: edit[index] ?? "turn \(index) about the lake",
        speaker: index % 2 == 0 ? "Ann" : nil, timestamp: start.addingTimeInterval(Double(index) * 60),
        sourceLine: index + 1, sourceID: ids ? "m\(index)" : nil)
      sessions[sessions.count - 1].turns.append(turn)
    }
    return ConversationFile(sessions: sessions, format: .jsonl)
  }

  /// The keys are stored in users' files: their arithmetic (FNV-1a over the parts with 0x1F
  /// between them) never changes. The value is FNV-1a of "id", 0x1F, "session-1", 0x1F, "msg-42",
  /// computed apart from the code.
  @Test func aTurnKeyIsTheSameAsEverBefore() {
    #expect(TurnKey.fnv1a(["id", "session-1", "msg-42"]) == 7_649_790_878_386_232_016)
    #expect(TurnKey.fnv1a(["ab"]) != TurnKey.fnv1a(["a", "b"]))
  }

  @Test func theSameExportTwiceAddsNothingAndALaterOneOnlyItsNewTurns() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let first = try await engine.conversation.ingest(conversation(100), path: "export-1")
    #expect(first.turns == 100)
    #expect(first.alreadyStored == 0)
    let again = try await engine.conversation.ingest(conversation(100), path: "export-1")
    #expect(again.turns == 0)
    #expect(again.alreadyStored == 100)
    let later = try await engine.conversation.ingest(conversation(150), path: "export-2")
    #expect(later.turns == 50)
    #expect(later.alreadyStored == 100)
    #expect(try await engine.maintenance.tableCounts()["messages"] == 150)
    #expect(try await engine.maintenance.tableCounts()["sessions"] == 4)
    let census = try engine.store.readTransaction {
      try $0.embeddingCensus(model: engine.embedder.modelID, dimension: 256)
    }
    #expect(census.missing == 0)
    #expect(census.stored == 150)
  }

  @Test func identicalTurnsInOneFileAreEachKeptOnce() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    // "ok" three times, no times: three turns, and a re-ingest adds none.
    let turns = (0..<3).map { ConversationTurn(role: "user", content: "ok", sourceLine: $0 + 1) }
    let file = ConversationFile(
      sessions: [ConversationSession(name: "chat", startedAt: nil, turns: turns)], format: .jsonl)
    #expect(try await engine.conversation.ingest(file, path: "a").turns == 3)
    #expect(try await engine.conversation.ingest(file, path: "a").turns == 0)
    #expect(try await engine.maintenance.tableCounts()["messages"] == 3)
  }

  @Test func aFormatsOwnIdsRecogniseEditedTurns() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    _ = try await engine.conversation.ingest(conversation(20, ids: true), path: "a")
    let edited = try await engine.conversation.ingest(
      conversation(20, edit: [3: "turn 3, edited"], ids: true), path: "a")
    #expect(edited.turns == 0)
    #expect(try await engine.maintenance.tableCounts()["messages"] == 20)
    // Without ids, an edited turn is another turn.
    let folder2 = try TemporaryFolder()
    let plain = try MemoryEngine(path: folder2.path("m.sqlite"), configuration: hashingConfiguration())
    defer { plain.close() }
    _ = try await plain.conversation.ingest(conversation(20), path: "a")
    #expect(
      try await plain.conversation.ingest(conversation(20, edit: [3: "turn 3, edited"]), path: "a").turns == 1
    )
  }

  @Test func anIngestStoppedWhileEmbeddingIsCompletedByTheNext() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let failing = FailingEmbedder(base: try HashingEmbedder(dimension: 256), failAfter: 2 * 256)
    do {
      let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: failing))
      defer { engine.close() }
      await #expect(throws: FailingEmbedder.Stop.self) {
        try await engine.conversation.ingest(conversation(1_000), path: "big")
      }
      // Every turn's text is stored (keyword-searchable); two batches of embeddings are.
      #expect(try await engine.maintenance.tableCounts()["messages"] == 1_000)
      let hits = try await engine.search("lake", k: 5, mode: .keyword, recordAccess: false)
      #expect(hits.count == 5)
      let census = try engine.store.readTransaction {
        try $0.embeddingCensus(model: failing.modelID, dimension: 256)
      }
      #expect(census.stored == 2 * 256)
    }
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { engine.close() }
    let resumed = try await engine.conversation.ingest(conversation(1_000), path: "big")
    #expect(resumed.turns == 0)
    #expect(resumed.alreadyStored == 1_000)
    #expect(resumed.completed == 1_000 - 2 * 256)
    #expect(try await engine.maintenance.tableCounts()["messages"] == 1_000)
    let census = try engine.store.readTransaction {
      try $0.embeddingCensus(model: engine.embedder.modelID, dimension: 256)
    }
    #expect(census.missing == 0)
    #expect(census.stored == 1_000)
    let vector = try await engine.search("turn 999 about the lake", k: 1, mode: .vector, recordAccess: false)
    #expect(vector.first?.text == "turn 999 about the lake")
  }

  /// Issue 51: two ingests of one file at once each saw the other's text-only turns as left by
  /// an interrupted ingest and reported embedding them (57,952 of 30,000).
  @Test func anIngestCountsOnlyTheTurnsItEmbedsItselfWhenAnotherEmbedsThemMeanwhile() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let failing = FailingEmbedder(base: try HashingEmbedder(dimension: 256), failAfter: 256)
    do {
      let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: failing))
      defer { engine.close() }
      await #expect(throws: FailingEmbedder.Stop.self) {
        try await engine.conversation.ingest(conversation(1_000), path: "big")
      }
    }
    // Ingest A reads the turns left unembedded; before it embeds them, ingest B (another
    // engine on the file) completes them all.
    let other = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { other.close() }
    let otherReport = Mutex<IngestReport?>(nil)
    let file = conversation(1_000)
    let hooked = HookEmbedder(base: try HashingEmbedder(dimension: 256)) {
      let report = try await other.conversation.ingest(file, path: "big")
      otherReport.withLock { $0 = report }
    }
    let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: hooked))
    defer { engine.close() }
    let seen = Mutex<[EngramProgress]>([])
    let report = try await engine.conversation.ingest(file, path: "big") { progress in
      seen.withLock { $0.append(progress) }
    }
    #expect(otherReport.withLock { $0 }?.completed == 1_000 - 256)
    #expect(report.completed == 0)
    #expect(report.turns == 0)
    #expect(seen.withLock { $0 }.allSatisfy { $0.done <= $0.total })
    let census = try engine.store.readTransaction {
      try $0.embeddingCensus(model: engine.embedder.modelID, dimension: 256)
    }
    #expect(census.stored == 1_000)
    #expect(census.missing == 0)
  }

  @Test func importingTheSameExportAgainAddsNothingAndAnotherIsRefused() async throws {
    let folder = try TemporaryFolder()
    let source = try MemoryEngine(path: folder.path("a.sqlite"), configuration: hashingConfiguration())
    _ = try await source.conversation.ingest(conversation(60), path: "a")
    _ = try await source.memories.remember("Maya's wedding is on 21 June", kind: .event)
    let exported = folder.path("a.jsonl")
    _ = try await source.transfer.export(to: exported)
    await source.close()

    let target = try MemoryEngine(path: folder.path("b.sqlite"), configuration: hashingConfiguration())
    defer { target.close() }
    let imported = try await target.transfer.importExport(from: exported)
    #expect(imported > 60)
    let counts = try await target.maintenance.tableCounts()
    #expect(try await target.transfer.importExport(from: exported) == 0)
    #expect(try await target.maintenance.tableCounts() == counts)
    // An export of another memory into this one is still refused, with nothing written.
    let other = try MemoryEngine(path: folder.path("c.sqlite"), configuration: hashingConfiguration())
    _ = try await other.memories.remember("something else entirely", kind: .fact)
    let otherExport = folder.path("c.jsonl")
    _ = try await other.transfer.export(to: otherExport)
    await other.close()
    await #expect(throws: EngramError.importTargetNotEmpty(path: folder.path("b.sqlite"))) {
      try await target.transfer.importExport(from: otherExport)
    }
    #expect(try await target.maintenance.tableCounts() == counts)
  }

  @Test func rememberingTheSameTextReturnsTheStoredMemory() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let first = try await engine.memories.rememberReporting("Maya's wedding is on 21 June", kind: .event)
    let again = try await engine.memories.rememberReporting("Maya's wedding is on 21 June", kind: .event)
    #expect(first.isNew && !again.isNew)
    #expect(again.id == first.id)
    // Another kind, or other text, is another memory.
    #expect(try await engine.memories.rememberReporting("Maya's wedding is on 21 June", kind: .fact).isNew)
    #expect(try await engine.memories.rememberReporting("Maya's wedding is on 22 June", kind: .event).isNew)
    #expect(try await engine.maintenance.tableCounts()["memories"] == 3)
    // Updating a memory to its own text changes nothing.
    #expect(try await engine.memories.update(first.id, content: "Maya's wedding is on 21 June") == first.id)
    #expect(try await engine.memories.get(first.id)?.supersededBy == nil)
  }
}

/// An embedder that stops working once it has embedded `failAfter` texts (an ingest killed
/// part way).
final class FailingEmbedder: HashingWrapper {
  struct Stop: Error {}
  let base: HashingEmbedder
  let failAfter: Int
  private let calls = Mutex(0)

  init(base: HashingEmbedder, failAfter: Int) {
    self.base = base
    self.failAfter = failAfter
  }

  func embed(_ texts: [String]) async throws -> [[Float]] {
    let done = calls.withLock { count -> Int in
      count += texts.count
      return count
    }
    if done > failAfter { throw Stop() }
    return try await base.embed(texts)
  }
}

/// An embedder that runs `hook` (once) before its first embedding.
final class HookEmbedder: HashingWrapper {
  let base: HashingEmbedder
  private let hook: Mutex<(@Sendable () async throws -> Void)?>

  init(base: HashingEmbedder, hook: @escaping @Sendable () async throws -> Void) {
    self.base = base
    self.hook = Mutex(hook)
  }

  func embed(_ texts: [String]) async throws -> [[Float]] {
    if let hook = hook.withLock({ hook in
      defer { hook = nil }
      return hook
    }) {
      try await hook()
    }
    return try await base.embed(texts)
  }
}

/// A test embedder that embeds with a hashing embedder, adding a behaviour of its own.
protocol HashingWrapper: Embedder {
  var base: HashingEmbedder { get }
}

extension HashingWrapper {
  var modelID: String { base.modelID }
  var dimension: Int { base.dimension }
  var maxSequenceLength: Int { base.maxSequenceLength }
}
