import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// The lexical layer of iCalendar: folding at 75 octets without splitting a character, CRLF,
/// TEXT escaping and unescaping, unfolding and content lines with quoted parameters.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ICalendarSyntaxTests {
  static let samples = [
    "short",
    String(repeating: "a", count: 200),
    String(repeating: "日本語のテキスト", count: 20),
    String(repeating: "👩‍👩‍👧‍👦 family ", count: 12),
    "mixé " + String(repeating: "é😀中", count: 40),
  ]

  @Test(arguments: samples) func foldedLinesAreAtMost75OctetsAndUnfoldToTheOriginal(_ text: String) throws {
    let line = "SUMMARY:" + ICalendarSyntax.escapeText(text)
    let folded = ICalendarSyntax.fold(line)
    #expect(folded.hasSuffix("\r\n"))
    let physical = folded.dropLast(2).components(separatedBy: "\r\n")
    for (index, part) in physical.enumerated() {
      #expect(part.utf8.count <= 75)
      #expect(index == 0 || part.hasPrefix(" "))
      // Each physical line is whole UTF-8 on its own: no character's bytes were split.
      #expect(String(validating: Array(part.utf8), as: UTF8.self) != nil)
    }
    let calendar = "BEGIN:VCALENDAR\r\n" + folded + "END:VCALENDAR\r\n"
    let parsed = try ICalendarSyntax.parse(Data(calendar.utf8))
    let value = try #require(parsed.first?.property("SUMMARY")).value
    #expect(ICalendarSyntax.unescapeText(value) == text)
  }

  @Test func textEscapingRoundTripsSeparatorsBackslashesAndLineBreaks() {
    let text = "a,b;c\\d\nline two\r\nline three\rend\u{7}"
    let escaped = ICalendarSyntax.escapeText(text)
    #expect(escaped == #"a\,b\;c\\d\nline two\nline three\nend"#)
    #expect(ICalendarSyntax.unescapeText(escaped) == "a,b;c\\d\nline two\nline three\nend")
    #expect(ICalendarSyntax.unescapeText(#"x\Ny\qz"#) == "x\ny\\qz")
  }

  @Test func contentLinesReadQuotedParametersAndValuesWithColons() throws {
    let property = try ICalendarSyntax.contentLine(
      #"dtstart;tzid="America/New_York";X-A=1,"b:c":20250612T150000"#, line: 7)
    #expect(property.name == "DTSTART")
    #expect(property.parameters["TZID"] == "America/New_York")
    #expect(property.parameters["X-A"] == "1,b:c")
    #expect(property.value == "20250612T150000")
    #expect(try ICalendarSyntax.contentLine("DESCRIPTION:see: http://x", line: 1).value == "see: http://x")
    #expect(throws: ICalendarError(line: 3, .malformedLine)) {
      try ICalendarSyntax.contentLine("no colon here", line: 3)
    }
  }

  @Test func unfoldingAcceptsLFAndTabsAndCountsPhysicalLines() throws {
    let text = "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:one\n\ttwo\n  three\nEND:VEVENT\nEND:VCALENDAR\n"
    let calendars = try ICalendarSyntax.parse(Data(text.utf8))
    let event = try #require(calendars.first?.components.first)
    #expect(event.line == 2)
    #expect(event.property("SUMMARY")?.value == "onetwo three")
    #expect(event.property("SUMMARY")?.line == 3)
  }

  @Test(arguments: [
    ("{\"type\":\"header\"}\n", ICalendarError(line: 1, .notCalendar)),
    ("", ICalendarError(line: 1, .notCalendar)),
    (
      "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:x\r\n",
      ICalendarError(line: 2, .unterminated(component: "VEVENT"))
    ),
    ("BEGIN:VCALENDAR\r\nEND:VEVENT\r\n", ICalendarError(line: 2, .unexpectedEnd(component: "VEVENT"))),
    ("BEGIN:VCALENDAR\r\nthis is not a line\r\nEND:VCALENDAR\r\n", ICalendarError(line: 2, .malformedLine)),
  ])
  func malformedFilesNameTheirLine(_ text: String, _ expected: ICalendarError) {
    #expect(throws: expected) { try ICalendarSyntax.parse(Data(text.utf8)) }
  }

  @Test func invalidUTF8NamesItsLine() {
    var bytes = Array("BEGIN:VCALENDAR\r\nSUMMARY:ok\r\nSUMMARY:".utf8)
    bytes += [0xFF, 0xFE]
    bytes += Array("\r\nEND:VCALENDAR\r\n".utf8)
    #expect(throws: ICalendarError(line: 3, .invalidUTF8)) { try ICalendarSyntax.parse(Data(bytes)) }
  }
}
