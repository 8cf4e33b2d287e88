import Engram
import EngramTestSupport
import Testing

@testable import EngramCLI

/// A command that embeds: prints the precision its embedders would be built at.
private enum PrecisionProbe: Command {
  struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
  }

  static let configuration = CommandConfiguration(commandName: "embeds", abstract: "Test command.")

  static func run(_ options: Options, context: CommandContext) async throws {
    let name = context.environment[EmbeddingPrecision.environmentKey]
    let precision = name.flatMap { EmbeddingPrecision(name: $0) } ?? .default
    context.output.write("\(precision.rawValue)\n")
  }
}

/// `--precision f32|int8` on the commands that embed: int8 by default, `$ENGRAM_PRECISION`
/// honoured, the option above both, an unknown name refused with the command's usage.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct PrecisionOptionTests {
  private func run(_ arguments: [String], environment: [String: String] = [:]) async -> ToolRun {
    let output = CapturedOutput()
    let error = CapturedOutput()
    let tool = CommandLineTool(name: "engram", version: "1", abstract: "", commands: [PrecisionProbe.self])
    let streams = StandardStreams(
      output: output, error: error, input: LineReader(text: ""), terminal: Terminal(),
      environment: environment)
    let status = await tool.run(arguments, streams: streams)
    return ToolRun(status: status, output: output.text, error: error.text)
  }

  @Test func int8IsTheDefaultAndF32IsAnOption() async {
    #expect(EmbeddingPrecision.default == .int8)
    #expect(await run(["embeds"]).output == "int8\n")
    #expect(await run(["embeds", "--precision", "f32"]).output == "f32\n")
    #expect(await run(["embeds", "--precision", "int8"]).output == "int8\n")
    #expect(await run(["embeds", "--precision=I8"]).output == "int8\n")
    #expect(await run(["embeds", "--precision=float32"]).output == "f32\n")
  }

  @Test func theOptionOverridesTheEnvironment() async {
    let environment = [EmbeddingPrecision.environmentKey: "int8"]
    #expect(await run(["embeds"], environment: environment).output == "int8\n")
    #expect(await run(["embeds", "--precision", "f32"], environment: environment).output == "f32\n")
  }

  @Test func anUnknownPrecisionIsAUsageError() async {
    let refused = await run(["embeds", "--precision", "fp16"])
    #expect(refused.status == 64)
    #expect(refused.output.isEmpty)
    #expect(refused.error.contains("invalid precision 'fp16': use f32 or int8"))
    #expect(refused.error.contains("Usage: engram embeds"))
  }

  @Test func everyCommandThatEmbedsTakesIt() {
    for name in ["ingest", "remember", "query", "serve", "mcp", "chat", "import", "reindex", "bench"] {
      let command = EngramCommandLine.tool.command(named: name)
      #expect(
        command?.declaredConfiguration.options.contains { $0.name == "precision" } == true, "\(name)")
    }
  }
}
