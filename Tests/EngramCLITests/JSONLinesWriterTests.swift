import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct JSONLinesWriterTests {
  struct Record: Encodable {
    var text: String
    var score: Double
    var id: Int
    var tags: [String]
  }

  @Test func writesOneLinePerValueWithSortedKeys() throws {
    let output = CapturedOutput()
    let writer = JSONLinesWriter(output: output)
    try writer.write(Record(text: "a", score: 0.5, id: 2, tags: ["x/y"]))
    try writer.write(["b": 1, "a": 2])
    #expect(output.text == "{\"id\":2,\"score\":0.5,\"tags\":[\"x/y\"],\"text\":\"a\"}\n{\"a\":2,\"b\":1}\n")
  }

  @Test func escapesNewlinesQuotesAndControlCharacters() throws {
    let line = try JSONLinesWriter.line(for: ["t": "line1\nline2\r\t\"q\" \\ \u{7} é 日本"])
    #expect(!line.contains("\n"))
    #expect(line == #"{"t":"line1\nline2\r\t\"q\" \\ \u0007 é 日本"}"#)
    let decoded = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
    #expect(decoded?["t"] == "line1\nline2\r\t\"q\" \\ \u{7} é 日本")
  }

  @Test func nonFiniteNumbersFailAndWriteNothing() {
    let output = CapturedOutput()
    #expect(throws: JSONLinesError.self) { try JSONLinesWriter(output: output).write(["x": Double.nan]) }
    #expect(output.text.isEmpty)
  }
}
