import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ConversationFileTests {
  func parse(_ text: String) throws(ImportError) -> ConversationFile {
    try ConversationFile.parse(Data(text.utf8), path: "t.jsonl", defaultSession: "t.jsonl")
  }

  @Test func jsonlGroupsTurnsBySessionInFileOrder() throws {
    let file = try parse(
      """
      {"role":"user","content":"hi","session":"b","timestamp":"2024-03-01T10:00:00Z"}
      {"role":"assistant","content":"hello","session":"b","speaker":"Ada"}

      {"role":"user","content":"other","session":"a","timestamp":1700000000}
      {"role":"user","content":"no session"}
      """)
    #expect(file.format == .jsonl)
    #expect(file.sessions.map(\.name) == ["b", "a", "t.jsonl"])
    #expect(file.sessions[0].turns.map(\.content) == ["hi", "hello"])
    #expect(file.sessions[0].turns[1].speaker == "Ada")
    #expect(file.sessions[0].startedAt == Date(timeIntervalSince1970: 1_709_287_200))
    #expect(file.sessions[1].turns[0].timestamp == Date(timeIntervalSince1970: 1_700_000_000))
    #expect(file.sessions[0].turns[1].sourceLine == 2)
    #expect(file.turnCount == 4)
  }

  @Test(arguments: [
    ("{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"user\"", 2),
    ("{\"role\":\"user\",\"content\":\"ok\"}\n\n{\"content\":\"x\"}", 3),
    ("{\"role\":\"robot\",\"content\":\"x\"}", 1),
    ("{\"role\":\"user\",\"content\":\"   \"}", 1),
    ("{\"role\":\"user\",\"content\":\"x\",\"timestamp\":\"yesterday\"}", 1),
    ("{\"role\":\"user\",\"content\":\"x\",\"metadata\":[1]}", 1),
    ("[1,2,3]", 1),
  ])
  func malformedLinesReportTheirLineNumber(text: String, line: Int) {
    #expect {
      try parse(text)
    } throws: { error in
      guard case .malformed(_, let reported, _) = error as? ImportError else { return false }
      return reported == line
    }
  }

  @Test func invalidUTF8IsRefusedWithItsLine() {
    var data = Data("{\"role\":\"user\",\"content\":\"ok\"}\n".utf8)
    data.append(contentsOf: [0x7B, 0xFF, 0xFE, 0x7D])
    #expect(throws: ImportError.invalidUTF8(path: "x", line: 2)) {
      try ConversationFile.parse(data, path: "x", defaultSession: "x")
    }
  }

  @Test func emptyFilesAreRefused() {
    #expect(throws: ImportError.empty(path: "t.jsonl")) { try parse("") }
    #expect(throws: ImportError.empty(path: "t.jsonl")) { try parse("\n  \n") }
  }

  @Test func contentThatLooksLikeQuerySyntaxIsKeptVerbatim() throws {
    let text = #"{"role":"user","content":"\"quoted\" AND (NOT x*) NEAR/3 col:^y -z 明天"}"#
    let file = try parse(text)
    #expect(file.sessions[0].turns[0].content == #""quoted" AND (NOT x*) NEAR/3 col:^y -z 明天"#)
  }

  @Test func locomoSessionsBecomeDatedSessions() throws {
    let text = """
      {"speaker_a":"Caroline","speaker_b":"Melanie",
       "session_1_date_time":"1:56 pm on 8 May, 2023",
       "session_1":[{"speaker":"Caroline","dia_id":"D1:1","text":"Hey Mel!"},
                    {"speaker":"Melanie","dia_id":"D1:2","text":"Hi!","blip_caption":"a dog"}],
       "session_2_date_time":"10:37 am on 27 June, 2023",
       "session_2":[{"speaker":"Melanie","dia_id":"D2:1","text":"Back again"}],
       "qa":[]}
      """
    let file = try parse(text)
    #expect(file.format == .locomo)
    #expect(file.sessions.count == 2)
    let start = try #require(file.sessions[0].startedAt)
    #expect(start == Date(timeIntervalSince1970: 1_683_554_160))
    #expect(file.sessions[0].turns[0].role == "user")
    #expect(file.sessions[0].turns[1].role == "assistant")
    #expect(file.sessions[0].turns[1].metadata["blip_caption"] == "a dog")
    #expect(file.sessions[0].turns[1].metadata["dia_id"] == "D1:2")
    #expect(file.sessions[0].turns[1].timestamp == start.addingTimeInterval(60))
  }

  @Test func locomoWithABadDateIsRefused() {
    let text = #"{"session_1_date_time":"someday","session_1":[{"speaker":"A","text":"x"}]}"#
    #expect {
      try parse(text)
    } throws: { error in
      if case .malformed(_, 0, let reason) = error as? ImportError { return reason.contains("session_1") }
      return false
    }
  }

  @Test func jsonObjectThatIsNeitherFormatIsUnknown() {
    #expect(throws: ImportError.unknownFormat(path: "t.jsonl")) { try parse(#"{"hello": 1}"#) }
  }

  /// A file's timestamp with its offset (read by arithmetic, without a `Calendar`) gives the
  /// formatter's instant for every shape the formatter writes; impossible days and times are
  /// refused; a zone-less time is UTC (one date rule: `DateParser.fileTimestamp`).
  @Test func fileTimestampsAgreeWithTheFormatter() throws {
    var generator = SplitMix64(seed: 41)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    for _ in 0..<2_000 {
      let seconds = Double(generator.next() % 4_000_000_000) - 500_000_000
      let date = Date(timeIntervalSince1970: seconds)
      let offsetMinutes = Int(generator.next() % 1_500) - 750
      formatter.timeZone = TimeZone(secondsFromGMT: offsetMinutes / 15 * 15 * 60)!
      let text = formatter.string(from: date)
      #expect(DateParser.fileTimestamp(text) == date, "\(text)")
      let fractional = text.replacingOccurrences(of: "Z", with: ".250Z")
      if fractional != text { #expect(DateParser.fileTimestamp(fractional) == date.addingTimeInterval(0.25)) }
    }
    for text in [
      "2025-02-30T10:00:00Z", "2025-13-01T10:00:00Z", "2025-06-11T25:00:00Z", "2025-06-11T10:00:00+2500",
    ] {
      #expect(DateParser.fileTimestamp(text) == nil, "\(text)")
    }
    #expect(
      DateParser.fileTimestamp("2025-06-11T10:00:00+08:00") == Date(timeIntervalSince1970: 1_749_607_200))
    #expect(DateParser.fileTimestamp("2025-06-11T02:00:00") == Date(timeIntervalSince1970: 1_749_607_200))
    #expect(DateParser.fileTimestamp("2025-06-11") == Date(timeIntervalSince1970: 1_749_600_000))
  }
}
