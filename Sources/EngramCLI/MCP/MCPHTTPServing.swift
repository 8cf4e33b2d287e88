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
