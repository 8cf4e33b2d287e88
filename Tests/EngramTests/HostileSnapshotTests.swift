import EngramStore
import EngramTestSupport
import EngramVectors
import Foundation
import Testing

@testable import Engram

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Issue 17, findings 1, 2 and 6: the vector snapshot and the read path under hostile use.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileSnapshotTests {
  static let forgotten = "the safe combination is seven three nine"
  static let replacement = "Maya prefers window seats on long flights"

  /// The cosine a vector search gives memory `id` for `text` (nil when not found).
  static func cosine(_ engine: MemoryEngine, _ text: String, id: Int64) async throws -> Double? {
    let hits = try await engine.search(text, k: 10, mode: .vector, filters: SearchFilters(kinds: [.memory]))
    return hits.first { $0.id == id }?.cosine
  }

  /// Finding 2: a long-running engine (as `engram mcp`) wrote its in-memory index as the
  /// snapshot when it closed, after another process forgot #2 and a new memory reused id 2:
  /// the counts matched, the stale snapshot was accepted, and a vector search returned the
  /// new memory for the forgotten one's text.
  @Test func aStaleLongRunningEngineDoesNotOverwriteTheSnapshot() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let setup = try MemoryEngine(path: path, configuration: hashingConfiguration())
    _ = try await setup.memories.remember("Ann likes hiking in the Alps", kind: .fact)
    let secret = try await setup.memories.remember(Self.forgotten, kind: .note)
    await setup.close()

    let server = try MemoryEngine(path: path, configuration: hashingConfiguration())
    // The server's index changes.
    _ = try await server.memories.remember("Bob drinks his coffee black", kind: .fact)
    let cli = try MemoryEngine(path: path, configuration: hashingConfiguration())
    #expect(try await cli.memories.forget(kind: .memory, id: secret))
    _ = try await cli.memories.remember("a memory that is forgotten at once", kind: .note)
    let reused = try await cli.memories.remember(Self.replacement, kind: .note)
    await cli.close()
    await server.close()

    let reader = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { reader.close() }
    let cosine = try await Self.cosine(reader, Self.forgotten, id: reused)
    #expect((cosine ?? 0) < 0.5, "memory #\(reused) answers the forgotten text with cosine \(cosine ?? 0)")
    let own = try await Self.cosine(reader, Self.replacement, id: reused)
    #expect((own ?? 0) > 0.99)
    let report = try await reader.doctor()
    #expect(report.healthy, "\(report.checks)")
  }

  /// Finding 2: a snapshot copied from a copy of the database (same database id, same
  /// generation) was accepted although its rows differ.
  @Test func aSnapshotOfACopyThatChangedDifferentlyIsRejected() async throws {
    let folder = try TemporaryFolder()
    let original = folder.path("a.sqlite")
    let copy = folder.path("b.sqlite")
    let setup = try MemoryEngine(path: original, configuration: hashingConfiguration())
    _ = try await setup.memories.remember("Ann likes hiking in the Alps", kind: .fact)
    let second = try await setup.memories.remember(Self.forgotten, kind: .note)
    await setup.close()
    try FileManager.default.copyItem(atPath: original, toPath: copy)

    // The same operations, with different texts, on each copy: same ids, same generation.
    var added: [Int64] = []
    for (path, text) in [(original, Self.replacement), (copy, "the dentist moved to Tuesday at nine")] {
      let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
      #expect(try await engine.memories.forget(kind: .memory, id: second))
      added.append(try await engine.memories.remember(text, kind: .note))
      await engine.close()
    }
    #expect(added.count == 2 && added[0] == added[1])
    try FileManager.default.removeItem(atPath: copy + ".vectors")
    try FileManager.default.copyItem(atPath: original + ".vectors", toPath: copy + ".vectors")

    let engine = try MemoryEngine(path: copy, configuration: hashingConfiguration())
    defer { engine.close() }
    #expect(engine.indexSource == .database)
    let cosine = try await Self.cosine(engine, Self.replacement, id: added[1])
    #expect(
      (cosine ?? 0) < 0.5, "the copy's #\(added[1]) answers the original's text with cosine \(cosine ?? 0)")
  }

  /// Finding 1: the snapshot's temporary file had a predictable name and was opened without
  /// O_EXCL / O_NOFOLLOW, so a symlink planted there truncated and overwrote its target.
  @Test func aSymlinkPlantedAtTheOldTemporaryNameIsNotFollowed() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let victim = folder.path("victim.txt")
    try writeFile("precious", to: victim)
    #expect(symlink(victim, path + ".vectors.tmp-\(getpid())") == 0)
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    _ = try await engine.memories.remember("hello", kind: .note)
    await engine.close()
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
    #expect(FileManager.default.fileExists(atPath: path + ".vectors"))
    let mode = try FileManager.default.attributesOfItem(atPath: path + ".vectors")[.posixPermissions] as? Int
    #expect(mode == 0o600)
    // No temporary file is left behind (the planted link stays, untouched).
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
    #expect(names.filter { $0.contains(".tmp-") } == ["m.sqlite.vectors.tmp-\(getpid())"])
  }

  /// Finding 6: a search whose hits include a memory wrote access statistics on the read
  /// path, so while another process held the write lock it waited, then failed "locked".
  @Test func aSearchNeverWaitsForAnotherProcessWriteLock() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    var configuration = hashingConfiguration()
    // A search that waited for the lock would fail with "busy" after this long (a bound on
    // the elapsed time would also measure how loaded the test host is).
    configuration.busyTimeout = .seconds(3)
    let engine = try MemoryEngine(path: path, configuration: configuration)
    defer { engine.close() }
    let id = try await engine.memories.remember("Ann is allergic to peanuts", kind: .fact)

    let other = try Connection(path: path)
    try other.execute("BEGIN IMMEDIATE")
    let hits = try await engine.search("peanuts", k: 3)
    #expect(hits.first?.id == id)
    try other.execute("ROLLBACK")

    // The retrieval is still counted, once the lock is free.
    try engine.flushAccessStatistics()
    #expect(try await engine.memories.get(id)?.accessCount == 1)
  }

  /// An open maps the codes without reading them (it checks the header, token and row
  /// table); `doctor` checks every byte, reports a damaged vector in use, and `--repair`
  /// rebuilds the index and its snapshot.
  @Test func aDamagedVectorIsFoundByDoctorAndRepaired() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let writer = try MemoryEngine(path: path, configuration: hashingConfiguration())
    let id = try await writer.memories.remember("Ann is allergic to peanuts", kind: .fact)
    await writer.close()
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path + ".vectors"))
    // A code byte (format 3: a few rows' row table fills the first 6 pages, then the codes).
    bytes[6 * 4096 + 5] ^= 0x7F
    try bytes.write(to: URL(fileURLWithPath: path + ".vectors"))

    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { engine.close() }
    #expect(engine.indexSource == .snapshot)
    let report = try await engine.doctor()
    #expect(!report.healthy)
    #expect(report.checks.first { $0.name == "snapshot" }?.ok == false)
    let repaired = try await engine.doctor(repair: true)
    #expect(repaired.healthy, "\(repaired.checks)")
    let hit = try await engine.search("Ann is allergic to peanuts", k: 1, mode: .vector).first
    #expect(hit?.id == id && (hit?.cosine ?? 0) > 0.99)
  }

  /// A read-only engine writes nothing: no access statistics, no snapshot.
  @Test func aReadOnlyEngineWritesNothing() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let writer = try MemoryEngine(path: path, configuration: hashingConfiguration())
    let id = try await writer.memories.remember("Ann is allergic to peanuts", kind: .fact)
    await writer.close()
    try FileManager.default.removeItem(atPath: path + ".vectors")
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    // The writer keeps its (empty) log and wal-index, so a reader creates neither.
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
    #expect(files == ["m.sqlite", "m.sqlite-shm", "m.sqlite-wal"])

    var configuration = hashingConfiguration()
    configuration.readOnly = true
    let reader = try MemoryEngine(path: path, configuration: configuration)
    #expect(try await reader.search("peanuts", k: 1).first?.id == id)
    await reader.close()
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    #expect(!FileManager.default.fileExists(atPath: path + ".vectors"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == files)
  }

  /// An engine that only reads does not rewrite an unchanged snapshot when it closes.
  @Test func anUnchangedIndexIsNotRewritten() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let writer = try MemoryEngine(path: path, configuration: hashingConfiguration())
    _ = try await writer.memories.remember("Ann is allergic to peanuts", kind: .fact)
    await writer.close()
    let snapshot = path + ".vectors"
    let stamp = try FileManager.default.attributesOfItem(atPath: snapshot)[.modificationDate] as? Date
    let inode = try FileManager.default.attributesOfItem(atPath: snapshot)[.systemFileNumber] as? Int

    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    #expect(engine.indexSource == .snapshot)
    _ = try await engine.search("peanuts", k: 1)
    await engine.close()
    let attributes = try FileManager.default.attributesOfItem(atPath: snapshot)
    #expect(attributes[.modificationDate] as? Date == stamp)
    #expect(attributes[.systemFileNumber] as? Int == inode)
  }
}
