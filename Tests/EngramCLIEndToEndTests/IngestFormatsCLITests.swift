import EngramTestSupport
import Foundation
import Testing

/// `engram ingest` of the export formats: detection, `--format`, `--date-order`, folders of
/// notes and exports, re-ingest, and refusals with a line number.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct IngestFormatsCLITests {
  static let whatsApp = """
    [03/04/24, 10:00:00] Fay: See you at the station 🚉
    [03/04/24, 10:02:00] Gil: On my way
    still packing
    [03/04/24, 10:03:00] Gil: <attached: 00000001-PHOTO.jpg>

    """

  static let telegram = """
    {"name": "Gus", "type": "personal_chat", "id": 4242, "messages": [
      {"id": 1, "type": "service", "date": "2024-02-10T08:00:00", "action": "phone_call", "text": ""},
      {"id": 2, "type": "message", "date": "2024-02-10T08:01:00", "date_unixtime": "1707552060",
       "from": "Gus", "text": ["Flight to ", {"type": "bold", "text": "Tbilisi"}, " booked ✈️"]}
    ]}

    """

  @Test func formatsAreDetectedAndAReingestAddsNothing() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let chat = try scratch.write("chat.txt", Self.whatsApp)
    let result = try await engram("ingest", "--db", db, chat, try scratch.write("result.json", Self.telegram))
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.contains("ingested 2 turns in 1 session from \(chat) (whatsapp)"))
    #expect(
      result.standardOutput.contains(
        "ingested 1 turns in 1 session from \(scratch.path("result.json")) (telegram)"))
    let again = try await engram("ingest", "--db", db, "--json", chat)
    let line = try #require(try jsonLines(again.standardOutput).first)
    #expect(
      line["turns"] as? Int == 0 && line["already_stored"] as? Int == 2
        && line["format"] as? String == "whatsapp")
    let query = try await engram("query", "--db", db, "--mode", "keyword", "--json", "Tbilisi")
    #expect(query.standardOutput.contains("Flight to Tbilisi booked"))
  }

  @Test func dateOrderAndFormatAreForced() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let chat = try scratch.write("chat.txt", Self.whatsApp)
    let wrong = try await engram("ingest", "--db", db, "--format", "telegram", chat)
    #expect(wrong.status != 0 && wrong.status != 64)
    #expect(wrong.standardError.contains("chat.txt:1:"), "\(wrong.standardError)")
    let result = try await engram(
      "ingest", "--db", db, "--format", "whatsapp", "--date-order", "mdy", "--json", chat)
    #expect(result.status == 0, "\(result.standardError)")
    let query = try await engram("query", "--db", db, "--mode", "keyword", "--json", "station")
    let hit = try #require(try jsonLines(query.standardOutput).first)
    #expect((hit["date"] as? String)?.hasPrefix("2024-03-04") == true, "\(hit)")
    let usage = try await engram("ingest", "--db", db, "--format", "docx", chat)
    #expect(usage.status == 64)
    #expect(usage.standardError.contains("chatgpt, claude, whatsapp, telegram, markdown, jsonl, locomo"))
  }

  @Test func aFolderIngestsItsNotesAndExportsAndSkipsOtherFiles() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let export = scratch.path("export")
    try FileManager.default.createDirectory(atPath: export + "/notes", withIntermediateDirectories: true)
    try scratch.write(
      "export/notes/trip.md", "---\ndate: 2024-05-01\ntags: [travel]\n---\n# Trip\n\nSee [[Lisbon]].\n")
    try scratch.write("export/result.json", Self.telegram)
    try scratch.write("export/user.json", #"{"email": "me@example.com"}"#)
    try scratch.write("export/chat.html", "<html></html>")
    let result = try await engram("ingest", "--db", db, export)
    #expect(result.status == 0, "\(result.standardError)")
    let lines = result.standardOutput.split(separator: "\n").map(String.init)
    #expect(lines.count == 4, "\(lines)")
    #expect(lines[0] == "ingested 1 memory from \(export) (markdown)")
    #expect(lines[1].hasPrefix("ingested 1 turns in 1 session from \(export)/result.json (telegram)"))
    #expect(lines[2] == "skipped \(export)/user.json: not a conversation export or note")
    #expect(lines[3] == "ingested 1 turns and 1 memory from 3 files")
    let again = try await engram("ingest", "--db", db, export)
    #expect(
      again.standardOutput.contains(
        "ingested 0 memories from \(export) (markdown); 1 already stored, skipped"))
  }

  @Test func aMalformedExportIsRefusedWithItsLineAndStoresNothing() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let bad = try scratch.write(
      "result.json",
      Self.telegram.replacingOccurrences(of: #""text": ["Flight"#, with: #""text": [7, "Flight"#))
    let result = try await engram("ingest", "--db", db, bad)
    #expect(result.status != 0)
    #expect(result.standardError.contains("result.json:3: message 2:"), "\(result.standardError)")
    let stats = try await engram("stats", "--db", db, "--json")
    #expect(stats.standardOutput.contains("\"messages\":0"), "\(stats.standardOutput)")
  }
}
