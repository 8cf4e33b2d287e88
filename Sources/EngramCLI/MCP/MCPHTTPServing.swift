import Engram
import EngramMCP
import Foundation

/// `engram mcp --http HOST:PORT`: the Streamable HTTP transport around one engine.
enum MCPHTTPServing {
  /// The options `engram mcp` adds for HTTP.
  struct Options: ParsableOptions {
    @Option(
      valueName: "HOST:PORT",
      help:
        "Serve MCP over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0: any free port). "
        + "A non-loopback HOST needs $ENGRAM_MCP_TOKEN (clients send Authorization: Bearer TOKEN).")
    var http: String?
    @Flag(help: "With --http: answer each request as a Server-Sent Events stream instead of a JSON body.")
    var sse = false
    @Option(
      valueName: "ORIGIN",
      help:
        "With --http: also accept browser requests from ORIGIN (scheme://host[:port]); loopback origins always are."
    )
    var allowOrigin: [String] = []
  }

  /// The transport's configuration from the options and `$ENGRAM_MCP_TOKEN`.
  static func configuration(_ context: CommandContext, options: Options, address: String) throws
    -> HTTPTransportConfiguration
  {
    let parsed: (host: String, port: UInt16)
    do {
      parsed = try HTTPTransportConfiguration.parse(address: address)
    } catch {
      throw UsageError(.invalidValue(argument: "--http", value: address, expected: "HOST:PORT"))
    }
    let token = context.environment["ENGRAM_MCP_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    var configuration = HTTPTransportConfiguration(host: parsed.host, port: parsed.port, bearerToken: token)
    configuration.responseMode = options.sse ? .eventStream : .json
    configuration.allowedOrigins = Set(options.allowOrigin)
    return configuration
  }

  /// Serves the users of `engines` until SIGINT or SIGTERM: each request's bearer token
  /// selects its user, whose engine's tools serve it.
  static func serve(
    _ context: CommandContext, options: Options, engines: UserEngines, address: String, info: ServerInfo
  ) async throws {
    var configuration = try configuration(context, options: options, address: address)
    // The users' tokens replace the one shared token.
    configuration.bearerToken = nil
    // One session per user and client is common: keep sessions for every user a few times over.
    configuration.maximumSessions = max(configuration.maximumSessions, 4 * engines.userCount)
    let transport = try HTTPTransport(
      configuration: configuration, log: MCPServer.logToStandardError,
      admission: UserEngineAdmission(engines: engines),
      makeServer: { MCPServer(info: info, provider: NoUserToolProvider(), log: MCPServer.logToStandardError) }
    )
    await transport.runUntilSignalled()
  }

  /// Serves `engine`'s tools until SIGINT or SIGTERM; every session gets its own protocol state.
  static func serve(
    _ context: CommandContext, options: Options, engine: MemoryEngine, address: String, info: ServerInfo
  ) async throws {
    let configuration = try configuration(context, options: options, address: address)
    let provider = EngineToolProvider(engine: engine)
    let transport = try HTTPTransport(
      configuration: configuration, log: MCPServer.logToStandardError,
      makeServer: { MCPServer(info: info, provider: provider, log: MCPServer.logToStandardError) })
    await transport.runUntilSignalled()
  }
}

/// The server-wide tool list of a multi-user endpoint: every request is served with the
/// tools of its user's engine instead (``HTTPAdmissionTicket/provider``), so this one is
/// never called.
struct NoUserToolProvider: ToolProvider {
  var tools: [MCPTool] { [] }

  func call(name: String, arguments: [String: JSONValue]) async throws -> ToolResult {
    throw ToolError("no user selected: send your bearer token")
  }
}
