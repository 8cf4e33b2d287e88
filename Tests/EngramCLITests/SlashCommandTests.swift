import EngramTestSupport
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct SlashCommandTests {
  @Test(arguments: [
    ("/help", SlashCommand.help), ("/?", .help), ("/HELP", .help), ("  /skills  ", .skills), ("/quit", .quit),
    ("/exit", .quit), ("/q", .quit), ("/history", .history(limit: 10)), ("/history 3", .history(limit: 3)),
    ("/memories", .memories(limit: 10)), ("/memories 25", .memories(limit: 25)),
  ])
  func parsesKnownCommands(line: String, expected: SlashCommand) throws {
    #expect(try SlashCommand.parse(line) == expected)
  }

  @Test func rejectsUnknownNamesWithASuggestionWhenClose() {
    #expect(throws: SlashCommand.ParseError.unknown("skils", suggestion: "skills")) {
      try SlashCommand.parse("/skils")
    }
    #expect(throws: SlashCommand.ParseError.unknown("frobnicate", suggestion: nil)) {
      try SlashCommand.parse("/frobnicate")
    }
    #expect(throws: SlashCommand.ParseError.unknown("", suggestion: nil)) { try SlashCommand.parse("/") }
  }

  @Test(arguments: ["/history 0", "/history -2", "/history ten", "/memories 3 4"])
  func rejectsCountsThatAreNotPositiveIntegers(line: String) {
    #expect(throws: SlashCommand.ParseError.self) { try SlashCommand.parse(line) }
  }

  @Test func rejectsArgumentsToCommandsThatTakeNone() {
    #expect(throws: SlashCommand.ParseError.unexpectedArgument(command: "quit", value: "now")) {
      try SlashCommand.parse("/quit now")
    }
  }
}
