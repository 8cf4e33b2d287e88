import Engram
import EngramAgent
import EngramHTTP
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
      from the network, and no browser is opened. It prints the address to open,
      http://127.0.0.1:PORT/?token=SECRET: the secret of this launch, which the page keeps as a
      cookie; API requests without it (or without Authorization: Bearer SECRET) get 401, and
      MCP clients send it as a bearer token. --token-file FILE keeps the secret across restarts
      (created 0600 when missing); --no-token serves without one. Requests sent to a host name
      other than localhost, 127.0.0.1 or [::1] are refused unless named with --allow-host (needed
      for a non-loopback --http address). Each browser session has its own conversation with
      the agent (the same agent as `engram chat`), and anything that writes waits for its
      Confirm button. --llm, --llm-model and --allow-insecure give the agents a language-model
      planner as for `engram chat` (its replies stream into the page). With --users FILE, each
      request's bearer token selects its user and is the secret (as for `engram mcp --http
      --users`, docs/many-users.md). Logs go to standard error.
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
    @Option(
      valueName: "HOST:PORT",
      help: "The address to serve at (default \(ServeCommand.defaultAddress); port 0: any free port).")
    var http: String?
    @Option(
      valueName: "NAME",
      help:
        "Also serve requests sent to host NAME (localhost, 127.0.0.1 and [::1] always are); required for a "
        + "non-loopback --http address. Repeatable.")
    var allowHost: [String] = []
    @Option(
      valueName: "ORIGIN",
      help: "Also accept browser requests from pages of ORIGIN (scheme://host[:port]).")
    var allowOrigin: [String] = []
    @Option(
      valueName: "FILE",
      help:
        "Keep the secret of the launch in FILE across restarts (created with a new one, mode 0600, when missing)."
    )
    var tokenFile: String?
    @Flag(help: "Serve without a secret: anyone who can reach the address can read and change the memory.")
    var noToken = false
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
    serving.allowHost = options.allowHost
    let address = options.http ?? defaultAddress
    let languageModel = try ChatCommand.languageModelConfiguration(
      llm: options.llm, model: options.llmModel, allowInsecure: options.allowInsecure)
    let environment = context.environment
    var configuration = try MCPHTTPServing.addressConfiguration(serving, address: address)
    if options.noToken, options.tokenFile != nil {
      throw UsageError("--token-file and --no-token contradict each other; give one")
    }
    let log: @Sendable (String) -> Void = { line in
      FileHandle.standardError.write(Data("engram serve: \(line)\n".utf8))
    }
    if options.users.users != nil {
      if options.noToken || options.tokenFile != nil {
        throw UsageError(
          "--token-file and --no-token do not apply with --users: each user's token is the secret")
      }
      try await UserServing.withEngines(context, options: options.users) { engines in
        // The users' tokens replace the one shared secret.
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
    configuration.bearerToken = try secret(options, environment: environment)
    if configuration.bearerToken == nil {
      log(
        "warning: --no-token: anyone who can reach \(address) (any program or user of this machine, "
          + "for a loopback address) can read and change this memory")
    }
    try await EngineAccess.withEngine(context, mode: try MCPCommand.servingMode(context)) { engine in
      let scope = WebScope(engine: engine, planner: planner(languageModel, environment: environment))
      let mcp = StreamableHTTPHandler(
        configuration: configuration, log: log,
        makeServer: {
          MCPServer(
            info: MCPCommand.serverInfo,
            provider: EngineToolProvider(engine: engine, describe: EngineAccess.describe), log: log)
        })
      var root = configuration
      root.path = "/"
      let app = WebApp(configuration: root, context: .single(scope), mcp: mcp, log: log)
      try await serve(app, log: log)
      await scope.chats.finish()
    }
  }

  /// The secret of the launch: `--token-file`'s, else `$ENGRAM_MCP_TOKEN`, else a new one; nil
  /// with `--no-token`.
  static func secret(_ options: Options, environment: [String: String]) throws -> String? {
    if options.noToken { return nil }
    if let path = options.tokenFile { return try ServerSecret.load(path: path) }
    if let token = environment["ENGRAM_MCP_TOKEN"], !token.isEmpty {
      guard token.count >= HTTPTransportConfiguration.minimumTokenLength,
        token.allSatisfy({ $0.isASCII && !$0.isWhitespace && !";,\"\\".contains($0) })
      else {
        throw CommandFailure(
          "ENGRAM_MCP_TOKEN must be at least \(HTTPTransportConfiguration.minimumTokenLength) visible ASCII "
            + "characters without ';', ',', quotes or backslashes to be this server's secret")
      }
      return token
    }
    return ServerSecret.fresh()
  }

  /// Serves `app` until SIGINT or SIGTERM, after printing the address to open (with the secret).
  static func serve(_ app: WebApp, log: @escaping @Sendable (String) -> Void) async throws {
    let transport = try MCPHTTPServing.transport(app, log: log)
    var base = transport.baseURL
    // A wildcard or public address is reached by the name it serves, not by its number.
    if !transport.isLoopback, let name = app.configuration.allowedHosts.sorted().first {
      let hasPort = name.contains(":") && !name.hasSuffix("]")
      base = "http://" + (hasPort ? name : "\(name):\(transport.boundPort)")
    }
    let open = base + "/" + (app.configuration.bearerToken.map { "?token=\($0)" } ?? "")
    // On standard output, for a person or a script; the log line on standard error says the same.
    FileHandle.standardOutput.write(Data("\(open)\n".utf8))
    log("open \(open) in a browser (it keeps the secret as a cookie)")
    await transport.runUntilSignalled()
  }
}
