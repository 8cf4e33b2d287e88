/// `engram version`: prints the tool's version (the same as `engram --version`).
public enum VersionCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "version", abstract: "Show the version.",
    options: [.json])

  /// Prints `engram X.Y.Z`, or `{"version":"X.Y.Z"}` with `--json`.
  public static func run(_ context: CommandContext) async throws {
    if context.arguments.flag("json") {
      try context.jsonLines.write(["version": EngramCommandLine.version])
    } else {
      context.output.write("\(context.toolName) \(EngramCommandLine.version)\n")
    }
  }
}
