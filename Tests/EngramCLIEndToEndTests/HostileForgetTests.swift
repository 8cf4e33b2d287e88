import Engram
import EngramCLI
import EngramEmbeddings
import EngramStore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

/// Forgetting reaches every copy (summaries, chat turns, traces, pending calls), and a
/// reindex racing another process's write loses nothing.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileForgetTests {
  static func openEngine(_ path: String) throws -> MemoryEngine {
    let embedder = try EngineAccess.spec(forDatabaseAt: path).makeEmbedder(
      environment: ScratchFolder.environment)
    return try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
  }

  /// Every line of `engram export` for `db`.
  /// The `text` of each row `engram query --json` printed.
  static func texts(of output: String) -> [String] {
    output.split(separator: "\n").compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["text"] as? String
    }
  }

  static func exported(_ db: String, scratch: ScratchFolder) async throws -> String {
    let file = scratch.path("export-\(UUID().uuidString.prefix(6)).jsonl")
    let result = try await engram("export", "--db", db, file)
    #expect(result.status == 0, "\(result.standardError)")
    return try String(contentsOfFile: file, encoding: .utf8)
  }

  @Test func forgettingATurnASummaryQuotesRemovesItFromTheSummary() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let secret = "My passport number is X4471902 and it expires next spring"
    var lines: [String] = []
    let turns = [
      "Good morning, how are you today?", "Thanks!", secret,
      "We should plan the garden layout before the rain season starts.", "ok",
      "The kitchen renovation will take three weeks according to the builder.", "Thanks!",
      "Remember to water the tomatoes every second evening in July.",
    ]
    for (index, text) in turns.enumerated() {
      lines.append(
        #"{"session":"old","speaker":"Ann","role":"user","timestamp":"2024-01-02T10:0\#(index):00Z","content":"\#(text)"}"#
      )
    }
    let chat = try scratch.write("chat.jsonl", lines.joined(separator: "\n") + "\n")
    #expect(try await engram("ingest", "--db", db, chat).status == 0)
    #expect(try await engram("compact", "--db", db, "--yes").status == 0)
    // Forget a turn the summary quotes.
    let engine = try Self.openEngine(db)
    #expect(try await engine.maintenance.tableCounts()["summaries"] == 1)
    let quoted = try engine.quotedMessageIDs(ofSummary: 1)
    let turnsNow = try await engine.conversation.recentTurns(limit: 20)
    await engine.close()
    let secretID = try #require(quoted.first)
    let quotedText = try #require(turnsNow.first { $0.id == secretID }?.text)
    #expect(try await Self.exported(db, scratch: scratch).contains(quotedText))
    let forget = try await engram("forget", "--db", db, "--kind", "message", String(secretID))
    #expect(forget.status == 0, "\(forget.standardError)")
    #expect(forget.standardOutput.contains("summary"), "says what it removed: \(forget.standardOutput)")
    for mode in ["keyword", "hybrid"] {
      let query = try await engram("query", "--db", db, quotedText, "--json", "--mode", mode)
      #expect(query.status == 0, "\(query.standardError)")
      #expect(
        !Self.texts(of: query.standardOutput).contains { $0.contains(quotedText) },
        "\(mode): \(query.standardOutput)")
    }
    #expect(!(try await Self.exported(db, scratch: scratch)).contains(quotedText))
    #expect(try await engram("doctor", "--db", db).status == 0)
  }

  @Test func forgettingAMemoryRememberedInChatRemovesTheTurnTracesAndPendingCall() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let chat = try await engram(
      "chat", "--db", db, input: "remember that my locker code is 4512\ny\nwhat is my locker code\n")
    #expect(chat.status == 0, "\(chat.standardError)")
    #expect(try await Self.exported(db, scratch: scratch).contains("4512"))
    let engine = try Self.openEngine(db)
    let id = try #require(try await engine.memories.list().first { $0.content.contains("4512") }?.id)
    await engine.close()
    let forget = try await engram("forget", "--db", db, String(id))
    #expect(forget.status == 0, "\(forget.standardError)")
    #expect(forget.standardOutput.contains("turn"), "says what it removed: \(forget.standardOutput)")
    let exported = try await Self.exported(db, scratch: scratch)
    #expect(!exported.contains("4512"), "\(exported)")
    for mode in ["keyword", "hybrid"] {
      let query = try await engram("query", "--db", db, "locker code 4512", "--json", "--mode", mode)
      #expect(query.status == 0, "\(query.standardError)")
      // The rows' texts: a score's digits may hold the code by chance (0.393106758594512...).
      #expect(
        !Self.texts(of: query.standardOutput).contains { $0.contains("4512") },
        "\(mode): \(query.standardOutput)")
    }
    #expect(try await engram("doctor", "--db", db).status == 0)
  }
}

