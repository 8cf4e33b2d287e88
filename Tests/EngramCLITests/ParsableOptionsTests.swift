import Engram
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// Options declared as typed properties, as a command declares them.
private struct SampleOptions: ParsableOptions {
  enum Mode: String, CaseIterable, ExpressibleByArgument {
    case hybrid, vector, keyword
  }

  @OptionGroup var database: DatabaseOptions
  @Option(short: "k", valueName: "N", help: "How many hits.") var limit = 10
  @Option(help: "How to rank.") var mode = Mode.hybrid
  @Option(valueName: "0..1", help: "Weight.") var weight = 0.5
  @Option(valueName: "AGE", help: "Age.") var olderThan = TimeSpan.days(30)
  @Option(valueName: "DATE", help: "Start.") var since: ParsedDate?
  @Option(valueName: "TAG", help: "A tag.") var tag: [String] = []
  @Option(valueName: "ISO8601", help: "The clock.", defaultDescription: "now") var now: String?
  @Flag(short: "y", help: "Do not ask.") var yes = false
  @Flag(help: ArgumentHelp.json) var json = false
  @Argument(help: "The file.") var file: String
  @Argument(help: "More words.") var words: [String] = []
}

/// A required repeating argument.
private struct FilesOptions: ParsableOptions {
  @Argument(name: "file", help: "Files.") var files: [String]
  @Option(name: "count", help: "How many.") var number: Int?
}

/// A stored property that is not a declaration.
private struct UndeclaredOptions: ParsableOptions {
  @Flag(help: "A flag.") var json = false
  var plain = 0
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ParsableOptionsTests {
  private func parse<Options: ParsableOptions>(_ type: Options.Type, _ arguments: [String]) throws -> Options
  {
    guard let options = try Options.parse(arguments, commandName: "sample") else {
      throw CommandFailure("expected options, got help")
    }
    return options
  }

  private func usageError<Options: ParsableOptions>(_ type: Options.Type, _ arguments: [String])
    -> UsageError?
  {
    do {
      _ = try Options.parse(arguments, commandName: "sample")
      return nil
    } catch {
      return error as? UsageError
    }
  }

  @Test func declarationsKeepTheirDefaultsWhenNothingIsGiven() throws {
    let options = try parse(SampleOptions.self, ["a.jsonl"])
    #expect(options.database.db == nil)
    #expect(options.limit == 10)
    #expect(options.mode == .hybrid)
    #expect(options.weight == 0.5)
    #expect(options.olderThan.seconds == 30 * 86_400)
    #expect(options.since == nil)
    #expect(options.tag.isEmpty)
    #expect(options.now == nil)
    #expect(!options.yes && !options.json)
    #expect(options.file == "a.jsonl")
    #expect(options.words.isEmpty)
  }

  @Test func givenValuesReplaceTheDefaultsWithTheirTypes() throws {
    let options = try parse(
      SampleOptions.self,
      [
        "--db", "/tmp/m.sqlite", "-k5", "--mode=vector", "--weight", "0.25", "--older-than", "1h30m",
        "--since", "2024-05-01", "--now", "2025-06-11T10:00:00+08:00", "-y", "--json", "f", "x", "y",
      ])
    #expect(options.database.db == "/tmp/m.sqlite")
    #expect(options.limit == 5)
    #expect(options.mode == .vector)
    #expect(options.weight == 0.25)
    #expect(options.olderThan.seconds == 5_400)
    #expect(options.since?.isWholeDay == true)
    #expect(options.now == "2025-06-11T10:00:00+08:00")
    #expect(options.yes && options.json)
    #expect(options.file == "f")
    #expect(options.words == ["x", "y"])
  }

  @Test func namesComeFromThePropertiesInKebabCase() {
    let names = SampleOptions.optionSpecs.map(\.name)
    #expect(names == ["db", "limit", "mode", "weight", "older-than", "since", "tag", "now", "yes", "json"])
    #expect(SampleOptions.positionalSpecs.map(\.name) == ["file", "words"])
    #expect(FilesOptions.optionSpecs.map(\.name) == ["count"])
    #expect(FilesOptions.positionalSpecs.map(\.name) == ["file"])
    #expect(ArgumentName.kebab("allowInsecure") == "allow-insecure")
    #expect(ArgumentName.kebab("llm") == "llm")
  }

  @Test func declarationsBecomeTheSpecsTheParserChecks() throws {
    let specs = Dictionary(uniqueKeysWithValues: SampleOptions.optionSpecs.map { ($0.name, $0) })
    #expect(specs["db"] == .database)
    #expect(
      specs["limit"]
        == OptionSpec(
          "limit", short: "k", kind: .integer, valueName: "N", help: "How many hits.",
          defaultDescription: "10"))
    #expect(specs["mode"]?.kind == .choice(["hybrid", "vector", "keyword"]))
    #expect(specs["mode"]?.valueName == "hybrid|vector|keyword")
    #expect(specs["weight"]?.kind == .double)
    #expect(specs["older-than"]?.kind == .duration)
    #expect(specs["since"]?.kind == .date)
    #expect(specs["tag"]?.isRepeating == true)
    #expect(specs["yes"]?.isFlag == true)
    #expect(specs["yes"]?.shortName == "y")
    #expect(specs["json"] == .json)
    let positionals = SampleOptions.positionalSpecs
    #expect(positionals[0] == PositionalSpec("file", help: "The file."))
    #expect(positionals[1] == PositionalSpec("words", optional: true, repeating: true, help: "More words."))
    #expect(FilesOptions.positionalSpecs == [PositionalSpec("file", repeating: true, help: "Files.")])
  }

