import Engram
import EngramMCP
import Foundation

/// `engram mcp`: serves the memory to other agents over the Model Context Protocol (stdio).
public enum MCPCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "mcp", abstract: "Serve the memory over MCP on standard input/output.",
    discussion: """
      Tools: memory_search, memory_remember, memory_forget, memory_context,
      conversation_append, memory_stats. Logs go to standard error. Several servers may
      share one memory file; writes are serialized by SQLite.
      """,
    options: [.database])

  /// Serves until standard input closes.
  public static func run(_ context: CommandContext) async throws {
    try await EngineAccess.withEngine(context) { engine in
      let server = MCPServer(
        info: ServerInfo(
          name: "engram", version: EngramCommandLine.version, title: "Engram memory",
          instructions:
            "Long-term memory of the user. Call memory_context (or memory_search) before answering questions "
            + "about the past; call memory_remember for durable facts and preferences."),
        provider: EngineToolProvider(engine: engine))
      try await server.serveStandardIO()
    }
  }
}
