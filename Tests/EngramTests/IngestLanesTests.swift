import EngramStore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram
@testable import EngramEmbeddings

/// How ingest spends the embedder: every turn's text is embedded once, and the model's
/// lanes (two threads) store the very vectors one thread stores.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct IngestLanesTests {
  @Test func everyTurnIsEmbeddedOnceAsItsStoredText() async throws {
    let folder = try TemporaryFolder()
    let embedder = RecordingEmbedder(base: try HashingEmbedder(dimension: 256))
    var configuration = EngramConfiguration(embedder: embedder)
    configuration.snapshotMinimumRows = 0
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: configuration)
    defer { engine.close() }
    // Three embedding batches (sessions of 70 turns): the first batch is embedded before its
    // text is stored, and those vectors are reused, not computed again.
    let report = try await engine.conversation.ingest(IngestPipelineTests.conversation(600), path: "chat")
    #expect(report.turns == 600)
    let texts = embedder.texts
    #expect(texts.count == 600)
    #expect(Set(texts).count == 600)
    // What was embedded is each stored turn's document text (with the turn it replies to).
    let items = try engine.database.read { try $0.embeddableItems() }
    #expect(items.count == 600)
    #expect(Set(items.map(DocumentText.make)) == Set(texts))
  }

  /// 160 turns of LoCoMo's length (about 70 tokens each as embedded, with time, speaker and
  /// the turn replied to), two speakers, sessions of 40.
  static func longTurns() -> ConversationFile {
    let start = Date(timeIntervalSince1970: 1_682_935_200)
    let openings = [
      "I went hiking with my kids last weekend near the lake, and we found a trail",
      "My friends from the support group asked me to help organize the charity run",
      "Yesterday I finally finished the painting of the sunset I started in spring",
      "We adopted a second dog from the shelter, a shy puppy who loves the garden",
    ]
    var sessions: [ConversationSession] = []
    for index in 0..<160 {
      if index % 40 == 0 {
        sessions.append(
          ConversationSession(
            name: "session_\(index / 40 + 1)", startedAt: start.addingTimeInterval(Double(index) * 86_400),
            turns: []))
      }
      let text =
        openings[index % openings.count]
        + " (turn \(index)), and it made me think about how much has changed since we talked about it."
      sessions[sessions.count - 1].turns.append(
        ConversationTurn(
          role: index % 2 == 0 ? "user" : "assistant", content: text,
          speaker: index % 2 == 0 ? "Caroline" : "Melanie",
          timestamp: start.addingTimeInterval(Double(index / 40) * 86_400 + Double(index) * 30),
          sourceLine: index + 1))
    }
    return ConversationFile(sessions: sessions, format: .jsonl)
  }

  /// The same LoCoMo-like turns ingested with MiniLM on one thread (one pass per batch) and
  /// on two (lanes): every stored row, vectors included, is the same.
  @Test(arguments: [EmbeddingPrecision.float32, .int8])
  func lanesStoreTheVectorsOneThreadStores(precision: EmbeddingPrecision) async throws {
    let folder = try TemporaryFolder()
    var rows: [[String]] = []
    for threads in [1, 2] {
      let embedder: BertEmbedder
      do {
        embedder = try BertEmbedder(options: BertEmbedder.Options(threads: threads, precision: precision))
      } catch {
        Issue.record("all-MiniLM-L6-v2 is not installed — run `make test` (it installs the model): \(error)")
        throw error
      }
      let engine = try MemoryEngine(
        path: folder.path("\(threads).sqlite"), configuration: EngramConfiguration(embedder: embedder))
      defer { engine.close() }
      let report = try await engine.conversation.ingest(Self.longTurns(), path: "chat")
      #expect(report.turns == 160)
      if threads == 1 {
        // The ingest's embedding call (up to 256 turns) is enough for several runs.
        let texts = try engine.database.read { try $0.embeddableItems() }.map(DocumentText.make)
        let tokens = texts.map { embedder.tokenizer.encode($0).count }.reduce(0, +)
        #expect(tokens >= 3 * BertModel.laneMinimumTokens)
      }
      rows.append(try IngestPipelineTests.rows(engine))
    }
    #expect(rows[0].count(where: { $0.contains("|message|") }) == 160)
    #expect(rows[0].count == rows[1].count)
    // The rows that differ, by their first fields (a vector's hex is long).
    let differing = zip(rows[0], rows[1]).filter { $0 != $1 }.map { $0.0.prefix(40) }
    #expect(differing == [])
  }
}

/// An embedder that records every text it is asked to embed.
final class RecordingEmbedder: HashingWrapper {
  let base: HashingEmbedder
  private let recorded = Mutex<[String]>([])

  init(base: HashingEmbedder) { self.base = base }

  var texts: [String] { recorded.withLock { $0 } }

  func embed(_ texts: [String]) async throws -> [[Float]] {
    recorded.withLock { $0 += texts }
    return try await base.embed(texts)
  }
}
