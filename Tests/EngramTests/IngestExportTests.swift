import EngramEmbeddings
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram

@Suite(.timeLimit(.minutes(5)), .watchdog) struct IngestExportTests {
  static let conversation = """
    {"role":"user","content":"I adopted a puppy named Biscuit","session":"s1","speaker":"Ann","timestamp":"2024-05-01T10:00:00Z"}
    {"role":"assistant","content":"Congratulations! What breed is Biscuit?","session":"s1","timestamp":"2024-05-01T10:00:05Z"}
    {"role":"user","content":"A golden retriever, eight weeks old","session":"s1","speaker":"Ann","timestamp":"2024-05-01T10:01:00Z"}
    {"role":"user","content":"明天下午三点开会","session":"s2","speaker":"Ann","timestamp":"2024-05-02T09:00:00Z","metadata":{"source":"chat"}}
    """

  @Test func ingestsJSONLWithSessionsTimesAndProgress() async throws {
    let folder = try TemporaryFolder()
    let file = folder.path("c.jsonl")
    try writeFile(Self.conversation, to: file)
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let phases = PhaseLog()
    let report = try await engine.conversation.ingest(path: file) { phases.add($0.phase) }
    #expect(report.turns == 4 && report.sessions == 2 && report.format == .jsonl)
    #expect(phases.all.contains("embedding") && phases.all.last == "done")
    let hits = try await engine.search("开会", k: 1, mode: .keyword)
    #expect(hits.first?.text == "明天下午三点开会")
    #expect(hits.first?.metadata["source"] == "chat")
    let puppy = try await engine.search("what breed is the puppy", k: 3)
    #expect(puppy.contains { $0.text.contains("golden retriever") })
    #expect(try await engine.maintenance.tableCounts()["sessions"] == 2)
  }

  @Test func aMalformedFileStoresNothing() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    _ = try await engine.memories.remember("already here")
    let bad = folder.path("bad.jsonl")
    try writeFile(Self.conversation + "\n{\"role\": \"user\", \"content\": 42}\n", to: bad)
    await #expect {
      try await engine.conversation.ingest(path: bad)
    } throws: { error in
      if case .malformed(_, 5, _) = error as? ImportError { return true }
      return false
    }
    let counts = try await engine.maintenance.tableCounts()
    #expect(counts["messages"] == 0 && counts["sessions"] == 0 && counts["memories"] == 1)
    await #expect(throws: ImportError.self) {
      try await engine.conversation.ingest(path: folder.path("missing.jsonl"))
    }
  }

  @Test func cancellationBeforeStoringLeavesTheMemoryUntouched() async throws {
    let folder = try TemporaryFolder()
    let file = folder.path("c.jsonl")
    let lines = (0..<200).map { #"{"role":"user","content":"line \#($0) about things"}"# }
    try writeFile(lines.joined(separator: "\n"), to: file)
    var configuration = hashingConfiguration()
    configuration.embeddingBatchSize = 4
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: configuration)
    defer { engine.close() }
    let task = Task { try await engine.conversation.ingest(path: file) }
    task.cancel()
    await #expect(throws: EngramError.cancelled) { try await task.value }
    #expect(try await engine.maintenance.tableCounts()["messages"] == 0)
  }

  @Test func ingestsLoCoMoSessionsWithTheirDates() async throws {
    let folder = try TemporaryFolder()
    let file = folder.path("26.json")
    try writeFile(
      """
      {"speaker_a":"Caroline","speaker_b":"Melanie",
       "session_1_date_time":"1:56 pm on 8 May, 2023",
       "session_1":[{"speaker":"Caroline","dia_id":"D1:1","text":"I went to a support group yesterday"},
                    {"speaker":"Melanie","dia_id":"D1:2","text":"That sounds powerful"}],
       "session_2_date_time":"10:37 am on 27 June, 2023",
       "session_2":[{"speaker":"Melanie","dia_id":"D2:1","text":"I painted a sunrise last week"}]}
      """, to: file)
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let report = try await engine.conversation.ingest(path: file)
    #expect(report.format == .locomo && report.turns == 3 && report.sessions == 2)
    let hits = try await engine.search("When did Melanie paint a sunrise?", k: 1)
    #expect(hits.first?.metadata["dia_id"] == "D2:1")
    #expect(hits.first?.speaker == "Melanie")
    #expect(hits.first?.timestamp == Date(timeIntervalSince1970: 1_687_862_220))
    let inSession = try await engine.search(
      "support", k: 5, mode: .keyword, filters: SearchFilters(session: "26/session_1"))
    #expect(inSession.map { $0.metadata["dia_id"] } == ["D1:1"])
  }

  @Test func exportImportRoundTripsEverything() async throws {
    let folder = try TemporaryFolder()
    let file = folder.path("c.jsonl")
    try writeFile(Self.conversation, to: file)
    let source = try MemoryEngine(path: folder.path("a.sqlite"), configuration: hashingConfiguration())
    _ = try await source.conversation.ingest(path: file)
    let old = try await source.memories.remember(
      "likes green tea", kind: .preference, importance: 0.9, tags: ["drink"])
    _ = try await source.memories.update(old, content: "likes jasmine tea")
    try await source.userPreferences.set("timezone", "Asia/Shanghai", pinned: true)
    _ = try await source.compact(olderThan: 0, now: Date(timeIntervalSince1970: 1_800_000_000))
    let first = folder.path("a.jsonl")
    let lines = try await source.transfer.export(to: first)
    #expect(lines > 10)
    let attributes = try FileManager.default.attributesOfItem(atPath: first)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)

    let target = try MemoryEngine(path: folder.path("b.sqlite"), configuration: hashingConfiguration())
    let imported = try await target.transfer.importExport(from: first)
    #expect(imported == lines - 2)
    let second = folder.path("b.jsonl")
    try await target.transfer.export(to: second)
    // Equal but for the header's time and the end line's checksum, which covers it.
    let a = try String(contentsOfFile: first, encoding: .utf8).split(separator: "\n").dropFirst().dropLast()
    let b = try String(contentsOfFile: second, encoding: .utf8).split(separator: "\n").dropFirst().dropLast()
    #expect(Array(a) == Array(b))
    let query = "jasmine tea"
    let sourceHits = try await source.search(query, k: 5, recordAccess: false)
    let targetHits = try await target.search(query, k: 5, recordAccess: false)
    #expect(sourceHits == targetHits)
    let report = try await target.doctor()
    #expect(report.healthy, "\(report.checks.filter { !$0.ok })")
    // Importing the same export again imports nothing and changes nothing (issue 32).
    let counts = try await target.maintenance.tableCounts()
    #expect(try await target.transfer.importExport(from: first) == 0)
    #expect(try await target.maintenance.tableCounts() == counts)
    await source.close()
    await target.close()
  }

  @Test func importRefusesMalformedExportsWholly() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let bad = folder.path("bad.jsonl")
    let header =
      #"{"type":"header","format":"engram-export","version":1,"embedding_model":"\#(engine.embedder.modelID)","embedding_dimension":256}"#
    try writeFile(
      header + "\n" + #"{"type":"session","id":1,"started_at":0,"metadata":"{}"}"# + "\n"
        + #"{"type":"message","id":1,"session_id":1,"role":"robot","content":"x","created_at":0}"#, to: bad)
    await #expect(
      throws: EngramError.malformedExport(
        line: 3, reason: "CHECK constraint failed: role IN ('system', 'user', 'assistant', 'tool')")
    ) {
      try await engine.transfer.importExport(from: bad)
    }
    #expect(try await engine.maintenance.tableCounts()["sessions"] == 0)
    try writeFile("{\"type\":\"session\"}", to: bad)
    await #expect(throws: EngramError.self) { try await engine.transfer.importExport(from: bad) }
  }
}

final class PhaseLog: Sendable {
  private let phases = Mutex<[String]>([])
  func add(_ phase: String) { phases.withLock { $0.append(phase) } }
  var all: [String] { phases.withLock { $0 } }
}
