// EngramCLI: the commands of the `engram` tool (parse, call the engine, render).
import EngramPostgres
import Foundation

/// The entry point of the `engram` tool.
public enum EngramCommandLine {
  /// The tool's version.
  public static let version = "0.1.0"

  /// The subcommands, in the order `engram --help` lists them. Add a command here.
  public static let commands: [any Command.Type] = [
    InitCommand.self, RememberCommand.self, ForgetCommand.self, IngestCommand.self, QueryCommand.self,
    RouteCommand.self,
    ChatCommand.self, RemindersCommand.self, CalendarCommand.self, CompactCommand.self, StatsCommand.self,
    DoctorCommand.self, ExportCommand.self,
    ImportCommand.self,
    ReindexCommand.self, SkillsCommand.self, BenchCommand.self, DemoCommand.self, MCPCommand.self,
    ServeCommand.self, UsersCommand.self,
    VersionCommand.self,
  ]

  /// The tool: name, version and commands. The tool opens PostgreSQL stores (`--db
  /// postgresql://...`): this registers EngramPostgres's store with the engine.
  public static var tool: CommandLineTool {
    PostgresBackend.register()
    return CommandLineTool(
      name: "engram", version: version,
      abstract: "A local-first memory and vector store for assistant agents.",
      commands: commands)
  }

  /// Runs the command line and exits with its status.
  public static func main() async {
    let status = await tool.run(Array(CommandLine.arguments.dropFirst()), streams: .process())
    exit(status)
  }
}
