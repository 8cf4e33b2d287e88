import Dispatch
import EngramEmbeddings
import EngramStore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram

/// Ingest embeds one batch while the one before is committed (`Ingestor.embedStored`): what it
/// stores is what the sequential order stores, a failure stops it with every earlier batch
/// stored and nothing half-written, and a commit never holds up the next embedding.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct IngestPipelineTests {
  /// `count` turns in sessions of 70 (two speakers, a few repeated texts), a minute apart.
  static func conversation(_ count: Int) -> ConversationFile {
    let start = Date(timeIntervalSince1970: 1_735_689_600)
    let topics = ["the lake", "climbing", "a new job", "周末攀岩", "the dog", "baking bread"]
    var sessions: [ConversationSession] = []
    for index in 0..<count {
      if index % 70 == 0 {
        sessions.append(ConversationSession(name: "s\(index / 70)", startedAt: start, turns: []))
      }
      let text = index % 11 == 0 ? "ok" : "turn \(index) about \(topics[index % topics.count])"
      sessions[sessions.count - 1].turns.append(
        ConversationTurn(
          role: index % 2 == 0 ? "user" : "assistant", content: text, speaker: index % 2 == 0 ? "Ann" : "Bo",
          timestamp: start.addingTimeInterval(Double(index) * 60), sourceLine: index + 1))
    }
    return ConversationFile(sessions: sessions, format: .jsonl)
  }

  /// Every stored row of the tables an ingest writes, as text, in id order (vectors as their
  /// exact bytes).
  static func rows(_ engine: MemoryEngine) throws -> [String] {
    try engine.database.read { connection in
      let messages = try connection.prepare(
        """
        SELECT id, session_id, role, speaker, content, created_at, token_count, metadata, source_key
        FROM messages ORDER BY id
        """
      ).map { row in (0..<9).map { row.isNull(at: $0) ? "NULL" : row.string(at: $0) }.joined(separator: "|") }
      let sessions = try connection.prepare(
        "SELECT id, external_id, title, started_at FROM sessions ORDER BY id"
      ).map { row in (0..<4).map { row.isNull(at: $0) ? "NULL" : row.string(at: $0) }.joined(separator: "|") }
      let embeddings = try connection.prepare(
        """
        SELECT id, owner_kind, owner_id, model, dimension, encoding, created_at, hex(vector), user_id
        FROM embeddings ORDER BY id
        """
      ).map { row in (0..<9).map { row.isNull(at: $0) ? "NULL" : row.string(at: $0) }.joined(separator: "|") }
      let speakers = try connection.prepare("SELECT speaker, turns FROM speakers ORDER BY speaker").map {
        "\($0.string(at: 0))|\($0.int64(at: 1))"
      }
      return messages + sessions + embeddings + speakers
    }
  }

  @Test func theOverlappedPipelineStoresExactlyWhatTheSequentialOrderStores() async throws {
    let folder = try TemporaryFolder()
    let file = Self.conversation(900)  // four embedding batches, the last one short
    let sequentialEngine = try MemoryEngine(
      path: folder.path("a.sqlite"), configuration: hashingConfiguration())
    defer { sequentialEngine.close() }
    var sequential = sequentialEngine.conversation.ingestor
    sequential.overlapsStoring = false
    let one = try await sequential.ingest(file, path: "chat")
    let engine = try MemoryEngine(path: folder.path("b.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    #expect(engine.conversation.ingestor.overlapsStoring)
    let two = try await engine.conversation.ingest(file, path: "chat")
    #expect(one == two)
    #expect(two.turns == 900)

    let expected = try Self.rows(sequentialEngine)
    let found = try Self.rows(engine)
    #expect(expected.count == found.count)
    #expect(expected == found)
    #expect(found.count(where: { $0.contains("|message|") }) == 900)
    for query in ["lake", "climbing job", "攀岩", "ok", "turn 451", "bread"] {
      for mode in [SearchMode.keyword, .vector, .hybrid] {
        let a = try await sequentialEngine.search(query, k: 10, mode: mode, recordAccess: false)
        let b = try await engine.search(query, k: 10, mode: mode, recordAccess: false)
        #expect(!a.isEmpty)
        #expect(a.map(\.id) == b.map(\.id), "\(query) \(mode)")
        #expect(a.map { [$0.bm25, $0.cosine] } == b.map { [$0.bm25, $0.cosine] }, "\(query) \(mode)")
      }
    }
  }

  /// A commit that fails (a trigger refuses the vector of one turn of the third batch) stops
  /// the ingest with that error: the two batches before are stored and indexed, no vector of
  /// the failing batch or of the one embedded meanwhile is, and a later ingest completes them.
  @Test func aFailedCommitKeepsTheEarlierBatchesAndStoresNothingOfItsOwn() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let file = Self.conversation(1_000)
    do {
      let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
      defer { engine.close() }
      // Turn 600 (ids are 1...1,000 in file order) is in the third batch of 256.
      try engine.database.write { connection in
        try connection.execute(
          """
          CREATE TRIGGER refuse_one_vector BEFORE INSERT ON embeddings WHEN NEW.owner_id = 600
          BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
          """)
      }
      await #expect(throws: SQLiteError.self) {
        try await engine.conversation.ingest(file, path: "chat")
      }
      #expect(try await engine.maintenance.tableCounts()["messages"] == 1_000)
      let embedded = try engine.database.read { connection in
        try connection.prepare("SELECT owner_id FROM embeddings ORDER BY owner_id").map {
          $0.int64(at: 0)
        }
      }
      #expect(embedded == Array(1...512))
      // The index holds exactly the committed vectors.
      let hits = try await engine.search("turn", k: 1_000, mode: .vector, recordAccess: false)
      #expect(Set(hits.map(\.id)) == Set(1...512))
      try engine.database.write { try $0.execute("DROP TRIGGER refuse_one_vector") }
    }
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { engine.close() }
    let resumed = try await engine.conversation.ingest(file, path: "chat")
    #expect(resumed.alreadyStored == 1_000)
    #expect(resumed.completed == 1_000 - 512)
    let census = try engine.store.readTransaction {
      try $0.embeddingCensus(model: engine.embedder.modelID, dimension: 256)
    }
    #expect(census.stored == 1_000)
    #expect(census.missing == 0)
  }

  /// Another connection holds the write lock from the first batch's embedding to the second's:
  /// the first batch's commit waits for it while the second batch is embedded. Embedding and
  /// committing one after the other, the commit would wait for a lock only the next embedding
  /// releases, and fail with `busy` after the busy timeout.
  @Test func aCommitWaitingForTheLockDoesNotHoldUpTheNextEmbedding() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let file = Self.conversation(700)
    // An ingest that stored every turn's text and no vector (it failed on its first embedding
    // after the text was stored).
    do {
      let failing = FailingEmbedder(base: try HashingEmbedder(dimension: 256), failAfter: 256)
      var configuration = EngramConfiguration(embedder: failing)
      configuration.snapshotMinimumRows = 0
      let engine = try MemoryEngine(path: path, configuration: configuration)
      defer { engine.close() }
      await #expect(throws: FailingEmbedder.Stop.self) {
        try await engine.conversation.ingest(file, path: "chat")
      }
    }
    let lock = WriteLockHolder(path: path)
    defer { lock.release() }
    let embedder = LockingEmbedder(base: try HashingEmbedder(dimension: 256), lock: lock)
    var configuration = EngramConfiguration(embedder: embedder)
    configuration.snapshotMinimumRows = 0
    let engine = try MemoryEngine(path: path, configuration: configuration)
    defer { engine.close() }
    let report = try await engine.conversation.ingest(file, path: "chat")
    #expect(report.completed == 700 - 256)
    #expect(lock.releasedByEmbedder)
    let census = try engine.store.readTransaction {
      try $0.embeddingCensus(model: engine.embedder.modelID, dimension: 256)
    }
    #expect(census.missing == 0)
  }
}