/// An embedder that waits at its first call until released, so a test can write from
/// another process while a reindex is embedding.
final class GatedEmbedder: Embedder, Sendable {
  let inner: HashingEmbedder
  private let state = Mutex<(entered: Bool, released: Bool)>((false, false))

  init(dimension: Int) throws { inner = try HashingEmbedder(dimension: dimension) }

  var modelID: String { inner.modelID }
  var dimension: Int { inner.dimension }
  var maxSequenceLength: Int { inner.maxSequenceLength }
  var entered: Bool { state.withLock { $0.entered } }
  func release() { state.withLock { $0.released = true } }

  func embed(_ texts: [String]) async throws -> [[Float]] {
    state.withLock { $0.entered = true }
    while !state.withLock({ $0.released }) { try await Task.sleep(for: .milliseconds(10)) }
    return try await inner.embed(texts)
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileConcurrencyTests {
  @Test func aRememberFromAnotherProcessDuringReindexKeepsItsEmbedding() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    for number in 0..<20 {
      #expect(try await engram("remember", "--db", db, "old memory number \(number)").status == 0)
    }
    let gate = try GatedEmbedder(dimension: 384)
    let reindex = Task {
      try await MemoryEngine.reindex(
        path: db, configuration: EngramConfiguration(embedder: gate), embedderSpec: "hashing")
    }
    while !gate.entered { try await Task.sleep(for: .milliseconds(10)) }
    // Another process writes while the reindex embeds.
    let remember = try await engram("remember", "--db", db, "the spare key is under the blue flowerpot")
    #expect(remember.status == 0, "\(remember.standardError)")
    gate.release()
    let engine = try await reindex.value
    await engine.close()
    let doctor = try await engram("doctor", "--db", db)
    #expect(doctor.status == 0, "\(doctor.standardOutput)")
    #expect(doctor.standardOutput.contains("0 missing"), "\(doctor.standardOutput)")
    let query = try await engram(
      "query", "--db", db, "spare key flowerpot", "--mode", "vector", "-k", "1", "--json")
    #expect(query.standardOutput.contains("blue flowerpot"), "\(query.standardOutput)")
  }
}

/// Every store error reads as a sentence, never as a raw enum case.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileErrorTextTests {
  @Test func storeErrorsAreSentences() async {
    let errors: [StoreError] = [
      .schemaTooNew(path: "m", found: 9, supported: 3), .migrationRequired(path: "m", found: 1, required: 3),
      .invalidMigrations(version: 3, expected: 2), .readOnlyFile(path: "m"), .readOnlyDirectory(path: "m"),
      .databaseReadOnly(path: "m"), .closed(path: "m"), .wrongDimension(expected: 3, actual: 2),
      .nonFiniteVector(index: 1), .emptyVector,
      .modelMismatch(
        expectedModel: "a", expectedDimension: 1, actualModel: "b", actualDimension: 2),
      .embeddingModelNotConfigured, .invalidEmbeddingModel(model: "", dimension: 0), .invalidImportance(2),
      .invalidColumnValue(table: "memories", column: "kind", value: "x"), .invalidUTF8(column: 2),
      .notFound(table: "memories", id: 4), .missingID(table: "memories"), .invalidPage(limit: -1, offset: 0),
    ]
    for error in errors {
      let line = EngineAccess.describe(error)
      let raw = String(describing: error)
      #expect(line != raw, "\(raw)")
      #expect(!line.contains("(table:") && !line.contains("(column:") && !line.contains("(path:"), "\(line)")
    }
  }
}
