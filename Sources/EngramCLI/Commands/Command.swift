/// What a command declares about itself: its name, help texts and arguments.
public struct CommandConfiguration: Sendable {
  /// The word that selects the command (`query`).
  public var commandName: String
  /// One line shown in the command list.
  public var abstract: String
  /// Longer help shown by `engram help CMD`, after the usage line.
  public var discussion: String
  /// A usage line to show instead of the generated one (without the tool name).
  public var usage: String?
  /// Named options and flags. A ``Command`` leaves it empty: the tool fills it from the
  /// command's ``Command/Options`` declarations.
  public var options: [OptionSpec]
  /// Positional arguments, in order; only the last may repeat. A ``Command`` leaves it empty,
  /// as ``options``.
  public var positionals: [PositionalSpec]

  /// Creates a configuration.
  public init(
    commandName: String, abstract: String, discussion: String = "", usage: String? = nil,
    options: [OptionSpec] = [], positionals: [PositionalSpec] = []
  ) {
    self.commandName = commandName
    self.abstract = abstract
    self.discussion = discussion
    self.usage = usage
    self.options = options
    self.positionals = positionals
  }
}

/// One subcommand of the tool: a type with a static configuration, typed options and a `run`.
///
/// Adding a command is one type conforming to this protocol plus one line in the tool's list.
public protocol Command: SendableMetatype {
  /// The command's options, flags and positional arguments, declared as typed properties.
  associatedtype Options: ParsableOptions

  /// The command's name and help texts (its arguments come from ``Options``).
  static var configuration: CommandConfiguration { get }

  /// Runs the command with its decoded options and the process's streams.
  /// - Throws: ``UsageError`` for a bad command line (exit 64), ``ExitCode`` to end with a
  ///   status, anything else to print `engram: <error>` and exit 1.
  static func run(_ options: Options, context: CommandContext) async throws
}

extension Command {
  /// The configuration with the arguments ``Options`` declares: what help and the parser use.
  public static var declaredConfiguration: CommandConfiguration {
    var declared = configuration
    declared.options += Options.optionSpecs
    declared.positionals += Options.positionalSpecs
    return declared
  }
}