/// Holds the write lock of a database on a thread of its own, from `acquire()` until
/// `release()` (or 30 seconds).
final class WriteLockHolder: Sendable {
  let path: String
  private let state = Mutex<(acquired: Bool, released: Bool, byEmbedder: Bool)>((false, false, false))
  private let held = DispatchSemaphore(value: 0)
  private let releaseSignal = DispatchSemaphore(value: 0)

  init(path: String) { self.path = path }

  var releasedByEmbedder: Bool { state.withLock { $0.byEmbedder } }

  /// Takes the lock (once) and returns when it is held.
  func acquire() async {
    guard
      state.withLock({ state in
        defer { state.acquired = true }
        return !state.acquired
      })
    else { return }
    let path = path
    let held = held
    let releaseSignal = releaseSignal
    Thread.detachNewThread {
      do {
        let database = try Database(path: path)
        try database.write { _ in
          held.signal()
          _ = releaseSignal.wait(timeout: .now() + 30)
        }
        database.close()
      } catch {
        held.signal()
      }
    }
    await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        held.wait()
        continuation.resume()
      }
    }
  }

  /// Lets the lock go (once).
  func release(byEmbedder: Bool = false) {
    let first = state.withLock { state -> Bool in
      defer {
        state.released = true
        if byEmbedder && state.acquired { state.byEmbedder = true }
      }
      return state.acquired && !state.released
    }
    if first { releaseSignal.signal() }
  }
}

/// An embedder that takes `lock` before it returns the first batch's vectors and lets it go
/// when asked for the next batch.
final class LockingEmbedder: HashingWrapper {
  let base: HashingEmbedder
  let lock: WriteLockHolder
  private let texts = Mutex(0)

  init(base: HashingEmbedder, lock: WriteLockHolder) {
    self.base = base
    self.lock = lock
  }

  func embed(_ texts: [String]) async throws -> [[Float]] {
    let before = self.texts.withLock { count -> Int in
      defer { count += texts.count }
      return count
    }
    if before == 0 { await lock.acquire() }
    if before >= Ingestor.embeddingBatch { lock.release(byEmbedder: true) }
    return try await base.embed(texts)
  }
}
