import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Each export format stored by the engine: its sessions, speakers and times as stored; a
/// re-ingest adds nothing; a later cumulative export adds only its new turns; malformed
/// input stores nothing; Markdown notes become memories.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct IngestFormatsEngineTests {
  static let utc = TimeZone(secondsFromGMT: 0)!

  func engine(_ folder: TemporaryFolder) throws -> MemoryEngine {
    try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
  }

  /// Copies a fixture to `name` in `folder` (an export is ingested under one path, as a user would).
  func copy(_ relative: String, to name: String, in folder: TemporaryFolder) throws -> String {
    let target = folder.path(name)
    try? FileManager.default.removeItem(atPath: target)
    try FileManager.default.copyItem(atPath: ingestFixture(relative), toPath: target)
    return target
  }

  @Test(arguments: [
    ("chatgpt/conversations.json", "chatgpt/conversations-later.json", ConversationFile.Format.chatgpt, 6, 4),
    ("claude/conversations.json", "claude/conversations-later.json", .claude, 6, 2),
    ("telegram/result.json", "telegram/result-later.json", .telegram, 3, 1),
    ("whatsapp/WhatsApp Chat with Dana.txt", "whatsapp/later/WhatsApp Chat with Dana.txt", .whatsapp, 4, 1),
  ])
  func reingestAddsNothingAndALaterExportAddsOnlyItsNewTurns(
    first: String, later: String, format: ConversationFile.Format, turns: Int, added: Int
  ) async throws {
    let folder = try TemporaryFolder()
    let engine = try engine(folder)
    defer { engine.close() }
    let name = URL(fileURLWithPath: first).lastPathComponent
    let path = try copy(first, to: name, in: folder)
    let report = try await engine.conversation.ingest(path: path)
    #expect(report.format == format && report.turns == turns && report.alreadyStored == 0)
    let again = try await engine.conversation.ingest(path: path)
    #expect(again.turns == 0 && again.alreadyStored == turns)
    #expect(try await engine.maintenance.tableCounts()["messages"] == turns)
    // The later export holds everything again, some of it edited, and a little more.
    let laterPath = try copy(later, to: name, in: folder)
    let cumulative = try await engine.conversation.ingest(path: laterPath)
    #expect(cumulative.turns == added, "\(cumulative)")
    #expect(try await engine.maintenance.tableCounts()["messages"] == turns + added)
    let once = try await engine.conversation.ingest(path: laterPath)
    #expect(once.turns == 0)
  }

  @Test func chatGPTTurnsAreStoredWithTheirSessionTitleAndTimes() async throws {
    let folder = try TemporaryFolder()
    let engine = try engine(folder)
    defer { engine.close() }
    let report = try await engine.conversation.ingest(path: ingestFixture("chatgpt/conversations.json"))
    #expect(report.sessions == 2 && report.turns == 6)
    let hits = try await engine.search(
      "Arashiyama", k: 5, mode: .keyword, filters: SearchFilters(session: "chatgpt/c-kyoto"))
    #expect(hits.map(\.text).contains("Hoshinoya Kyoto is by the river in Arashiyama."))
    // The tool's result is not a turn; the answer without a time takes the conversation's.
    #expect(!hits.map(\.text).contains { $0.hasPrefix("Hoshinoya Kyoto: riverside") })
    let answer = try #require(hits.first { $0.text.hasPrefix("Hoshinoya Kyoto is") })
    #expect(answer.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
    let regenerated = try await engine.search("usually best", k: 5, mode: .keyword)
    #expect(regenerated.isEmpty)
  }

  @Test func whatsAppSpeakersAreStoredAsUsersWithNames() async throws {
    let folder = try TemporaryFolder()
    let engine = try engine(folder)
    defer { engine.close() }
    let report = try await engine.conversation.ingest(
      path: ingestFixture("whatsapp/WhatsApp Chat - Brunch/_chat.txt"))
    #expect(report.format == .whatsapp && report.turns == 5 && report.sessions == 1)
    let turns = try await engine.conversation.recentTurns(limit: 10)
    #expect(turns.map(\.speaker) == ["Ann", "Ben", "Ann", "Carla", "Ben"])
    #expect(turns.first?.timestamp == DateParser.parse("2023-12-31T21:41:07Z", timeZone: Self.utc)?.date)
    let rtl = try await engine.search("שלום", k: 1, mode: .keyword)
    #expect(rtl.first?.speaker == "Carla")
  }

  @Test func aForcedFormatIsUsedAndAWrongOneStoresNothing() async throws {
    let folder = try TemporaryFolder()
    let engine = try engine(folder)
    defer { engine.close() }
    let path = try copy("whatsapp/ambiguous.txt", to: "ambiguous.txt", in: folder)
    await #expect(throws: ImportError.self) {
      try await engine.conversation.ingest(path: path, options: IngestOptions(format: .telegram))
    }
    #expect(try await engine.maintenance.tableCounts()["messages"] == 0)
    let report = try await engine.conversation.ingest(
      path: path, options: IngestOptions(format: .whatsapp, dateOrder: .mdy))
    #expect(report.turns == 2)
    let turns = try await engine.conversation.recentTurns(limit: 2)
    #expect(turns.first?.timestamp == DateParser.parse("2024-03-04T10:00:00Z", timeZone: Self.utc)?.date)
  }

  @Test(arguments: [
    (
      "bad.json",
      "[{\"mapping\":{\"r\":{\"parent\":null,\"children\":[],\"message\":null}},\"current_node\":\"r\",\"id\":\"a\"},\n{\"id\":\"b\"}]"
    ),
    (
      "bad-claude.json",
      "[{\"uuid\":\"c\",\"chat_messages\":[{\"uuid\":\"m\",\"sender\":\"human\",\"text\":\"hi\",\"created_at\":\"soon\"}]}]"
    ),
    (
      "bad-telegram.json",
      "{\"name\":\"n\",\"id\":1,\"messages\":[\n{\"id\":1,\"type\":\"message\",\"text\":\"ok\"},\n{\"id\":2,\"type\":\"message\",\"text\":{}}]}"
    ),
    ("bad-whatsapp.txt", "31/12/23, 10:00 - A: fine\n31/13/23, 10:00 - A: no such month\n"),
    ("bad-note.md", "---\ndate: someday\n---\nbody\n"),
  ])
  func malformedInputStoresNothingAndKeepsWhatWasThere(name: String, text: String) async throws {
    let folder = try TemporaryFolder()
    let engine = try engine(folder)
    defer { engine.close() }
    _ = try await engine.memories.remember("already here")
    _ = try await engine.conversation.ingest(path: ingestFixture("telegram/result.json"))
    let before = try await engine.maintenance.tableCounts()
    let path = folder.path(name)
    try writeFile(text, to: path)
    await #expect {
      try await engine.conversation.ingest(path: path)
    } throws: { error in
      guard case .malformed(_, let line, _) = error as? ImportError else { return false }
      return line >= 1
    }
    #expect(try await engine.maintenance.tableCounts() == before)
  }

  @Test func markdownNotesBecomeMemoriesOnceWithTheirDatesAndTags() async throws {
    let folder = try TemporaryFolder()
    let engine = try engine(folder)
    defer { engine.close() }
    let notes = ingestFixture("markdown/notes")
    let report = try await engine.conversation.ingest(path: notes)
    #expect(report.format == .markdown && report.memories == 5 && report.memoriesAlreadyStored == 0)
    #expect(report.turns == 0 && report.sessions == 0)
    let memories = try await engine.memories.list(kind: .note)
    #expect(memories.count == 5)
    let kyoto = try #require(memories.first { $0.content.hasPrefix("# Kyoto trip") })
    #expect(kyoto.tags == ["travel", "japan"])
    #expect(kyoto.createdAt == DateParser.parse("2024-05-01", timeZone: Self.utc)?.date)
    #expect(kyoto.content.contains("[[Arashiyama]]"))
    let again = try await engine.conversation.ingest(path: notes)
    #expect(again.memories == 0 && again.memoriesAlreadyStored == 5)
    #expect(try await engine.memories.list(kind: .note).count == 5)
    // One note on its own is read as Markdown too.
    let single = try await engine.conversation.ingest(path: ingestFixture("markdown/notes/Kyoto trip.md"))
    #expect(single.format == .markdown && single.memoriesAlreadyStored == 1)
  }

  @Test func aFolderListsItsNotesThenItsExports() throws {
    let folder = try TemporaryFolder()
    try FileManager.default.createDirectory(
      atPath: folder.path("notes/sub"), withIntermediateDirectories: true)
    try writeFile("# A note\n", to: folder.path("notes/sub/a.md"))
    try writeFile("{}", to: folder.path("notes/b.json"))
    try writeFile("x", to: folder.path("notes/chat.html"))
    try writeFile("x", to: folder.path("notes/.hidden.json"))
    try writeFile("x", to: folder.path("notes/a.txt"))
    let root = folder.path("notes")
    #expect(IngestFolder.entries(root) == [root, folder.path("notes/a.txt"), folder.path("notes/b.json")])
    #expect(IngestFolder.entries(root, format: .markdown) == [root])
    #expect(
      IngestFolder.entries(root, format: .telegram) == [
        folder.path("notes/a.txt"), folder.path("notes/b.json"),
      ])
  }
}
