import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// A file read one conversation at a time gives the sessions and turns the whole-file reader
/// gives, and fails on the same line with the same reason.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ConversationStreamTests {
  /// The stream's sessions, runs of one session joined by name as `ConversationFile` does.
  static func streamed(_ path: String, _ options: IngestOptions = IngestOptions(), blockBytes: Int = 4_096)
    throws(ImportError)
    -> (sessions: [ConversationSession], format: ConversationFile.Format, pieces: Int)
  {
    let stream = try ConversationStream(path: path, options: options, blockBytes: blockBytes)
    var order: [String] = []
    var byName: [String: ConversationSession] = [:]
    var pieces = 0
    while let piece = try stream.next() {
      pieces += 1
      guard var session = byName[piece.name] else {
        order.append(piece.name)
        byName[piece.name] = piece
        continue
      }
      session.turns += piece.turns
      if let start = piece.startedAt { session.startedAt = min(session.startedAt ?? start, start) }
      byName[piece.name] = session
    }
    return (order.map { byName[$0]! }, stream.format, pieces)
  }

  static func whole(_ path: String, _ options: IngestOptions = IngestOptions()) throws(ImportError)
    -> ConversationFile
  {
    try ConversationFile.read(path: path, options: options)
  }

  @Test(arguments: [
    "chatgpt/conversations.json", "chatgpt/conversations-later.json", "claude/conversations.json",
    "claude/conversations-later.json", "telegram/result.json", "telegram/all-chats.json",
    "telegram/result-later.json", "whatsapp/WhatsApp Chat with Dana.txt",
  ])
  func fixturesReadAsTheWholeFileReaderReadsThem(_ fixture: String) throws {
    let path = ingestFixture(fixture)
    let expected = try Self.whole(path)
    let streamed = try Self.streamed(path)
    #expect(streamed.format == expected.format)
    #expect(streamed.sessions == expected.sessions)
  }

  /// Exports past many blocks (4 KiB here), values straddling the block boundaries; JSONL with
  /// sessions interleaved and runs cut at `jsonlRun` turns.
  @Test func largeExportsAcrossBlocksReadAlike() throws {
    let folder = try TemporaryFolder()
    var conversations: [String] = []
    for number in 0..<300 {
      let text =
        "conversation \(number) about the harbour café ☕ \(String(repeating: "x", count: number % 300))"
      conversations.append(
        #"{"uuid":"c\#(number)","name":"Chat \#(number)","created_at":"2025-01-0\#(number % 9 + 1)T10:00:00Z","chat_messages":[{"uuid":"m\#(number)a","sender":"human","text":"\#(text)","created_at":"2025-01-0\#(number % 9 + 1)T10:00:00Z"},{"uuid":"m\#(number)b","sender":"assistant","text":"noted: \#(number)","created_at":"2025-01-0\#(number % 9 + 1)T10:01:00Z"}]}"#
      )
    }
    let claude = folder.path("conversations.json")
    try Data(("[\n  " + conversations.joined(separator: ",\n  ") + "\n]\n").utf8).write(
      to: URL(fileURLWithPath: claude))
    #expect(try Data(contentsOf: URL(fileURLWithPath: claude)).count > 20 * 4_096)
    let expected = try Self.whole(claude)
    let streamed = try Self.streamed(claude)
    #expect(streamed.format == .claude)
    #expect(streamed.sessions.count == 300)
    #expect(streamed.sessions == expected.sessions)

    var lines: [String] = []
    for number in 0..<2_600 {
      let session = number % 3 == 0 ? "b" : "a"
      lines.append(
        #"{"role":"user","speaker":"Ann","session":"\#(session)","content":"turn \#(number)","timestamp":"2025-03-01T09:\#(String(format: "%02d", number % 60)):00Z"}"#
      )
    }
    let jsonl = folder.path("turns.jsonl")
    try Data((lines.joined(separator: "\r\n") + "\n\n").utf8).write(to: URL(fileURLWithPath: jsonl))
    let wholeJSONL = try Self.whole(jsonl)
    let streamedJSONL = try Self.streamed(jsonl)
    #expect(streamedJSONL.format == .jsonl)
    #expect(streamedJSONL.sessions == wholeJSONL.sessions)
    #expect(streamedJSONL.pieces > 2, "sessions interleaved line by line come in runs")
  }

  /// Damage anywhere fails the stream on the line the whole-file reader names.
  @Test func damagedFilesFailOnTheSameLine() throws {
    let folder = try TemporaryFolder()
    let chatgpt = try String(contentsOfFile: ingestFixture("chatgpt/conversations.json"), encoding: .utf8)
    let telegram = try String(contentsOfFile: ingestFixture("telegram/all-chats.json"), encoding: .utf8)
    let jsonl = #"{"role":"user","content":"one"}"# + "\n" + #"{"role":"user","content":"two"}"# + "\n"
    let cases: [(name: String, text: String)] = [
      ("truncated.json", String(chatgpt.prefix(chatgpt.count * 2 / 3))),
      ("trailing.json", chatgpt + "\n]"),
      ("bad-value.json", chatgpt.replacingOccurrences(of: "\"mapping\"", with: "\"mapping\" ::")),
      ("telegram-cut.json", String(telegram.prefix(telegram.count / 2))),
      (
        "telegram-bad.json",
        telegram.replacingOccurrences(of: "\"date_unixtime\"", with: "\"date_unixtime\" 1,")
      ),
      ("lines.jsonl", jsonl + "{\"role\":\"user\",\"content\":\n" + jsonl),
      ("role.jsonl", jsonl + #"{"role":"robot","content":"x"}"# + "\n"),
      ("empty.jsonl", "\n  \n"),
    ]
    for (name, text) in cases {
      let path = folder.path(name)
      try Data(text.utf8).write(to: URL(fileURLWithPath: path))
      var wholeError: ImportError?
      do { _ = try Self.whole(path) } catch { wholeError = error }
      var streamError: ImportError?
      do { _ = try Self.streamed(path) } catch { streamError = error }
      #expect(wholeError != nil, "\(name) was read whole")
      #expect(streamError == wholeError, "\(name)")
    }
  }
}
