import Engram
import EngramHTTP
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
        + "A non-loopback HOST needs a token ($ENGRAM_MCP_TOKEN or --token-file; clients send "
        + "Authorization: Bearer TOKEN) and --allow-host.")
    var http: String?
    @Flag(help: "With --http: answer each request as a Server-Sent Events stream instead of a JSON body.")
    var sse = false
    @Option(
      valueName: "ORIGIN",
      help:
        "With --http: also accept browser requests from ORIGIN (scheme://host[:port]); loopback origins always are."
    )
    var allowOrigin: [String] = []
    @Option(
      valueName: "NAME",
      help:
        "With --http: also serve requests sent to host NAME (localhost, 127.0.0.1 and [::1] always are); "
        + "required for a non-loopback HOST. Repeatable.")
    var allowHost: [String] = []
    @Option(
      valueName: "FILE",
      help:
        "With --http: the bearer token clients must send, kept in FILE (created with a new token, mode 0600, "
        + "when missing); instead of $ENGRAM_MCP_TOKEN.")
    var tokenFile: String?
  }

  /// The transport's configuration from the options, `--token-file` and `$ENGRAM_MCP_TOKEN`.
  static func configuration(_ context: CommandContext, options: Options, address: String) throws
    -> HTTPTransportConfiguration
  {
    var configuration = try addressConfiguration(options, address: address)
    let token =
      try options.tokenFile.map { try ServerSecret.load(path: $0) }
      ?? context.environment["ENGRAM_MCP_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    configuration.bearerToken = token
    return configuration
  }

  /// The address, `--sse`, `--allow-origin` and `--allow-host` (no token).
  static func addressConfiguration(_ options: Options, address: String) throws -> HTTPTransportConfiguration {
    let parsed: (host: String, port: UInt16)
    do {
      parsed = try HTTPTransportConfiguration.parse(address: address)
    } catch {
      throw UsageError(.invalidValue(argument: "--http", value: address, expected: "HOST:PORT"))
    }
    var configuration = HTTPTransportConfiguration(host: parsed.host, port: parsed.port)
    configuration.responseMode = options.sse ? .eventStream : .json
    configuration.allowedOrigins = Set(options.allowOrigin)
    for name in options.allowHost {
      guard !name.isEmpty, !name.contains("/"), !name.contains(where: \.isWhitespace) else {
        throw UsageError(
          .invalidValue(
            argument: "--allow-host", value: name, expected: "a host name, as in a URL (name[:port])"))
      }
      configuration.allowedHosts.insert(name)
    }
    return configuration
  }

  /// Binds `handler`'s address: a non-loopback address without `--allow-host` is a usage error.
  static func transport<Handler: HTTPHandling>(_ handler: Handler, log: @escaping @Sendable (String) -> Void)
    throws -> HTTPTransport<Handler>
  {
    do throws(HTTPTransportError) {
      return try HTTPTransport(handler: handler, log: log)
    } catch {
      if case .allowedHostRequired = error { throw UsageError(error.description) }
      throw CommandFailure(error.description)
    }
  }

  /// How clients pass the token of `--token-file`, for the log.
  static func tokenHint(_ options: Options) -> String? {
    options.tokenFile.map {
      "clients send the token in \($0) as Authorization: Bearer TOKEN "
        + "(for example: -H \"Authorization: Bearer $(cat \($0))\")"
    }
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
    let log = MCPServer.logToStandardError
    let transport = try transport(
      StreamableHTTPHandler(
        configuration: configuration, log: log, admission: UserEngineAdmission(engines: engines),
        makeServer: { MCPServer(info: info, provider: NoUserToolProvider(), log: log) }),
      log: log)
    await transport.runUntilSignalled()
  }

  /// Serves `engine`'s tools until SIGINT or SIGTERM; every session gets its own protocol state.
  static func serve(
    _ context: CommandContext, options: Options, engine: MemoryEngine, address: String, info: ServerInfo
  ) async throws {
    let configuration = try configuration(context, options: options, address: address)
    let provider = EngineToolProvider(engine: engine, describe: EngineAccess.describe)
    let log = MCPServer.logToStandardError
    let transport = try transport(
      StreamableHTTPHandler(
        configuration: configuration, log: log,
        makeServer: { MCPServer(info: info, provider: provider, log: log) }),
      log: log)
    if let hint = tokenHint(options) { log(hint) }
    await transport.runUntilSignalled()
    await provider.finish()
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
