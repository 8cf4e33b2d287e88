import EngramCore
import EngramStore
import EngramTestSupport
import EngramVectors
import Foundation
import Synchronization
import Testing

@testable import Engram

/// Issue 15: a snapshot that lags the database (a writer still open, or killed before it
/// saved) is brought up to date from the embeddings table on open, never rebuilt whole and
/// never used stale.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct SnapshotReplayTests {
  /// Whether `engine`'s vector index holds memory `id`.
  static func indexes(_ engine: MemoryEngine, memory id: Int64) -> Bool {
    (try? engine.index.contains(VectorKey.make(.memory, id))) == true
  }

  /// A memory with a snapshot of `count` memories, its writer closed.
  static func memoryWithSnapshot(_ path: String, count: Int) async throws -> [Int64] {
    let setup = try MemoryEngine(path: path, configuration: hashingConfiguration())
    var ids: [Int64] = []
    for index in 0..<count {
      ids.append(try await setup.memories.remember("fact number \(index) about hiking", kind: .fact))
    }
    await setup.close()
    return ids
  }

  @Test func appendsAfterTheSnapshotAreReplayedFromTheTable() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    _ = try await Self.memoryWithSnapshot(path, count: 5)
    // A long-running writer (as `engram mcp`) adds rows; its snapshot waits for its close.
    let writer = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { writer.close() }
    let added = try await writer.memories.remember("Ann is allergic to peanuts", kind: .fact)

    var readOnly = hashingConfiguration()
    readOnly.readOnly = true
    let reader = try MemoryEngine(path: path, configuration: readOnly)
    defer { reader.close() }
    #expect(reader.indexSource == .snapshot)
    #expect(Self.indexes(reader, memory: added))
    let hits = try await reader.search("allergic to peanuts", k: 1, mode: .vector)
    #expect(hits.first?.id == added)
    let report = try await reader.doctor()
    #expect(report.checks.first { $0.name == "index" }?.ok == true, "\(report.checks)")
    let snapshot = report.checks.first { $0.name == "snapshot" }
    #expect(
      snapshot?.ok == true && snapshot?.detail.hasPrefix("behind the database") == true, "\(report.checks)")
  }

  @Test func deletionsAndReusedIdsAfterTheSnapshotAreReplayed() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let ids = try await Self.memoryWithSnapshot(path, count: 4)
    let writer = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { writer.close() }
    // The newest memory holds the highest embedding id: forgetting it frees that id, and
    // the next embedding takes it again (an insert that is not above the snapshot's ids).
    #expect(try await writer.memories.forget(kind: .memory, id: ids[3]))
    #expect(try await writer.memories.forget(kind: .memory, id: ids[0]))
    let added = try await writer.memories.remember("the dentist moved to Tuesday at nine", kind: .event)

    let reader = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { reader.close() }
    #expect(reader.indexSource == .snapshot)
    #expect(!Self.indexes(reader, memory: ids[3]))
    #expect(!Self.indexes(reader, memory: ids[0]))
    #expect(Self.indexes(reader, memory: ids[1]) && Self.indexes(reader, memory: added))
    #expect(try reader.index.count == 3)
    let hits = try await reader.search("dentist on Tuesday", k: 1, mode: .vector)
    #expect(hits.first?.id == added)
    let report = try await reader.doctor()
    #expect(report.checks.first { $0.name == "index" }?.ok == true, "\(report.checks)")
  }

  @Test func anUpdatedVectorAfterTheSnapshotIsReplayed() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let ids = try await Self.memoryWithSnapshot(path, count: 3)
    // Another tool rewrites a stored vector in place (same row id, same owner).
    let other = try Connection(path: path)
    let vector = [Float](repeating: 0, count: 255) + [1]
    try other.upsertEmbedding(
      EmbeddingRow(
        ownerKind: .memory, ownerID: ids[1], model: "hashing-v1-256", vector: vector,
        createdAt: Date(timeIntervalSince1970: 0))
    )

    let reader = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { reader.close() }
    #expect(reader.indexSource == .snapshot)
    #expect(try reader.index.entry(for: VectorKey.make(.memory, ids[1]))?.vector == vector)
    let report = try await reader.doctor()
    #expect(report.checks.first { $0.name == "index" }?.ok == true, "\(report.checks)")
  }

  @Test func aSnapshotTheDatabaseNoLongerRecordsIsRebuiltNotReplayed() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let ids = try await Self.memoryWithSnapshot(path, count: 3)
    let old = try Data(contentsOf: URL(fileURLWithPath: path + ".vectors"))
    let writer = try MemoryEngine(path: path, configuration: hashingConfiguration())
    #expect(try await writer.memories.forget(kind: .memory, id: ids[0]))
    await writer.close()  // a new snapshot and stamp; the log is pruned up to it
    try old.write(to: URL(fileURLWithPath: path + ".vectors"))

    let reader = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { reader.close() }
    #expect(reader.indexSource == .database)
    #expect(!Self.indexes(reader, memory: ids[0]))
  }

  /// A writer appends and forgets while readers open one after another (each a separate
  /// engine with its own connections, as a separate process would have): every reader holds
  /// every row committed before it opened and none forgotten before, and a snapshot saved
  /// meanwhile (pruning the log) never leaves one stale.
  @Test func readersOpenedDuringConcurrentWritesSeeExactlyTheCommittedRows() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    _ = try await Self.memoryWithSnapshot(path, count: 3)
    struct Log {
      var committed: [Int64] = []
      /// Marked before the forget starts (a reader may or may not hold them).
      var forgetting: Set<Int64> = []
      /// Marked once the forget returned (a reader opened later must not hold them).
      var forgotten: Set<Int64> = []
      var done = false
    }
    let log = Mutex(Log())
    let writer = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { writer.close() }
    let writing = Task {
      for index in 0..<60 {
        let id = try await writer.memories.remember(
          "turn \(index) of a long conversation about trains", kind: .note)
        log.withLock { $0.committed.append(id) }
        if index % 4 == 3 {
          let victim = log.withLock { log in
            let victim = log.committed[log.committed.count - 2]
            log.forgetting.insert(victim)
            return victim
          }
          #expect(try await writer.memories.forget(kind: .memory, id: victim))
          log.withLock { _ = $0.forgotten.insert(victim) }
        }
        if index % 20 == 10 { try writer.saveSnapshot() }
      }
      log.withLock { $0.done = true }
    }
    var readOnlyConfiguration = hashingConfiguration()
    readOnlyConfiguration.readOnly = true
    let readOnly = readOnlyConfiguration
    var readers = 0
    var replayed = 0
    while !log.withLock({ $0.done }) || readers == 0 {
      let before = log.withLock { $0 }
      // Opened on a thread of its own and awaited: the loop never holds a cooperative thread
      // the writer task needs (on a 2-core machine the pool has two).
      let reader = try await BlockingWork.run { try MemoryEngine(path: path, configuration: readOnly) }
      // Opened from the snapshot and brought up to date (an exact snapshot is not changed).
      if try reader.indexSource == .snapshot && reader.index.changeCount > 0 { replayed += 1 }
      let after = log.withLock { $0 }
      for id in before.committed where !after.forgetting.contains(id) {
        #expect(Self.indexes(reader, memory: id), "reader \(readers) lacks #\(id)")
      }
      for id in before.forgotten {
        #expect(!Self.indexes(reader, memory: id), "reader \(readers) holds forgotten #\(id)")
      }
      await reader.close()
      readers += 1
    }
    try await writing.value
    #expect(readers > 1)
    #expect(replayed > 0)
    // At rest, a reader's index is exactly the table's.
    let reader = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { reader.close() }
    let report = try await reader.doctor()
    #expect(report.checks.first { $0.name == "index" }?.ok == true, "\(report.checks)")
  }

  /// The stamp and the log floor describe this file and its snapshot: an import into another
  /// file must not inherit them (a copied snapshot would then be replayed against another
  /// history).
  @Test func theSnapshotStampIsNeitherExportedNorImported() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    _ = try await Self.memoryWithSnapshot(path, count: 2)
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    let export = folder.path("export.jsonl")
    try await engine.transfer.export(to: export)
    await engine.close()
    let text = try String(contentsOfFile: export, encoding: .utf8)
    #expect(!text.contains(Connection.vectorSnapshotKey))
    #expect(!text.contains(Connection.embeddingChangesFloorKey))
  }
}
