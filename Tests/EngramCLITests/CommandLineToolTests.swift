import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// A command that behaves according to its `--outcome` option, for driving the dispatcher.
enum ProbeCommand: Command {
  struct Failure: Error, CustomStringConvertible {
    var description: String { "the disk is full\n(second line)" }
  }

  enum Outcome: String, CaseIterable, ExpressibleByArgument {
    case ok, fail, usage, exit, interrupt
  }

  struct Options: ParsableOptions {
    @Option(help: "What to do.") var outcome: Outcome?
    @OptionGroup var database: DatabaseOptions
    @Flag(help: ArgumentHelp.json) var json = false
    @Argument(help: "A word.") var word: String?
  }

  static let configuration = CommandConfiguration(commandName: "probe", abstract: "Test command.")

  static func run(_ options: Options, context: CommandContext) async throws {
    switch options.outcome ?? .ok {
    case .fail: throw Failure()
    case .usage: throw UsageError("--json and WORD exclude each other")
    case .exit: throw ExitCode(3)
    case .interrupt: throw InterruptedError()
    case .ok:
      context.output.write("word=\(options.word ?? "-") db=\(context.databasePath)\n")
      if options.json { try context.jsonLines.write(["ok": true]) }
    }
  }
}

struct ToolRun {
  var status: Int32
  var output: String
  var error: String
}

func runTool(_ arguments: [String], input: String = "") async -> ToolRun {
  let output = CapturedOutput()
  let error = CapturedOutput()
  let tool = CommandLineTool(
    name: "engram", version: "9.9.9", abstract: "Memory.", commands: [ProbeCommand.self, VersionCommand.self])
  let streams = StandardStreams(
    output: output, error: error, input: LineReader(text: input), terminal: Terminal(),
    environment: ["HOME": "/home/u", "ENGRAM_DB": "/env/db.sqlite"])
  let status = await tool.run(arguments, streams: streams)
  return ToolRun(status: status, output: output.text, error: error.text)
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct CommandLineToolTests {
  @Test func runsACommandWithItsArguments() async {
    let run = await runTool(["probe", "hello", "--db", "~/x.sqlite"])
    #expect(run.status == 0)
    #expect(run.output == "word=hello db=/home/u/x.sqlite\n")
    #expect(run.error.isEmpty)
  }

  @Test func versionFlagAndCommand() async {
    let flag = await runTool(["--version"])
    #expect(flag.status == 0)
    #expect(flag.output == "engram 9.9.9\n")
    let command = await runTool(["version", "--json"])
    #expect(command.status == 0)
    #expect(command.output == "{\"version\":\"\(EngramCommandLine.version)\"}\n")
  }

  @Test(arguments: [["--help"], ["-h"], ["help"]])
  func toolHelpGoesToStandardOutput(arguments: [String]) async {
    let run = await runTool(arguments)
    #expect(run.status == 0)
    #expect(run.output.contains("COMMANDS:\n  probe"))
    #expect(run.error.isEmpty)
  }

  @Test(arguments: [["help", "probe"], ["probe", "--help"], ["probe", "--outcome", "bogus", "-h"]])
  func commandHelpGoesToStandardOutput(arguments: [String]) async {
    let run = await runTool(arguments)
    #expect(run.status == 0)
    #expect(run.output.hasPrefix("OVERVIEW: Test command.\n\nUSAGE: engram probe "))
  }

  @Test(arguments: [
    (["probe", "--bogus"], "engram: unknown option '--bogus'\nUsage: engram probe"),
    (["probe", "--outcome"], "engram: missing value for option '--outcome'\nUsage: engram probe"),
    (["probe", "a", "b"], "engram: unexpected argument 'b'\nUsage: engram probe"),
    (["prob"], "engram: unknown command 'prob' (did you mean 'probe'?)"),
    (["zzzzzz"], "engram: unknown command 'zzzzzz'\n"),
    (["help", "zzzzzz"], "engram: unknown command 'zzzzzz'\n"),
    (["help", "probe", "more"], "engram: unexpected argument 'more'\nUsage: engram help [COMMAND]"),
    (["--bogus"], "engram: unknown option '--bogus'\nUsage: engram <command> [options]"),
    ([], "engram: missing command"),
    (
      ["probe", "--outcome", "usage"],
      "engram: --json and WORD exclude each other\nUsage: engram probe [--outcome"
    ),
  ])
  func usageErrorsExit64WithTheProblemOnStandardError(arguments: [String], message: String) async {
    let run = await runTool(arguments)
    #expect(run.status == 64)
    #expect(run.error.contains(message))
    #expect(run.output.isEmpty)
  }

  @Test func usageErrorsPointToTheCommandsHelp() async {
    #expect(await runTool(["probe", "--bogus"]).error.hasSuffix("See 'engram help probe'.\n"))
    #expect(await runTool(["nope"]).error.hasSuffix("See 'engram --help'.\n"))
  }

  @Test func failuresPrintOneLineAndExit1() async {
    let run = await runTool(["probe", "--outcome", "fail"])
    #expect(run.status == 1)
    #expect(run.error == "engram: the disk is full (second line)\n")
  }

  @Test func exitCodesAndInterruptionsSetTheStatus() async {
    let exit = await runTool(["probe", "--outcome", "exit"])
    #expect(exit.status == 3)
    #expect(exit.error.isEmpty)
    let interrupted = await runTool(["probe", "--outcome=interrupt"])
    #expect(interrupted.status == 130)
    #expect(interrupted.error == "engram: interrupted\n")
  }

  @Test func environmentSuppliesTheDefaultDatabase() async {
    #expect(await runTool(["probe"]).output == "word=- db=/env/db.sqlite\n")
  }

  @Test func suggestionsNeedAtMostTwoEdits() {
    let tool = CommandLineTool(name: "engram", version: "1", abstract: "", commands: [ProbeCommand.self])
    #expect(tool.suggestion(for: "prboe") == "probe")
    #expect(tool.suggestion(for: "hepl") == "help")
    #expect(tool.suggestion(for: "xyz") == nil)
    #expect(CommandLineTool.editDistance("kitten", "sitting") == 3)
    #expect(CommandLineTool.editDistance("", "abc") == 3)
  }

  @Test func theEngramToolListsItsCommands() {
    #expect(EngramCommandLine.tool.command(named: "version") != nil)
    #expect(EngramCommandLine.tool.help.contains("version"))
  }
}
