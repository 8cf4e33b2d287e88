import Foundation

/// The process's streams and environment, bundled so tests can substitute them.
public struct StandardStreams: Sendable {
  /// Standard output.
  public var output: any TextOutput
  /// Standard error.
  public var error: any TextOutput
  /// Standard input.
  public var input: LineReader
  /// What the streams are connected to.
  public var terminal: Terminal
  /// The environment.
  public var environment: [String: String]

  /// Creates streams.
  public init(
    output: any TextOutput, error: any TextOutput, input: LineReader, terminal: Terminal,
    environment: [String: String]
  ) {
    self.output = output
    self.error = error
    self.input = input
    self.terminal = terminal
    self.environment = environment
  }

  /// The real stdin, stdout and stderr of this process.
  public static func process() -> StandardStreams {
    let environment = ProcessInfo.processInfo.environment
    let terminal = Terminal.current(environment: environment)
    return StandardStreams(
      output: FileDescriptorOutput.standardOutput, error: FileDescriptorOutput.standardError,
      input: LineReader(fileDescriptor: 0, showsPrompt: terminal.isInputTerminal),
      terminal: terminal, environment: environment)
  }
}

/// A tool with subcommands: dispatches, prints help and version, and turns errors into exit codes.
///
/// Exit codes: 0 success, 64 usage error (with the usage line on stderr), 130 interrupted,
/// 1 (or a command's ``ExitCode``) for any other failure, reported as one `tool: message` line.
public struct CommandLineTool: Sendable {
  /// The tool's name (`engram`).
  public var name: String
  /// The version printed by `--version`.
  public var version: String
  /// One line describing the tool.
  public var abstract: String
  /// The subcommands, in the order help lists them.
  public var commands: [any Command.Type]

  /// Creates a tool.
  public init(name: String, version: String, abstract: String, commands: [any Command.Type]) {
    self.name = name
    self.version = version
    self.abstract = abstract
    self.commands = commands
  }

  /// Runs the tool with `arguments` (without the executable name) and returns the exit status.
  public func run(_ arguments: [String], streams: StandardStreams) async -> Int32 {
    do {
      try await dispatch(arguments, streams: streams)
      return 0
    } catch let error as UsageError {
      var text = "\(name): \(error.message)\n"
      if !error.usage.isEmpty { text += "Usage: \(error.usage)\n" }
      text += "See '\(name) \(helpHint(for: error))'.\n"
      streams.error.write(text)
      return ExitCode.usage.rawValue
    } catch let exit as ExitCode {
      return exit.rawValue
    } catch is InterruptedError {
      streams.error.write("\(name): interrupted\n")
      return ExitCode.interrupted.rawValue
    } catch {
      streams.error.write("\(name): \(Self.describe(error))\n")
      return ExitCode.failure.rawValue
    }
  }

  /// The command type named `name`, if any.
  public func command(named name: String) -> (any Command.Type)? {
    commands.first { $0.configuration.commandName == name }
  }

  /// The tool's help page.
  public var help: String {
    HelpFormatter.toolHelp(toolName: name, abstract: abstract, commands: commands.map { $0.configuration })
  }

  /// The options every memory command takes, accepted before the command name too
  /// (`engram --user ann query ...`).
  static let globalOptionNames: Set<String> = ["db", "user"]

  /// Splits leading `--db VALUE` / `--user VALUE` (or `--name=VALUE`) off `arguments`.
  static func leadingGlobalOptions(_ arguments: [String]) -> (options: [String], rest: [String]) {
    var options: [String] = []
    var rest = arguments[...]
    while let first = rest.first, first.hasPrefix("--") {
      let body = first.dropFirst(2)
      let name = body.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
      guard globalOptionNames.contains(name) else { break }
      if body.contains("=") {
        options.append(first)
        rest = rest.dropFirst()
      } else {
        guard rest.count >= 2 else { break }
        options.append(contentsOf: rest.prefix(2))
        rest = rest.dropFirst(2)
      }
    }
    return (options, Array(rest))
  }