  @Test func defaultsAreShownInHelpAsDeclared() {
    let specs = Dictionary(uniqueKeysWithValues: SampleOptions.optionSpecs.map { ($0.name, $0) })
    #expect(specs["limit"]?.defaultDescription == "10")
    #expect(specs["mode"]?.defaultDescription == "hybrid")
    #expect(specs["weight"]?.defaultDescription == "0.5")
    #expect(specs["older-than"]?.defaultDescription == "30d")
    #expect(specs["now"]?.defaultDescription == "now")
    // Nothing to show for an option without a value, a repeated one or a flag.
    #expect(specs["since"]?.defaultDescription == nil)
    #expect(specs["tag"]?.defaultDescription == nil)
    #expect(specs["json"]?.defaultDescription == nil)
  }

  @Test func helpIsGeneratedFromTheDeclarations() {
    var configuration = CommandConfiguration(commandName: "sample", abstract: "A sample.")
    configuration.options = SampleOptions.optionSpecs
    configuration.positionals = SampleOptions.positionalSpecs
    let help = HelpFormatter.help(for: configuration, toolName: "engram")
    #expect(
      help.contains(
        "USAGE: engram sample [--db PATH] [-k N] [--mode hybrid|vector|keyword] [--weight 0..1] "
          + "[--older-than AGE] [--since DATE] [--tag TAG ...] [--now ISO8601] [-y] [--json] FILE [WORDS...]\n"
      ))
    #expect(help.contains("  -k, --limit N "))
    #expect(help.contains("How many hits. (default: 10)\n"))
    #expect(help.contains("Age. (default: 30d)\n"))
    #expect(help.contains("A tag. (may be repeated)\n"))
    #expect(help.contains("  -y, --yes "))
    #expect(help.contains("  FILE  "))
  }

  @Test func aCommandsHelpComesFromItsOptions() {
    let help = HelpFormatter.help(for: QueryCommand.declaredConfiguration, toolName: "engram")
    #expect(help.contains("  -k, --limit N                 How many hits. (default: 10)\n"))
    #expect(help.contains("  --mode hybrid|vector|keyword  How to rank. (default: hybrid)\n"))
    #expect(help.contains("  TEXT...  What to look for (words are joined).\n"))
  }

  @Test func aMissingValueIsAUsageError() {
    #expect(usageError(SampleOptions.self, ["f", "--limit"])?.reason == .missingValue(option: "--limit"))
    #expect(
      usageError(SampleOptions.self, ["--tag", "--json", "f"])?.reason == .missingValue(option: "--tag"))
    #expect(usageError(SampleOptions.self, [])?.reason == .missingArgument("FILE"))
    #expect(usageError(FilesOptions.self, ["--count", "2"])?.reason == .missingArgument("FILE..."))
  }

  @Test func aValueOfTheWrongTypeIsAUsageError() {
    #expect(
      usageError(SampleOptions.self, ["f", "--limit", "x"])?.reason
        == .invalidValue(argument: "--limit", value: "x", expected: "an integer"))
    #expect(
      usageError(SampleOptions.self, ["f", "--mode", "fuzzy"])?.reason
        == .invalidValue(argument: "--mode", value: "fuzzy", expected: "one of hybrid, vector, keyword"))
    #expect(
      usageError(SampleOptions.self, ["f", "--weight", "heavy"])?.reason
        == .invalidValue(argument: "--weight", value: "heavy", expected: "a number"))
    #expect(usageError(SampleOptions.self, ["f", "--older-than", "30"]) != nil)
    #expect(
      usageError(SampleOptions.self, ["f", "--json=yes"])?.reason == .unexpectedValue(option: "--json"))
    #expect(usageError(FilesOptions.self, ["a", "--count", "many"])?.message.contains("'--count'") == true)
  }

  @Test func aRepeatedOptionCollectsOrKeepsTheLastValue() throws {
    let options = try parse(
      SampleOptions.self, ["--tag", "a", "f", "--tag=b", "-k", "3", "--limit", "7", "--yes", "-y"])
    #expect(options.tag == ["a", "b"])
    #expect(options.limit == 7)
    #expect(options.yes)
    let files = try parse(FilesOptions.self, ["a", "-", "c", "--count", "1", "--count", "2"])
    #expect(files.files == ["a", "-", "c"])
    #expect(files.number == 2)
  }

  @Test func helpIsAskedForNotParsed() throws {
    #expect(try SampleOptions.parse(["--limit", "x", "--help"]) == nil)
  }

  @Test func aPropertyThatDeclaresNothingIsReported() {
    #expect(UndeclaredOptions.optionSpecs.map(\.name) == ["json"])
    #expect(throws: ArgumentDeclarationError(property: "plain")) {
      _ = try UndeclaredOptions.decode(ParsedArguments())
    }
  }

  @Test(arguments: EngramCommandLine.commands.map { $0.configuration.commandName })
  func everyCommandDeclaresEachNameOnce(_ name: String) throws {
    let command = try #require(EngramCommandLine.tool.command(named: name))
    let configuration = command.declaredConfiguration
    let names = configuration.options.map(\.name) + configuration.positionals.map(\.name)
    #expect(Set(names).count == names.count, "\(names)")
    let shorts = configuration.options.compactMap(\.shortName)
    #expect(Set(shorts).count == shorts.count)
    #expect(configuration.positionals.dropLast().allSatisfy { !$0.isRepeating })
    // Every declaration decodes from an empty command line (required arguments stay unset).
    #expect(throws: Never.self) { try Self.decodeEmpty(command) }
  }

  private static func decodeEmpty<C: Command>(_ command: C.Type) throws {
    _ = try C.Options.decode(ParsedArguments())
  }
}
