import Engram
import EngramAgent
import EngramMCP
import Foundation

/// `engram serve`: the local web app (chat, memory, agenda, insight, route inspector) and its
/// JSON API, on the same HTTP core as `engram mcp --http` (which it also serves at `/mcp`).
public enum ServeCommand: Command {
  /// The address served when `--http` is not given.
  public static let defaultAddress = "127.0.0.1:8930"

  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "serve",
    abstract: "Serve the web app: chat, memory, agenda, insight (http://127.0.0.1:8930).",
    discussion: """
      Opens the memory and serves a single-page web app and the JSON API it uses (docs/web.md),
      plus MCP at /mcp, until Ctrl-C. Everything ships inside the binary; nothing is fetched
      from the network. Each browser session has its own conversation with the agent (the
      same agent as `engram chat`), and anything that writes waits for its Confirm button.
      A non-loopback --http address needs $ENGRAM_MCP_TOKEN: the page asks for it, and API
      requests send it as Authorization: Bearer TOKEN. --llm, --llm-model and --allow-insecure
      give the agents a language-model planner as for `engram chat` (its replies stream into
      the page). With --users FILE, each request's bearer token selects its user (as for
      `engram mcp --http --users`, docs/many-users.md). Logs go to standard error.
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Option(
      valueName: "HOST:PORT",
      help: "The address to serve at (default \(ServeCommand.defaultAddress); port 0: any free port).")
    var http: String?
    @Option(
      valueName: "ORIGIN",
      help: "Also accept browser requests from ORIGIN (scheme://host[:port]); loopback origins always are.")
    var allowOrigin: [String] = []
    @Option(
      valueName: "URL", help: "An OpenAI-compatible server that plans requests no rule fits (as for chat).")
    var llm: String?
    @Option(valueName: "NAME", help: "The model name sent to the --llm server.") var llmModel: String?
    @Flag(help: "Allow plain http to an --llm host that is not this machine.") var allowInsecure = false
    @OptionGroup var users: UserServing.Options

    /// The defaults.
    public init() {}
  }

  /// What makes each browser conversation's planner for `--llm`, or nil without it.
  static func planner(_ languageModel: LanguageModelConfiguration?, environment: [String: String])
    -> (@Sendable (SkillRegistry) throws -> Planner)?
  {
    guard let languageModel else { return nil }
    return { registry in
      Planner(
        model: try OpenAIChatClient(configuration: languageModel, environment: environment),
        registry: registry)
    }
  }

  /// Serves until SIGINT or SIGTERM.
  public static func run(_ options: Options, context: CommandContext) async throws {
    var serving = MCPHTTPServing.Options()
    serving.allowOrigin = options.allowOrigin
    let address = options.http ?? defaultAddress
    let languageModel = try ChatCommand.languageModelConfiguration(
      llm: options.llm, model: options.llmModel, allowInsecure: options.allowInsecure)
    let environment = context.environment
    var configuration = try MCPHTTPServing.configuration(context, options: serving, address: address)
    let log: @Sendable (String) -> Void = { line in
      FileHandle.standardError.write(Data("engram serve: \(line)\n".utf8))
    }
    if options.users.users != nil {
      try await UserServing.withEngines(context, options: options.users) { engines in
        // The users' tokens replace the one shared token.
        configuration.bearerToken = nil
        configuration.maximumSessions = max(configuration.maximumSessions, 4 * engines.userCount)
        let mcpConfiguration = configuration
        let mcp = StreamableHTTPHandler(
          configuration: mcpConfiguration, log: log, admission: UserEngineAdmission(engines: engines),
          makeServer: { MCPServer(info: MCPCommand.serverInfo, provider: NoUserToolProvider(), log: log) })
        var root = configuration
        root.path = "/"
        let app = WebApp(
          configuration: root,
          context: .users(engines, planner: planner(languageModel, environment: environment)), mcp: mcp,
          log: log)
        try await serve(app, log: log)
      }
      return
    }
    try UserServing.validate(options.users)
    try await EngineAccess.withEngine(context, mode: try MCPCommand.servingMode(context)) { engine in
      let scope = WebScope(engine: engine, planner: planner(languageModel, environment: environment))
      let mcp = StreamableHTTPHandler(
        configuration: configuration, log: log,
        makeServer: {
          MCPServer(info: MCPCommand.serverInfo, provider: EngineToolProvider(engine: engine), log: log)
        })
      var root = configuration
      root.path = "/"
      let app = WebApp(configuration: root, context: .single(scope), mcp: mcp, log: log)
      try await serve(app, log: log)
      await scope.chats.finish()
    }
  }

  /// Serves `app` until SIGINT or SIGTERM.
  static func serve(_ app: WebApp, log: @escaping @Sendable (String) -> Void) async throws {
    let transport: HTTPTransport<WebApp>
    do throws(HTTPTransportError) {
      transport = try HTTPTransport(handler: app, log: log)
    } catch {
      throw CommandFailure(error.description)
    }
    await transport.runUntilSignalled()
  }
}
