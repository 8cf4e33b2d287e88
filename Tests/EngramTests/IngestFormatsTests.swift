import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// The path of a file under `Fixtures/ingest`.
func ingestFixture(_ relative: String) -> String {
  Bundle.module.resourceURL!.appendingPathComponent("Fixtures/ingest").appendingPathComponent(relative).path
}

/// Each export format's mapping to sessions, speakers, roles, times and source ids; detection;
/// forcing a format; malformed input refused with its line.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct IngestFormatsTests {
  static let utc = TimeZone(secondsFromGMT: 0)!

  func read(_ relative: String, _ options: IngestOptions = IngestOptions()) throws -> ConversationFile {
    try ConversationFile.read(path: ingestFixture(relative), options: options)
  }

  func parse(_ text: String, path: String = "x", _ options: IngestOptions = IngestOptions())
    throws(ImportError)
    -> ConversationFile
  {
    try ConversationFile.parse(Data(text.utf8), path: path, defaultSession: path, options: options)
  }

  func date(_ text: String) -> Date { DateParser.parse(text, timeZone: Self.utc)!.date }

  // MARK: - ChatGPT

  @Test func chatGPTFollowsTheShownBranchAndSkipsSystemToolHiddenAndEmpty() throws {
    let file = try read("chatgpt/conversations.json")
    #expect(file.format == .chatgpt)
    // The conversation with only a hidden system message gives no session.
    #expect(file.sessions.map(\.name) == ["chatgpt/c-kyoto", "chatgpt/c-sign"])
    #expect(file.sessions.map(\.title) == ["Kyoto trip", "שלט"])
    let kyoto = file.sessions[0]
    #expect(kyoto.startedAt == Date(timeIntervalSince1970: 1_700_000_000))
    // The regenerated answer (a1b) replaces a1; the edited question (u2e) replaces u2; the
    // tool call and its result are left out.
    #expect(kyoto.turns.map(\.sourceID) == ["u1", "a1b", "u2e", "a3"])
    #expect(kyoto.turns.map(\.role) == ["user", "assistant", "user", "assistant"])
    #expect(kyoto.turns[0].content == "Plan a trip to Kyoto 🍵 — 京都の紅葉はいつ？")
    #expect(kyoto.turns[0].timestamp == Date(timeIntervalSince1970: 1_700_000_000.5))
    #expect(kyoto.turns[1].metadata["model"] == "gpt-4o")
    #expect(kyoto.turns[3].timestamp == nil)
    #expect(kyoto.turns.allSatisfy { $0.speaker == nil })
    // Custom instructions are not a turn; an image part is not text.
    let sign = file.sessions[1]
    #expect(sign.turns.map(\.content) == ["מה כתוב בשלט? 🙂", "כתוב: ברוכים הבאים — مرحبا"])
  }

  @Test func chatGPTWithoutCurrentNodeFollowsTheLatestLeaf() throws {
    let text = """
      [{"id":"c","title":"t","create_time":1,"mapping":{
        "r":{"id":"r","parent":null,"children":["u"],"message":null},
        "u":{"id":"u","parent":"r","children":["a","b"],"message":{"author":{"role":"user"},"create_time":2,"content":{"content_type":"text","parts":["q"]}}},
        "a":{"id":"a","parent":"u","children":[],"message":{"author":{"role":"assistant"},"create_time":3,"content":{"content_type":"text","parts":["old"]}}},
        "b":{"id":"b","parent":"u","children":[],"message":{"author":{"role":"assistant"},"create_time":4,"content":{"content_type":"text","parts":["new"]}}}}}]
      """
    let file = try parse(text)
    #expect(file.sessions[0].turns.map(\.content) == ["q", "new"])
  }

  // MARK: - Claude

  @Test func claudeMapsSendersTimesAndContentBlocks() throws {
    let file = try read("claude/conversations.json")
    #expect(file.format == .claude)
    #expect(file.sessions.map(\.name) == ["claude/c1", "claude/c3"])
    #expect(file.sessions.map(\.title) == ["Sourdough 🍞", "עברית"])
    let bread = file.sessions[0]
    #expect(bread.startedAt == date("2024-03-02T09:00:00.123456Z"))
    #expect(bread.turns.map(\.role) == ["user", "assistant", "user", "assistant"])
    #expect(bread.turns.map(\.sourceID) == ["m1", "m2", "m3", "m4"])
    // An empty `text` falls back to the content blocks.
    #expect(bread.turns[1].content == "Yes: it is hungry. Feed it 1:1:1.")
    #expect(bread.turns[1].timestamp == date("2024-03-02T09:00:09.5Z"))
    #expect(bread.turns[2].content == "谢谢！明天再试。")
    #expect(file.sessions[1].turns.map(\.content) == ["שלום, מה שלומך?", "بخير، شكراً"])
  }

  // MARK: - WhatsApp

  @Test func whatsAppBracketedFormWithMultiLineSystemMediaAndEdits() throws {
    let file = try read("whatsapp/WhatsApp Chat - Brunch/_chat.txt")
    #expect(file.format == .whatsapp)
    #expect(file.sessions.count == 1)
    let chat = file.sessions[0]
    // iOS names every export `_chat.txt`: the session takes the folder's name.
    #expect(chat.name == "whatsapp/WhatsApp Chat - Brunch")
    #expect(chat.turns.map(\.speaker) == ["Ann", "Ben", "Ann", "Carla", "Ben"])
    #expect(chat.turns.allSatisfy { $0.role == "user" && $0.sourceID == nil })
    #expect(chat.turns[0].content == "Happy new year eve! 🎆")
    #expect(chat.turns[0].timestamp == date("2023-12-31T21:41:07Z"))
    #expect(
      chat.turns[1].content == "Same to you!\nAre we still on for brunch tomorrow?\n\nBring the good coffee ☕"
    )
    #expect(chat.turns[1].sourceLine == 3)
    #expect(chat.turns[2].content == "Yes, 11:00 at Café Noor")
    #expect(chat.turns[2].metadata["edited"] == true)
    #expect(chat.turns[3].content == "שלום לכולם! 👋")
    #expect(chat.turns[4].timestamp == date("2024-01-01T09:17:00Z"))
  }

  @Test func whatsAppDashFormWithTwelveHourTimesIsReadMonthFirst() throws {
    let file = try read("whatsapp/WhatsApp Chat with Dana.txt")
    let chat = file.sessions[0]
    #expect(chat.name == "whatsapp/WhatsApp Chat with Dana")
    #expect(chat.turns.map(\.speaker) == ["Dana", "Eli", "Dana", "Eli"])
    #expect(chat.turns[0].timestamp == date("2023-12-31T21:41:00Z"))
    // A narrow no-break space before PM, as newer exports write it.
    #expect(chat.turns[1].timestamp == date("2023-12-31T21:43:00Z"))
    #expect(chat.turns[2].content == "Lunch on Friday?\nIt's my treat")
    #expect(chat.turns[2].timestamp == date("2024-01-02T08:05:00Z"))
    #expect(chat.turns[3].timestamp == date("2024-01-02T12:07:00Z"))
    #expect(chat.turns[3].content == "Deal – see you at noon")
  }

  @Test func whatsAppAmbiguousDatesAreDayFirstUnlessToldOtherwise() throws {
    let dayFirst = try read("whatsapp/ambiguous.txt")
    #expect(dayFirst.sessions[0].turns[0].timestamp == date("2024-04-03T10:00:00Z"))
    let monthFirst = try read("whatsapp/ambiguous.txt", IngestOptions(dateOrder: .mdy))
    #expect(monthFirst.sessions[0].turns[0].timestamp == date("2024-03-04T10:00:00Z"))
  }

  @Test(arguments: [
    ("[2024/01/15, 14:30:22] Ann: year first", "2024-01-15T14:30:22Z"),
    ("15.01.24, 14:30 - Ann: dots", "2024-01-15T14:30:00Z"),
    ("[1/15/24, 2:30:05 PM] Ann: bracketed twelve-hour", "2024-01-15T14:30:05Z"),
    ("1/15/24, 12:05 a.m. - Ann: midnight", "2024-01-15T00:05:00Z"),
  ])
  func whatsAppDateAndTimeForms(line: String, expected: String) throws {
    let file = try parse(line + "\n", path: "chat.txt")
    #expect(file.format == .whatsapp)
    #expect(file.sessions[0].turns[0].timestamp == date(expected))
    #expect(file.sessions[0].turns[0].speaker == "Ann")
  }

  @Test func whatsAppDatesThatContradictTheOrderAreRefusedWithTheirLine() {
    let mixed = "13/01/24, 10:00 - A: day first\n01/13/24, 10:00 - B: month first\n"
    #expect {
      try parse(mixed, path: "chat.txt")
    } throws: { error in
      guard case .malformed(_, 2, _) = error as? ImportError else { return false }
      return true
    }
    #expect {
      try parse("13/01/24, 10:00 - A: day first\n", path: "chat.txt", IngestOptions(dateOrder: .mdy))
    } throws: { error in
      guard case .malformed(_, 1, let reason) = error as? ImportError else { return false }
      return reason.contains("mdy")
    }
  }

  @Test func whatsAppWithOnlySystemLinesIsEmpty() {
    let text =
      "12/31/23, 9:41 PM - Messages and calls are end-to-end encrypted.\n12/31/23, 9:42 PM - Eli: <Media omitted>\n"
    #expect(throws: ImportError.empty(path: "chat.txt")) { try parse(text, path: "chat.txt") }
  }

  // MARK: - Telegram

  @Test func telegramOneChatJoinsEntitiesAndSkipsServiceAndMedia() throws {
    let file = try read("telegram/result.json")
    #expect(file.format == .telegram)
    #expect(file.sessions.map(\.name) == ["telegram/4242"])
    #expect(file.sessions[0].title == "Gus")
    let turns = file.sessions[0].turns
    #expect(turns.map(\.sourceID) == ["2", "3", "5"])
    #expect(turns.map(\.speaker) == ["Gus", "Me", "Gus"])
    #expect(turns.allSatisfy { $0.role == "user" })
    #expect(turns[1].content == "Yes! Details: https://example.com/trip — leaving March 3")
    #expect(turns[0].timestamp == Date(timeIntervalSince1970: 1_707_552_060))
    // Without `date_unixtime` the zone-less `date` is read as UTC.
    #expect(turns[2].timestamp == date("2024-02-10T08:05:00Z"))
    #expect(turns[2].metadata["reply_to"] == 3)
    #expect(turns[2].metadata["edited"] == "2024-02-10T08:06:00")
  }

  @Test func telegramAllChatsGivesOneSessionPerChatWithMessages() throws {
    let file = try read("telegram/all-chats.json")
    #expect(file.sessions.map(\.name) == ["telegram/1", "telegram/88"])
    #expect(file.sessions[0].title == nil)
    #expect(file.sessions[1].title == "家族")
    #expect(file.sessions[1].turns.map(\.content) == ["新年快乐！🧧", "مرحبا"])
    // A deleted account has no `from`: its id speaks.
    #expect(file.sessions[1].turns.map(\.speaker) == ["Mom", "user999"])
  }

  // MARK: - Detection, forcing, malformed input

  @Test(arguments: [
    ("chatgpt/conversations.json", ConversationFile.Format.chatgpt),
    ("claude/conversations.json", .claude),
    ("whatsapp/WhatsApp Chat with Dana.txt", .whatsapp),
    ("telegram/result.json", .telegram),
    ("telegram/all-chats.json", .telegram),
    ("markdown/notes/Kyoto trip.md", .markdown),
  ])
  func formatsAreDetectedFromTheContent(relative: String, format: ConversationFile.Format) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: ingestFixture(relative)))
    // The name does not matter, except for Markdown without front matter or a heading.
    #expect(
      try ConversationFile.format(of: data, path: relative.hasSuffix(".md") ? relative : "export") == format)
  }

  @Test func aForcedFormatReadsOnlyThatFormat() throws {
    #expect(try read("telegram/result.json", IngestOptions(format: .telegram)).format == .telegram)
    #expect {
      try read("claude/conversations.json", IngestOptions(format: .chatgpt))
    } throws: { error in
      guard case .malformed(_, 2, let reason) = error as? ImportError else { return false }
      return reason.hasPrefix("conversation 1") && reason.contains("mapping")
    }
    #expect {
      try read("telegram/result.json", IngestOptions(format: .whatsapp))
    } throws: { error in
      guard case .malformed(_, 1, _) = error as? ImportError else { return false }
      return true
    }
    // JSONL forced on a WhatsApp file fails at its first line.
    #expect {
      try read("whatsapp/ambiguous.txt", IngestOptions(format: .jsonl))
    } throws: { error in
      guard case .malformed(_, 1, _) = error as? ImportError else { return false }
      return true
    }
  }

  @Test(arguments: [
    // The second conversation's record starts on line 2 and has no mapping.
    (
      "[{\"mapping\":{},\"current_node\":null,\"id\":\"a\"},\n{\"id\":\"b\",\"chat\":1}]", 2, "conversation 2"
    ),
    // (A ChatGPT node whose parent is missing is read with a note: HostileIngestTests.)
    // A Claude message that is not an object, in the first conversation.
    ("[{\"uuid\":\"c\",\"chat_messages\":[\n7]}]", 1, "message 1"),
    // A Telegram message whose text is a number, on line 3.
    (
      "{\"name\":\"n\",\"id\":1,\"messages\":[\n{\"id\":1,\"type\":\"message\",\"text\":\"ok\"},\n{\"id\":2,\"type\":\"message\",\"text\":42}]}",
      3, "message 2"
    ),
    // A Telegram export cut short.
    (
      "{\"name\":\"n\",\"id\":1,\"messages\":[\n{\"id\":1,\"type\":\"message\",\"text\":\"ok\"},\n{\"id\":2,",
      3, "ends inside the object that starts on line 1"
    ),
    // A WhatsApp day that does not exist.
    ("31/12/23, 10:00 - A: fine\n32/12/23, 10:00 - A: no such day\n", 2, "real day"),
  ])
  func malformedRecordsAreRefusedWithTheirLine(text: String, line: Int, words: String) {
    #expect {
      try parse(text, path: "export")
    } throws: { error in
      guard case .malformed(_, let reported, let reason) = error as? ImportError else { return false }
      return reported == line && reason.contains(words)
    }
  }

  @Test func emptyExportsAndOtherJSONAreTold() {
    #expect(throws: ImportError.empty(path: "x")) { try parse("[]") }
    #expect(throws: ImportError.empty(path: "x")) { try parse(#"{"name":"n","id":1,"messages":[]}"#) }
    #expect(throws: ImportError.unknownFormat(path: "x")) { try parse(#"[{"feedback":"thumbs up"}]"#) }
    #expect(throws: ImportError.unknownFormat(path: "x")) { try parse(#"{"email":"a@b.c"}"#) }
  }

  // MARK: - Markdown notes

  @Test func aShortNoteIsOneMemoryWithItsDateAndTags() throws {
    let note = try NoteFile.read(path: ingestFixture("markdown/notes/Kyoto trip.md"))
    #expect(note.memories.count == 1)
    let memory = note.memories[0]
    #expect(memory.text.hasPrefix("# Kyoto trip\n\nStay near [[Arashiyama]]"))
    #expect(memory.text.contains("[[Hoshinoya|the riverside ryokan]]"))
    #expect(memory.date == date("2024-05-01"))
    #expect(memory.tags == ["travel", "japan"])
    #expect(memory.line == 6)
  }

  @Test func aLongNoteIsOneMemoryPerHeadingSection() throws {
    let note = try NoteFile.read(path: ingestFixture("markdown/notes/recipes/Sourdough.md"))
    #expect(note.memories.count == 4)
    #expect(note.memories[0].text.hasPrefix("# Sourdough"))
    #expect(note.memories[1].text.hasPrefix("# Sourdough\n\n## Starter"))
    #expect(note.memories[3].text.hasPrefix("# Sourdough\n\n## Baking"))
    // A `#` line inside fenced code is not a heading.
    #expect(note.memories[3].text.hasSuffix("# not a heading: a shell comment\n```"))
    #expect(note.memories.allSatisfy { $0.tags == ["baking", "bread"] })
    #expect(note.memories[0].date == date("2024-02-03T08:30:00Z"))
    #expect(note.memories[1].line == 11)
  }

  @Test func noteFoldersAreReadRecursivelyWithoutHiddenFolders() {
    let files = NoteFolder.files(in: ingestFixture("markdown/notes")).map {
      URL(fileURLWithPath: $0).lastPathComponent
    }
    #expect(files == ["Kyoto trip.md", "empty.md", "Sourdough.md"])
  }

  @Test func malformedFrontMatterIsRefusedWithItsLine() {
    #expect {
      try NoteFile.parse(Data("---\ntitle: x\n\nbody\n".utf8), path: "n.md")
    } throws: { error in
      guard case .malformed(_, 1, _) = error as? ImportError else { return false }
      return true
    }
    #expect {
      try NoteFile.parse(Data("---\ntags: a\ndate: last spring\n---\nbody\n".utf8), path: "n.md")
    } throws: { error in
      guard case .malformed(_, 3, let reason) = error as? ImportError else { return false }
      return reason.contains("date")
    }
  }
}
