import EngramTestSupport
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct HelpFormatterTests {
  let configuration = CommandConfiguration(
    commandName: "query", abstract: "Search memories.", discussion: "Hybrid by default.",
    options: [
      .database,
      OptionSpec(
        "limit", short: "k", kind: .integer, valueName: "N", help: "Results.", defaultDescription: "10"),
      OptionSpec("tag", repeating: true, help: "Filter by tag."),
      .json,
    ],
    positionals: [PositionalSpec("text", help: "What to look for.")])

  @Test func usageLineListsOptionsThenPositionals() {
    #expect(
      HelpFormatter.usageLine(for: configuration, toolName: "engram")
        == "engram query [--db PATH] [-k N] [--tag TAG ...] [--json] TEXT")
  }

  @Test func customUsageReplacesTheGeneratedOne() {
    var custom = configuration
    custom.usage = "TEXT [options]"
    #expect(HelpFormatter.usageLine(for: custom, toolName: "engram") == "engram query TEXT [options]")
  }

  @Test func aCustomUsageStartingWithTheCommandNamesItOnce() {
    var custom = configuration
    custom.usage = "query TEXT [options]"
    #expect(HelpFormatter.usageLine(for: custom, toolName: "engram") == "engram query TEXT [options]")
    custom.usage = "query"
    #expect(HelpFormatter.usageLine(for: custom, toolName: "engram") == "engram query")
    custom.usage = "queryish TEXT"
    #expect(HelpFormatter.usageLine(for: custom, toolName: "engram") == "engram query queryish TEXT")
  }

  @Test func commandHelpHasEverySection() {
    let help = HelpFormatter.help(for: configuration, toolName: "engram")
    #expect(help.hasPrefix("OVERVIEW: Search memories.\n\nUSAGE: engram query "))
    #expect(help.contains("\nHybrid by default.\n"))
    #expect(help.contains("ARGUMENTS:\n  TEXT"))
    #expect(help.contains("  -k, --limit N  Results. (default: 10)\n"))
    #expect(help.contains("Filter by tag. (may be repeated)"))
    #expect(help.contains("  -h, --help"))
    #expect(help.hasSuffix("\n"))
  }

  @Test func toolHelpListsCommandsAlignedWithHelp() {
    let help = HelpFormatter.toolHelp(toolName: "engram", abstract: "Memory.", commands: [configuration])
    #expect(help.contains("COMMANDS:\n  query  Search memories.\n  help   Show help for a command.\n"))
    #expect(help.contains("--version"))
  }

  @Test func longTermsWrapTheirHelpToTheNextLine() {
    let rows = HelpFormatter.twoColumns([("a", "short"), (String(repeating: "x", count: 40), "long")])
    #expect(rows.count == 2)
    #expect(rows[1].contains("\n"))
    #expect(rows[0] == "  a  short")
  }
}
