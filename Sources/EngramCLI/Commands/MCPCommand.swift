import Engram
import EngramHTTP
import EngramMCP
import Foundation

/// `engram mcp`: serves the memory to other agents over the Model Context Protocol (stdio, or
/// Streamable HTTP with `--http`).
public enum MCPCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "mcp", abstract: "Serve the memory over MCP on standard input/output (or HTTP with --http).",
    discussion: """
      Tools: memory_search, memory_remember, memory_forget, memory_context,
      conversation_append, memory_stats. Logs go to standard error. Several servers may
      share one memory file; writes are serialized by SQLite. The read tools (memory_search,
      memory_context, memory_stats) never write and never wait for another process's write
      lock. A memory the user cannot write is served read-only (the write tools then fail).
      With --http, remote agents connect to http://HOST:PORT/mcp; put a TLS reverse proxy in
      front for anything beyond one machine (see docs/mcp.md).
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
    @OptionGroup var serving: MCPHTTPServing.Options
    @OptionGroup var users: UserServing.Options

    /// The defaults.
    public init() {}
  }

  /// Read-write, unless the memory's file or folder cannot be written: then read-only.
  static func servingMode(_ context: CommandContext) throws -> EngineAccess.Mode {
    let path = context.databasePath
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    let manager = FileManager.default
    guard manager.fileExists(atPath: path) else { return .readWrite }
    let bits = (try? manager.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0o600
    let writable =
      manager.isWritableFile(atPath: path) && manager.isWritableFile(atPath: folder) && bits & 0o222 != 0
    return writable ? .readWrite : .readOnly
  }

  /// How the server introduces itself to MCP clients.
  static let serverInfo = ServerInfo(
    name: "engram", version: EngramCommandLine.version, title: "Engram memory",
    instructions:
      "Long-term memory of the user. Call memory_context (or memory_search) before answering questions "
      + "about the past; call memory_remember for durable facts and preferences.")

  /// Serves until standard input closes (with `--http`: until SIGINT or SIGTERM).
  public static func run(_ options: Options, context: CommandContext) async throws {
    let serving = options.serving
    if serving.sse || !serving.allowOrigin.isEmpty || !serving.allowHost.isEmpty || serving.tokenFile != nil,
      serving.http == nil
    {
      throw UsageError("--sse, --allow-origin, --allow-host and --token-file need --http HOST:PORT")
    }
    if serving.tokenFile != nil, options.users.users != nil {
      throw UsageError("--token-file does not apply with --users: each user's token selects the user")
    }
    let info = serverInfo
    if options.users.users != nil {
      guard let address = serving.http else { throw UsageError("--users needs --http HOST:PORT") }
      try await UserServing.withEngines(context, options: options.users) { engines in
        try await MCPHTTPServing.serve(
          context, options: serving, engines: engines, address: address, info: info)
      }
      return
    }
    try UserServing.validate(options.users)
    try await EngineAccess.withEngine(context, mode: try servingMode(context)) { engine in
      if let address = serving.http {
        try await MCPHTTPServing.serve(
          context, options: serving, engine: engine, address: address, info: info)
        return
      }
      let provider = EngineToolProvider(engine: engine, describe: EngineAccess.describe)
      try await MCPServer(info: info, provider: provider).serveStandardIO()
      await provider.finish()
    }
  }
}
