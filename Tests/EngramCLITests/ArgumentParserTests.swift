import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ArgumentParserTests {
  static let configuration = CommandConfiguration(
    commandName: "query", abstract: "Search memories.",
    options: [
      .database,
      OptionSpec("limit", short: "k", kind: .integer, valueName: "N", help: "Results."),
      OptionSpec("weight", kind: .double, help: "Weight."),
      OptionSpec("tag", short: "t", repeating: true, help: "Tags."),
      OptionSpec("mode", kind: .choice(["hybrid", "vector", "keyword"]), help: "Mode."),
      OptionSpec("older-than", kind: .duration, help: "Age."),
      OptionSpec("since", kind: .date, help: "Start."),
      .json,
      .flag("verbose", short: "v", help: "More."),
      .flag("quiet", short: "q", help: "Less."),
    ],
    positionals: [
      PositionalSpec("text", help: "The query."), PositionalSpec("extra", optional: true, help: ""),
    ])

  let parser = ArgumentParser(configuration: configuration, toolName: "engram")

  func parsed(_ arguments: [String]) throws -> ParsedArguments {
    guard case .run(let values) = try parser.parse(arguments) else {
      Issue.record("expected values, got help")
      return ParsedArguments()
    }
    return values
  }

  func failure(_ arguments: [String]) -> UsageError? {
    do {
      _ = try parser.parse(arguments)
      return nil
    } catch {
      return error
    }
  }

  @Test func readsEveryKindOfValue() throws {
    let values = try parsed([
      "--db", "/tmp/x.sqlite", "-k", "5", "--weight=0.25", "--tag", "a", "-t", "b", "--tag=c", "--mode",
      "vector",
      "--older-than", "30d", "--since", "2024-05-01", "--json", "hello",
    ])
    #expect(values.string("db") == "/tmp/x.sqlite")
    #expect(values.integer("limit") == 5)
    #expect(values.double("weight") == 0.25)
    #expect(values.strings("tag") == ["a", "b", "c"])
    #expect(values.string("mode") == "vector")
    #expect(values.duration("older-than") == 2_592_000.0)
    #expect(values.date("since")?.isWholeDay == true)
    #expect(values.flag("json"))
    #expect(!values.flag("verbose"))
    #expect(values.string("text") == "hello")
    #expect(values.string("extra") == nil)
  }

  @Test func acceptsAttachedAndBundledShortOptions() throws {
    let values = try parsed(["-k12", "-vq", "-vk", "3", "-k=4", "x"])
    #expect(values.integer("limit") == 4)
    #expect(values.integers("limit") == [4])
    #expect(values.count("verbose") == 2)
    #expect(values.flag("quiet"))
  }

  @Test func laterSingleValuesReplaceEarlierOnes() throws {
    #expect(try parsed(["--limit", "1", "--limit", "2", "x"]).integer("limit") == 2)
  }

  @Test func doubleDashEndsOptionsAndDashIsPositional() throws {
    let values = try parsed(["--", "--json", "-k"])
    #expect(values.string("text") == "--json")
    #expect(values.string("extra") == "-k")
    #expect(!values.flag("json"))
    #expect(try parsed(["-"]).string("text") == "-")
    #expect(try parsed(["--db", "-", "x"]).string("db") == "-")
  }

  @Test func negativeNumbersAreValuesAndPositionals() throws {
    let values = try parsed(["-k", "-3", "--weight", "-0.5", "-7"])
    #expect(values.integer("limit") == -3)
    #expect(values.double("weight") == -0.5)
    #expect(values.string("text") == "-7")
  }

  @Test(arguments: [["--help"], ["-h"], ["x", "--help"], ["--bogus", "-h"]])
  func helpWinsWhereverItAppears(arguments: [String]) throws {
    #expect(try parser.parse(arguments) == .help)
  }

  @Test func helpAfterDoubleDashIsPositional() throws {
    #expect(try parsed(["--", "--help"]).string("text") == "--help")
  }

  @Test(arguments: [
    (["--bogus", "x"], UsageError.Reason.unknownOption("--bogus")),
    (["--bogus=1", "x"], .unknownOption("--bogus")),
    (["-z", "x"], .unknownOption("-z")),
    (["-vz", "x"], .unknownOption("-z")),
    (["x", "--limit"], .missingValue(option: "--limit")),
    (["x", "-k"], .missingValue(option: "-k")),
    (["--db", "--json", "x"], .missingValue(option: "--db")),
    (["--json=yes", "x"], .unexpectedValue(option: "--json")),
    (["-k", "five", "x"], .invalidValue(argument: "-k", value: "five", expected: "an integer")),
    (["--limit=1.5", "x"], .invalidValue(argument: "--limit", value: "1.5", expected: "an integer")),
    (
      ["--limit", "99999999999999999999", "x"],
      .invalidValue(argument: "--limit", value: "99999999999999999999", expected: "an integer")
    ),
    (["--weight", "nan", "x"], .invalidValue(argument: "--weight", value: "nan", expected: "a number")),
    (["--weight", "inf", "x"], .invalidValue(argument: "--weight", value: "inf", expected: "a number")),
    (
      ["--mode", "fuzzy", "x"],
      .invalidValue(argument: "--mode", value: "fuzzy", expected: "one of hybrid, vector, keyword")
    ),
    (
      ["--older-than", "30", "x"],
      .invalidValue(argument: "--older-than", value: "30", expected: ValueKind.duration.expectation)
    ),
    (
      ["--since", "2024-02-30", "x"],
      .invalidValue(argument: "--since", value: "2024-02-30", expected: ValueKind.date.expectation)
    ),
    ([], .missingArgument("TEXT")),
    (["--json"], .missingArgument("TEXT")),
    (["a", "b", "c"], .unexpectedArgument("c")),
  ])
  func reportsEachProblemWithTheUsageLine(arguments: [String], reason: UsageError.Reason) throws {
    let error = try #require(failure(arguments))
    #expect(error.reason == reason)
    #expect(error.usage.hasPrefix("engram query "))
    #expect(error.description.contains("\nUsage: engram query "))
  }

  @Test func repeatingPositionalCollectsTheRest() throws {
    let configuration = CommandConfiguration(
      commandName: "ingest", abstract: "",
      positionals: [PositionalSpec("files", repeating: true, help: "Files.")])
    let parser = ArgumentParser(configuration: configuration, toolName: "engram")
    #expect(
      try parser.parse(["a", "-", "c"])
        == .run(ParsedArguments(values: ["files": [.string("a"), .string("-"), .string("c")]])))
    #expect(throws: UsageError(.missingArgument("FILES..."), usage: "engram ingest FILES...")) {
      try parser.parse([])
    }
  }

  @Test func typedPositionalsAreChecked() throws {
    let configuration = CommandConfiguration(
      commandName: "forget", abstract: "", positionals: [PositionalSpec("id", kind: .integer, help: "")])
    let parser = ArgumentParser(configuration: configuration, toolName: "engram")
    #expect(try parser.parse(["12"]) == .run(ParsedArguments(values: ["id": [.integer(12)]])))
    let error = try #require(throws: UsageError.self) { try parser.parse(["twelve"]) }
    #expect(error.reason == .invalidValue(argument: "ID", value: "twelve", expected: "an integer"))
  }
}
