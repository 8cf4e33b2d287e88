import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Issue 51: without a usable snapshot the vector index is read from the embeddings table
/// when a search first needs vectors, not at open: a keyword search reads no vector.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct DeferredIndexTests {
  /// A memory of `count` turns with their embeddings and no snapshot file.
  func memoryWithoutSnapshot(_ folder: TemporaryFolder, count: Int = 300) async throws -> String {
    let path = folder.path("m.sqlite")
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    let turns = (0..<count).map {
      ConversationTurn(role: "user", content: "turn \($0) about the dentist on Tuesday", sourceLine: $0 + 1)
    }
    _ = try await engine.conversation.ingest(
      ConversationFile(
        sessions: [ConversationSession(name: "s", startedAt: nil, turns: turns)], format: .jsonl),
      path: "turns")
    let snapshot = try #require(engine.snapshotURL)
    await engine.close()
    try FileManager.default.removeItem(at: snapshot)
    return path
  }

  @Test func aKeywordSearchWithoutASnapshotReadsNoVectorAndWritesNoSnapshot() async throws {
    let folder = try TemporaryFolder()
    let path = try await memoryWithoutSnapshot(folder)
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    #expect(engine.indexSource == .database)
    #expect(engine.isMissingSnapshot)
    let hits = try await engine.search("dentist", k: 5, mode: .keyword, recordAccess: false)
    #expect(hits.count == 5)
    #expect(engine.vectors.tableLoads == 0)
    #expect(engine.vectors.isDeferred)
    #expect(engine.maintenance.vectorIndexStatistics.rows == 300)
    let snapshot = try #require(engine.snapshotURL)
    await engine.close()
    // Nothing was read, so nothing is saved: the next open reads the table again when a
    // vector search needs it.
    #expect(!FileManager.default.fileExists(atPath: snapshot.path))
  }

  @Test func aVectorSearchReadsTheTableOnceAndAWriteSavesTheSnapshot() async throws {
    let folder = try TemporaryFolder()
    let path = try await memoryWithoutSnapshot(folder)
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    for _ in 0..<3 {
      let hits = try await engine.search("turn 7 about the dentist", k: 3, mode: .hybrid, recordAccess: false)
      #expect(hits.first?.text == "turn 7 about the dentist on Tuesday")
    }
    #expect(engine.vectors.tableLoads == 1)
    #expect(try engine.index.count == 300)
    let saved = try #require(engine.snapshotURL)
    await engine.close()
    // The index it read is saved at close (the next open maps it); without it again:
    #expect(FileManager.default.fileExists(atPath: saved.path))
    try FileManager.default.removeItem(at: saved)

    // A write while the index is not read yet: the turn is found by a later vector search,
    // and the snapshot is saved at close (as after any write).
    let writer = try MemoryEngine(path: path, configuration: hashingConfiguration())
    let id = try await writer.conversation.appendTurn(
      role: "user", content: "the orthodontist moved to Friday")
    let gone = try await writer.conversation.appendTurn(
      role: "user", content: "the orthodontist bill is paid")
    #expect(try await writer.memories.forget(kind: .message, id: gone))
    #expect(writer.vectors.isDeferred)
    let found = try await writer.search("orthodontist", k: 5, mode: .vector, recordAccess: false).map(\.id)
    #expect(found.first == id)
    #expect(!found.contains(gone))
    let snapshot = try #require(writer.snapshotURL)
    await writer.close()
    #expect(FileManager.default.fileExists(atPath: snapshot.path))
    let reopened = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { reopened.close() }
    #expect(reopened.indexSource == .snapshot)
  }
}
