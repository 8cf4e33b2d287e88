import Engram
import EngramMCP
import Foundation

/// Many users in one server process (`engram mcp --http ... --users FILE`, and `engram
/// serve`): the options, and the `UserEngines` cache they describe.
public enum UserServing {
  /// The options a multi-user server adds.
  public struct Options: ParsableOptions {
    @Option(
      valueName: "FILE",
      help:
        "Serve many users: each request's bearer token selects its user in FILE (see `engram users`). "
        + "Without it, one user (--user) as before.")
    public var users: String?
    @Option(
      valueName: "DIR",
      help:
        "With --users, on SQLite: one memory file per user, DIR/USER.sqlite (default: one file, --db, for all)."
    )
    public var dbDir: String?
    @Option(
      valueName: "MB",
      help: "With --users: the most memory the open users' engines may hold (vector indexes, caches); "
        + "the least recently used idle user is closed first.")
    public var cacheMb = 512
    @Option(
      valueName: "N", help: "With --users, on PostgreSQL: database connections shared by all users.")
    public var connections = 16
    @Option(
      valueName: "N", help: "With --users: requests one user may have in flight at once (more get 503).")
    public var userConcurrency = 8
    @Option(
      valueName: "N",
      help: "With --users: requests per second one user may make on average (bursts of 2N; more get 503).")
    public var userRate = 100
    @OptionGroup public var embedder: EmbedderOptions

    /// The defaults.
    public init() {}
  }

  /// Checks that the multi-user options are used together with `--users`.
  static func validate(_ options: Options) throws {
    guard options.users == nil else {
      guard options.cacheMb >= 1 else {
        throw UsageError(
          .invalidValue(argument: "--cache-mb", value: String(options.cacheMb), expected: "at least 1"))
      }
      guard options.connections >= 1 else {
        throw UsageError(
          .invalidValue(argument: "--connections", value: String(options.connections), expected: "at least 1")
        )
      }
      guard options.userConcurrency >= 1 else {
        throw UsageError(
          .invalidValue(
            argument: "--user-concurrency", value: String(options.userConcurrency), expected: "at least 1"))
      }
      guard options.userRate >= 1 else {
        throw UsageError(
          .invalidValue(argument: "--user-rate", value: String(options.userRate), expected: "at least 1"))
      }
      return
    }
    if options.dbDir != nil { throw UsageError("--db-dir needs --users FILE") }
  }

  /// The engines of the users in `--users`, opened on first use from `--db` (one SQLite
  /// file or a PostgreSQL database, with a pool of `--connections`) or from `--db-dir`; nil
  /// without `--users`.
  public static func engines(_ context: CommandContext, options: Options) throws -> UserEngines? {
    try validate(options)
    guard let usersPath = options.users else { return nil }
    let users: UsersFile
    // Whoever can change the file can give themselves a token.
    try ServerSecret.checkPrivate(path: usersPath, what: "the users file", refuseReadable: false)
    do {
      users = try UsersFile.load(path: usersPath)
    } catch {
      throw CommandFailure(error.description)
    }
    let location: StoreLocation
    let directory = options.dbDir
    if let directory {
      var isFolder: ObjCBool = false
      if !FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      } else if !isFolder.boolValue {
        throw CommandFailure("\(directory) is not a folder")
      }
      location = .sqlite(path: directory)
    } else {
      location = try StoreLocation(parsing: context.databasePath)
    }
    let spec = try embedderSpec(context, options: options, location: location, directory: directory)
    let embedder = try spec.makeEmbedder(environment: context.environment)
    var configuration = EngramConfiguration(embedder: embedder)
    // Many engines at once: one reader each and a small page cache (the budget counts it).
    configuration.readerCount = 1
    configuration.cacheSizeKiB = 1024
    if case .postgres(let uri) = location {
      configuration.connectionPool = try PostgresConnectionPool(uri: uri, size: options.connections)
    }
    var limits = UserEngines.Limits()
    limits.cacheBytes = options.cacheMb << 20
    limits.concurrentRequestsPerUser = options.userConcurrency
    limits.requestsPerSecondPerUser = Double(options.userRate)
    limits.burstPerUser = Double(2 * options.userRate)
    let base = configuration
    let specText = spec.text
    return UserEngines(users: users, limits: limits) { user in
      var configuration = base
      configuration.user = user
      if let directory {
        let path = directory + "/" + user + ".sqlite"
        let isNew = !FileManager.default.fileExists(atPath: path)
        let engine = try MemoryEngine(path: path, configuration: configuration)
        if isNew { try? engine.maintenance.setEmbedderSpec(specText) }
        return engine
      }
      return try MemoryEngine(location: location, configuration: configuration)
    }
  }

  /// Runs `body` with the engines of `--users` (nothing without it), closing them afterwards
  /// whatever happens; errors read as sentences.
  static func withEngines(
    _ context: CommandContext, options: Options, _ body: (UserEngines) async throws -> Void
  ) async throws {
    try await EngineAccess.mappingErrors {
      guard let engines = try engines(context, options: options) else { return }
      do {
        try await body(engines)
      } catch {
        await engines.close()
        throw error
      }
      await engines.close()
    }
  }

  /// `--model`, else the spec recorded in the memory (the first user file of `--db-dir`),
  /// else the default.
  static func embedderSpec(
    _ context: CommandContext, options: Options, location: StoreLocation, directory: String?
  ) throws -> EmbedderSpec {
    if let spec = try options.embedder.spec() { return spec }
    if let directory {
      let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
        .filter { $0.hasSuffix(".sqlite") }.sorted()
      guard let first = files.first else { return .default }
      return try EngineAccess.spec(forDatabaseAt: directory + "/" + first)
    }
    if case .sqlite(let path) = location, !FileManager.default.fileExists(atPath: path) { return .default }
    return try EngineAccess.spec(forDatabaseAt: context.databasePath)
  }
}

/// The HTTP side of `UserEngines`: a request's token selects the user, whose engine's tools
/// serve it; a user at a limit gets 503 with `Retry-After`.
public struct UserEngineAdmission: HTTPUserAdmission {
  /// The engines.
  public let engines: UserEngines

  /// Admission through `engines`.
  public init(engines: UserEngines) {
    self.engines = engines
  }

  /// Selects the user by `token` and leases their engine.
  public func admit(token: String) async -> HTTPAdmission {
    guard let user = engines.user(forToken: token) else { return .unauthorized }
    do {
      let lease = try await engines.lease(user: user)
      return .admitted(
        HTTPAdmissionTicket(user: user, provider: EngineToolProvider(engine: lease.engine)) {
          lease.release()
        })
    } catch {
      return Self.refusal(error)
    }
  }

  /// The answer to a request whose lease failed with `error`: 503 with the seconds to wait
  /// (a user at a limit, a server closing), else 500.
  static func refusal(_ error: any Error) -> HTTPAdmission {
    switch error {
    case UserEnginesError.busy(_, let retryAfter):
      let seconds = max(
        1, Int(retryAfter.components.seconds) + (retryAfter.components.attoseconds > 0 ? 1 : 0))
      return .busy(
        retryAfterSeconds: seconds, message: "this user is at their request limit; retry in \(seconds) s")
    case UserEnginesError.closed:
      return .busy(retryAfterSeconds: 5, message: "the server is shutting down")
    default:
      return .failed(message: "cannot open this user's memory: \(EngineAccess.describe(error))")
    }
  }
}
