import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct LineReaderTests {
  @Test func readsLinesWithAnyTerminator() throws {
    let reader = LineReader(text: "one\r\ntwo\n\nlast")
    #expect(try reader.readLine() == "one")
    #expect(try reader.readLine() == "two")
    #expect(try reader.readLine() == "")
    #expect(try reader.readLine() == "last")
    #expect(try reader.readLine() == nil)
    #expect(try reader.readLine() == nil)
  }

  @Test func invalidUTF8NamesTheLine() throws {
    let reader = LineReader(bytes: Array("ok\n".utf8) + [0xFF, 0xFE, 0x0A] + Array("after\n".utf8))
    #expect(try reader.readLine() == "ok")
    #expect(throws: LineReaderError.invalidUTF8(line: 2)) { try reader.readLine() }
    #expect(try reader.readLine() == "after")
  }

  @Test func promptsOnlyWhenAskedTo() throws {
    let prompts = CapturedOutput()
    let piped = LineReader(text: "a\n")
    _ = try piped.readLine(prompt: "> ", promptOutput: prompts)
    #expect(prompts.text.isEmpty)
    let interactive = LineReader(text: "a\n", showsPrompt: true)
    #expect(try interactive.readLine(prompt: "> ", promptOutput: prompts) == "a")
    #expect(prompts.text == "> ")
  }

  @Test func readsFromAPipeAcrossChunkBoundaries() throws {
    let pipe = Pipe()
    let long = String(repeating: "x", count: 10_000)
    pipe.fileHandleForWriting.write(Data("first\n\(long)\nthird".utf8))
    try pipe.fileHandleForWriting.close()
    let reader = LineReader(fileDescriptor: pipe.fileHandleForReading.fileDescriptor)
    #expect(!reader.showsPrompt)
    #expect(try reader.readLine() == "first")
    #expect(try reader.readLine() == long)
    #expect(try reader.readLine() == "third")
    #expect(try reader.readLine() == nil)
  }

  @Test func closedDescriptorIsAReadError() throws {
    let reader = LineReader(fileDescriptor: -1, showsPrompt: false)
    #expect(throws: LineReaderError.readFailed(errno: EBADF)) { try reader.readLine() }
  }

  @Test(arguments: [
    ("y\n", true), ("YES\n", true), (" n \n", false), ("no\n", false), ("\n", false), ("", false),
    ("maybe\nwhat\ny\n", true), ("maybe\n", false),
  ])
  func confirmReadsYesOrNo(input: String, expected: Bool) {
    #expect(LineReader(text: input).confirm("Delete 3 memories?", promptOutput: CapturedOutput()) == expected)
  }

  @Test func confirmRepromptsOnATerminal() {
    let prompts = CapturedOutput()
    let reader = LineReader(text: "huh\ny\n", showsPrompt: true)
    #expect(reader.confirm("Go?", promptOutput: prompts))
    #expect(prompts.text == "Go? [y/N] Please answer y or n.\nGo? [y/N] ")
  }

  @Test func confirmThroughTheContextUsesStandardError() {
    let error = CapturedOutput()
    let context = CommandContext(
      toolName: "engram", output: CapturedOutput(), error: error,
      input: LineReader(text: "y\n", showsPrompt: true), terminal: Terminal(), environment: [:])
    #expect(context.confirm("Compact?"))
    #expect(error.text == "Compact? [y/N] ")
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct TerminalTests {
  @Test func widthPrefersTheWindowThenColumnsThen80() {
    #expect(Terminal.resolveWidth(windowColumns: 120, environment: ["COLUMNS": "90"]) == 120)
    #expect(Terminal.resolveWidth(windowColumns: nil, environment: ["COLUMNS": "90"]) == 90)
    #expect(Terminal.resolveWidth(windowColumns: 0, environment: ["COLUMNS": "wide"]) == 80)
    #expect(Terminal.resolveWidth(windowColumns: nil, environment: ["COLUMNS": "-3"]) == 80)
  }

  @Test func noColorAndDumbTerminalsTurnColourOff() {
    #expect(Terminal.colorAllowed(environment: [:]))
    #expect(!Terminal.colorAllowed(environment: ["NO_COLOR": "1"]))
    #expect(Terminal.colorAllowed(environment: ["NO_COLOR": ""]))
    #expect(!Terminal.colorAllowed(environment: ["TERM": "dumb"]))
  }

  @Test func colourNeedsATerminalStream() {
    let terminal = Terminal(isOutputTerminal: true, isErrorTerminal: false, allowsColor: true)
    #expect(terminal.colorsOutput)
    #expect(!terminal.colorsError)
    #expect(!Terminal(isOutputTerminal: true, allowsColor: false).colorsOutput)
  }

  @Test func stylesApplyOnlyWhenEnabled() {
    #expect(TextStyle.red.apply(to: "x", enabled: true) == "\u{1B}[31mx\u{1B}[0m")
    #expect(TextStyle.red.apply(to: "x", enabled: false) == "x")
    #expect(TextStyle.bold.apply(to: "", enabled: true) == "")
  }

  @Test func probingThisProcessGivesAPositiveWidth() {
    #expect(Terminal.current(environment: [:]).width > 0)
  }
}
