import Engram
import EngramHTTP
import EngramMCP
import EngramPostgres
import Foundation
import Synchronization

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
    @Option(
      valueName: "SPEC",
      help:
        "With --users: the embedder of a user's memory new to the store (default: the store's, the one "
        + "`engram init` chose); each user's memory made before is opened with its own.")
    public var model: String?

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
  ///
  /// Each user's memory is opened with the embedder it was made with (the spec it records,
  /// read through the pool on PostgreSQL); a memory new to the store takes `--model`, else
  /// the store's embedder (as `engram ingest --user` does), and records it. Users of one
  /// spec share one loaded embedder (``SharedEmbedders``).
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
    let store: Store
    if let directory = options.dbDir {
      var isFolder: ObjCBool = false
      if !FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      } else if !isFolder.boolValue {
        throw CommandFailure("\(directory) is not a folder")
      }
      store = .directory(directory)
    } else {
      switch try StoreLocation(parsing: context.databasePath) {
      case .sqlite(let path): store = .file(path)
      case .postgres(let uri):
        store = .postgres(uri, try PostgresConnectionPool(uri: uri, size: options.connections))
      }
    }
    let newUserSpec = try newUserSpec(options: options, store: store)
    let embedders = SharedEmbedders(environment: context.environment)
    // Loaded now, so a missing model stops the server at its start rather than at each
    // new user's first request.
    _ = try embedders.embedder(for: newUserSpec)
    let newOrigin = options.model == nil ? "the store's" : "--model"
    let (notes, toolName) = (context.error, context.toolName)
    var limits = UserEngines.Limits()
    limits.cacheBytes = options.cacheMb << 20
    limits.concurrentRequestsPerUser = options.userConcurrency
    limits.requestsPerSecondPerUser = Double(options.userRate)
    limits.burstPerUser = Double(2 * options.userRate)
    return UserEngines(users: users, limits: limits) { user in
      let (spec, isNew) = try userSpec(user, store: store, newUserSpec: newUserSpec)
      var configuration = EngramConfiguration(embedder: try embedders.embedder(for: spec))
      configuration.user = user
      // Many engines at once: one reader each and a small page cache (the budget counts it).
      configuration.readerCount = 1
      configuration.cacheSizeKiB = 1024
      if case .postgres(_, let pool) = store { configuration.connectionPool = pool }
      // Opening reads the database (and may build the vector index): off the cooperative pool.
      let engine = try await BlockingWork.run { [configuration] () throws -> MemoryEngine in
        switch store {
        case .file(let path): return try MemoryEngine(path: path, configuration: configuration)
        case .directory(let directory):
          return try MemoryEngine(path: directory + "/" + user + ".sqlite", configuration: configuration)
        case .postgres(let uri, _):
          return try MemoryEngine(location: .postgres(uri: uri), configuration: configuration)
        }
      }
      guard isNew else { return engine }
      do {
        try await engine.maintenance.setEmbedderSpec(spec.text)
      } catch {
        await engine.close()
        throw error
      }
      notes.write(
        "\(toolName): the memory of user \(user) is new: it uses the embedder \(spec.text) (\(newOrigin))\n")
      return engine
    }
  }

  /// Where the users' memories live.
  enum Store: Sendable {
    /// One SQLite file for every user (its embedder is the file's).
    case file(String)
    /// A SQLite file per user, `DIR/USER.sqlite`.
    case directory(String)
    /// A PostgreSQL database, through a pool every user shares.
    case postgres(String, PostgresConnectionPool)
  }

  /// The embedder a memory new to the store takes: `--model`, else the store's (on
  /// PostgreSQL the one `engram init --db URL` recorded for the default user, as `engram
  /// ingest --user` takes; in `--db-dir` the first user file's), else the default. On one
  /// SQLite file for all users, the file's embedder whatever `--model` says (its users share
  /// it).
  static func newUserSpec(options: Options, store: Store) throws -> EmbedderSpec {
    if case .file(let path) = store, FileManager.default.fileExists(atPath: path),
      let recorded = try EngineAccess.recordedSpec(forDatabaseAt: path)
    {
      return recorded
    }
    if let spec = try EmbedderOptions.spec(options.model) { return spec }
    switch store {
    case .file: return .default
    case .directory(let directory):
      let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
        .filter { $0.hasSuffix(".sqlite") }.sorted()
      guard let first = files.first else { return .default }
      return try EngineAccess.spec(forDatabaseAt: directory + "/" + first)
    case .postgres(let uri, let pool):
      let settings = try MemoryEngine.storedEmbedderSettings(pool: pool, user: StoreUser.defaultID)
      return try EngineAccess.spec(recordedIn: settings, at: uri) ?? .default
    }
  }

  /// The embedder `user`'s memory was made with, and whether the memory is new (it records
  /// none: it takes `newUserSpec`, and records it once open).
  static func userSpec(_ user: String, store: Store, newUserSpec: EmbedderSpec) throws -> (EmbedderSpec, Bool)
  {
    let recorded: EmbedderSpec?
    switch store {
    case .file:
      // One embedder for the whole file (`newUserSpec` is the file's).
      return (newUserSpec, false)
    case .directory(let directory):
      let path = directory + "/" + user + ".sqlite"
      guard FileManager.default.fileExists(atPath: path) else { return (newUserSpec, true) }
      recorded = try EngineAccess.recordedSpec(forDatabaseAt: path)
    case .postgres(let uri, let pool):
      recorded = try EngineAccess.spec(
        recordedIn: try MemoryEngine.storedEmbedderSettings(pool: pool, user: user), at: uri)
    }
    return recorded.map { ($0, false) } ?? (newUserSpec, true)
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
}

/// The HTTP side of `UserEngines`: a request's token selects the user, whose engine's tools
/// serve it; a user at a limit gets 503 with `Retry-After`.
public struct UserEngineAdmission: HTTPUserAdmission {
  /// The engines.
  public let engines: UserEngines
  /// The tools of the users served lately (each request is admitted on its own).
  let providers = UserToolProviders()

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
        HTTPAdmissionTicket(user: user, provider: providers.provider(user: user, engine: lease.engine)) {
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

/// The MCP tools of the users served lately, at most `capacity`, the least recently used
/// dropped first: each request of a many-users server is admitted on its own, and a routine
/// run waiting for confirmation (`routine_run`) lives in its user's tools until the request
/// that confirms it. A user whose engine was reopened gets new tools (a waiting run is then
/// refused as stale, never run on another engine).
final class UserToolProviders: Sendable {
  private struct Entry {
    var user: String
    var engine: ObjectIdentifier
    var provider: EngineToolProvider
  }

  /// How many users' tools are kept.
  let capacity: Int
  private let entries = Mutex<[Entry]>([])

  init(capacity: Int = 64) {
    self.capacity = max(1, capacity)
  }

  /// The tools of `user` over `engine`: the ones kept when they serve this engine, else new.
  func provider(user: String, engine: MemoryEngine) -> EngineToolProvider {
    entries.withLock { entries in
      let identity = ObjectIdentifier(engine)
      if let index = entries.firstIndex(where: { $0.user == user }) {
        let entry = entries.remove(at: index)
        if entry.engine == identity {
          entries.append(entry)
          return entry.provider
        }
      }
      let provider = EngineToolProvider(engine: engine, describe: EngineAccess.describe)
      entries.append(Entry(user: user, engine: identity, provider: provider))
      if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
      return provider
    }
  }
}
