import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct StreamingParserTests {
  /// A body with comments, CRLF and CR line ends, a two-line event, an `event:` field and
  /// multi-byte characters (2, 3 and 4 bytes).
  static let body = Array(
    (": hello\r\n" + "data: {\"a\":\"é\"}\r\n\r\n" + "event: message\ndata: 世界\ndata:🙂\n\n"
      + "id: 7\rdata: last\r\r" + ":tail comment\n").utf8)

  static let expected = ["{\"a\":\"é\"}", "世界\n🙂", "last"]

  @Test func eventsAreTheSameWhereverTheBodyIsCut() {
    var whole = ServerSentEventParser()
    #expect(whole.feed(Self.body) + whole.finish() == Self.expected)
    for cut in 0...Self.body.count {
      var parser = ServerSentEventParser()
      let events = parser.feed(Self.body[..<cut]) + parser.feed(Self.body[cut...]) + parser.finish()
      #expect(events == Self.expected, "cut at byte \(cut)")
    }
    var bytewise = ServerSentEventParser()
    var events: [String] = []
    for byte in Self.body { events += bytewise.feed([byte]) }
    #expect(events + bytewise.finish() == Self.expected)
  }

  @Test func anEventWithoutItsBlankLineIsDispatchedAtTheEnd() {
    var parser = ServerSentEventParser()
    #expect(parser.feed(Array("data: one\n\ndata: two".utf8)) == ["one"])
    #expect(parser.finish() == ["two"])
    var empty = ServerSentEventParser()
    #expect(empty.feed(Array(":only a comment\n\n\n".utf8)).isEmpty)
    #expect(empty.finish().isEmpty)
  }

  @Test func theDecoderReadsDeltasTheEndAndErrors() throws {
    var decoder = ChatCompletionStreamDecoder()
    let role = String(ChatCompletionStream.roleEvent.dropFirst(6).dropLast(2))
    #expect(try decoder.delta(in: role) == nil)
    let hello = String(ChatCompletionStream.event("Hé\"llo\n").dropFirst(6).dropLast(2))
    #expect(try decoder.delta(in: hello) == "Hé\"llo\n")
    #expect(!decoder.isComplete)
    #expect(try decoder.delta(in: "[DONE]") == nil)
    #expect(decoder.isComplete)
    #expect(decoder.received == "Hé\"llo\n")

    var failing = ChatCompletionStreamDecoder()
    #expect(throws: LanguageModelError.serverError(message: "out of memory")) {
      try failing.delta(in: #"{"error": {"message": "out of memory", "type": "server_error"}}"#)
    }
    #expect(throws: LanguageModelError.serverError(message: "model not loaded")) {
      try failing.delta(in: #"{"error": "model not loaded"}"#)
    }
    do {
      _ = try failing.delta(in: "not json")
      Issue.record("expected an error")
    } catch {
      guard case .malformedResponse = error else { Issue.record("wrong error \(error)"); return }
    }
  }

  /// Feeds `reply` in pieces of `size` characters and returns the text the stream produced.
  func streamedAnswer(_ reply: String, size: Int) -> String {
    var stream = FinalAnswerStream()
    var text = ""
    var rest = Substring(reply)
    while !rest.isEmpty {
      text += stream.feed(String(rest.prefix(size)))
      rest = rest.dropFirst(size)
    }
    return text
  }

  @Test(arguments: [
    (#"{"final": "Hello, world!"}"#, "Hello, world!"),
    (#"  {  "final" :"line one\nline \"two\"\t\\ \/"}"#, "line one\nline \"two\"\t\\ /"),
    ("```json\n{\"final\": \"fenced\"}\n```", "fenced"),
    ("```\n{\"final\": \"bare fence\"}\n```", "bare fence"),
    (#"{"final": "caf\u00e9 \u4e16\u754c \ud83d\ude42 ok"}"#, "café 世界 🙂 ok"),
    (#"{"final": "中文回答，没有转义。"}"#, "中文回答，没有转义。"),
    (#"{"skill": "time.now", "arguments": {}}"#, ""),
    (#"{"plan": [{"skill": "time.now"}]}"#, ""),
    (#"Sure! {"final": "after a preamble"}"#, "after a preamble"),
    ("no object at all", ""),
    (#"{"final": "stops at a bad escape \x here"}"#, "stops at a bad escape "),
  ])
  func finalAnswersAreDecodedAsTheyStreamIn(reply: String, expected: String) {
    for size in [1, 2, 3, 7, reply.count] {
      #expect(streamedAnswer(reply, size: size) == expected, "pieces of \(size)")
    }
    if let action = try? AgentActionParser.parse(reply), case .final(let answer) = action {
      #expect(answer == expected, "the stream agrees with the parser")
    }
  }
}
