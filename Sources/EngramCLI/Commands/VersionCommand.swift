/// `engram version`: prints the tool's version (the same as `engram --version`).
public enum VersionCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "version", abstract: "Show the version.")

  /// The command's options.
  public struct Options: ParsableOptions {
    @Flag(help: ArgumentHelp.json) var json = false

    /// The defaults.
    public init() {}
  }

  /// Prints `engram X.Y.Z`, or `{"version":"X.Y.Z"}` with `--json`.
  public static func run(_ options: Options, context: CommandContext) async throws {
    if options.json {
      try context.jsonLines.write(["version": EngramCommandLine.version])
    } else {
      context.output.write("\(context.toolName) \(EngramCommandLine.version)\n")
    }
  }
}