  private func dispatch(_ commandLine: [String], streams: StandardStreams) async throws {
    let (globalOptions, arguments) = Self.leadingGlobalOptions(commandLine)
    guard let first = arguments.first else {
      streams.error.write(help)
      throw UsageError(.missingCommand)
    }
    switch first {
    case "--help", "-h":
      streams.output.write(help)
      return
    case "--version":
      streams.output.write("\(name) \(version)\n")
      return
    case "help":
      try showHelp(Array(arguments.dropFirst()), streams: streams)
      return
    default:
      break
    }
    if first.hasPrefix("-") && first != "-" {
      throw UsageError(.unknownOption(first), usage: "\(name) <command> [options]")
    }
    guard let command = command(named: first) else {
      throw UsageError(.unknownCommand(first, suggestion: suggestion(for: first)))
    }
    var configuration = command.declaredConfiguration
    // Every command that opens a memory takes --user too (whose memory; docs/users.md).
    let userOptions = UserOptions.optionSpecs
    if configuration.options.contains(where: { DatabaseOptions.optionSpecs.contains($0) }),
      !configuration.options.contains(where: { option in userOptions.contains { $0.name == option.name } })
    {
      configuration.options += userOptions
    }
    let parser = ArgumentParser(configuration: configuration, toolName: name)
    switch try parser.parse(globalOptions + Array(arguments.dropFirst())) {
    case .help:
      streams.output.write(HelpFormatter.help(for: configuration, toolName: name))
    case .run(let parsed):
      // --precision of a command that embeds reaches every embedder it builds as $ENGRAM_PRECISION.
      let environment: [String: String]
      do {
        environment = try PrecisionOptions.decode(parsed).applied(to: streams.environment)
      } catch var error as UsageError {
        error.usage = parser.usage
        throw error
      }
      let context = CommandContext(
        toolName: name, database: try DatabaseOptions.decode(parsed).db,
        userOption: try UserOptions.decode(parsed).user,
        output: streams.output, error: streams.error, input: streams.input, terminal: streams.terminal,
        environment: environment)
      do {
        try await Self.execute(command, parsed, context: context)
      } catch var error as UsageError {
        if error.usage.isEmpty { error.usage = parser.usage }
        throw error
      }
    }
  }

  /// Decodes `command`'s options from `parsed` and runs it.
  private static func execute<C: Command>(
    _ command: C.Type, _ parsed: ParsedArguments, context: CommandContext
  )
    async throws
  {
    try await command.run(try C.Options.decode(parsed), context: context)
  }

  private func showHelp(_ arguments: [String], streams: StandardStreams) throws(UsageError) {
    guard let topic = arguments.first else {
      streams.output.write(help)
      return
    }
    if arguments.count > 1 {
      throw UsageError(.unexpectedArgument(arguments[1]), usage: "\(name) help [COMMAND]")
    }
    if topic == "help" {
      streams.output.write("USAGE: \(name) help [COMMAND]\n\nShows the tool's help, or a command's.\n")
      return
    }
    guard let command = command(named: topic) else {
      throw UsageError(.unknownCommand(topic, suggestion: suggestion(for: topic)))
    }
    streams.output.write(HelpFormatter.help(for: command.declaredConfiguration, toolName: name))
  }

  private func helpHint(for error: UsageError) -> String {
    switch error.reason {
    case .missingCommand, .unknownCommand: return "--help"
    default:
      let commandName = error.usage.split(separator: " ").dropFirst().first.map(String.init)
      if let commandName, command(named: commandName) != nil { return "help \(commandName)" }
      return "--help"
    }
  }

  /// The closest command name within two edits, for "did you mean".
  func suggestion(for word: String) -> String? {
    let candidates = commands.map { $0.configuration.commandName } + ["help"]
    let scored = candidates.map { ($0, Self.editDistance($0, word)) }.filter { $0.1 <= 2 }
    return scored.min { $0.1 < $1.1 }?.0
  }

  /// Levenshtein distance between two short words.
  static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
    var previous = Array(0...b.count)
    for i in 1...a.count {
      var current = [i] + Array(repeating: 0, count: b.count)
      for j in 1...b.count {
        let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
        current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
      }
      previous = current
    }
    return previous[b.count]
  }

  /// One line for a failure: the error's description with line breaks folded.
  public static func describe(_ error: any Error) -> String {
    let text: String
    if let localized = error as? any LocalizedError, let description = localized.errorDescription {
      text = description
    } else {
      text = String(describing: error)
    }
    return text.split(whereSeparator: \.isNewline).joined(separator: " ")
  }
}
