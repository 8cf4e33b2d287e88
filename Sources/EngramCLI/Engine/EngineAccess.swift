import Engram
import Foundation

/// A failure reported as one line on standard error (exit 1).
public struct CommandFailure: Error, LocalizedError, Sendable, Hashable {
  /// The line, without the tool prefix.
  public var message: String

  /// Creates a failure.
  public init(_ message: String) {
    self.message = message
  }

  /// The line.
  public var errorDescription: String? { message }
}

/// Opens the memory a command names with the embedder recorded in it, and turns engine
/// errors into lines a person can act on.
public enum EngineAccess {
  /// The embedder spec for the existing database at `path`: the recorded spec, else the one
  /// its stored model id implies, else the default (a database without vectors yet).
  public static func spec(forDatabaseAt path: String, user: String = StoreUser.defaultID) throws
    -> EmbedderSpec
  {
    try recordedSpec(forDatabaseAt: path, user: user) ?? .default
  }

  /// The embedder spec the database at `path` records for `user` (on PostgreSQL each user's
  /// memory records its own; a SQLite file records one for all its users): the recorded
  /// spec, else the one its stored model id implies; nil when it records neither (a memory
  /// with no vectors yet, or on PostgreSQL a user new to the store).
  public static func recordedSpec(forDatabaseAt path: String, user: String = StoreUser.defaultID) throws
    -> EmbedderSpec?
  {
    try spec(recordedIn: try MemoryEngine.storedEmbedderSettings(path: path, user: user), at: path)
  }

  /// The embedder spec `settings` (read from the memory at `location`) record, or nil.
  /// - Throws: ``CommandFailure`` for a spec that does not parse, or a model id no spec builds.
  static func spec(recordedIn settings: StoredEmbedderSettings, at location: String) throws -> EmbedderSpec? {
    if let text = settings.spec {
      switch EmbedderSpec.parse(text) {
      case .success(let spec): return spec
      case .failure(let error): throw CommandFailure("\(StoreLocation.redacted(location)): \(error)")
      }
    }
    guard let modelID = settings.modelID else { return nil }
    if let spec = EmbedderSpec.inferred(fromModelID: modelID) { return spec }
    throw CommandFailure(
      "\(StoreLocation.redacted(location)): cannot tell how to build the embedder of its vectors (\(modelID)); "
        + "run `engram reindex --model SPEC` to choose one")
  }

  /// The embedder a user new to the shared store at `path` takes: the store's (the one
  /// `engram init --db URL` recorded for the default user), else the default.
  public static func storeSpec(forDatabaseAt path: String) throws -> EmbedderSpec {
    try recordedSpec(forDatabaseAt: path, user: StoreUser.defaultID) ?? .default
  }

  /// The embedder the command's user's memory at `path` is opened with, and, for a memory
  /// new to a shared store (PostgreSQL), where that choice came from (`--model`, or the
  /// store's): `model` when given and the memory records nothing; the recorded one otherwise.
  /// - Throws: ``CommandFailure`` when `model` differs from the one the memory records.
  static func embedderChoice(path: String, user: String, model: EmbedderSpec?) throws
    -> (spec: EmbedderSpec, newOrigin: String?)
  {
    if let recorded = try recordedSpec(forDatabaseAt: path, user: user) {
      if let model, model != recorded {
        throw CommandFailure(
          "\(StoreLocation.redacted(path)): the memory of user \(user) uses the embedder \(recorded.text), "
            + "not \(model.text); switch it with `engram reindex --model \(model.text)`")
      }
      return (recorded, nil)
    }
    guard StoreLocation.isURI(path) else { return (model ?? .default, nil) }
    if let model { return (model, "--model") }
    if user == StoreUser.defaultID { return (.default, "the default") }
    return (try storeSpec(forDatabaseAt: path), "the store's")
  }

  /// Fails with a line suggesting `engram init` when no memory exists at the command's path.
  /// Refuses, without opening anything, a symbolic link, a non-regular file or an empty file
  /// at the path (see ``DatabaseFile``): read commands never create a memory.
  public static func requireExisting(_ context: CommandContext) throws -> String {
    let path = context.databasePath
    guard try DatabaseFile.inspect(path, toolName: context.toolName) != .absent else {
      let option = context.database.map { " --db \($0)" } ?? ""
      throw CommandFailure("no memory at \(path); create one with `\(context.toolName) init\(option)`")
    }
    return path
  }

  /// What to do with a memory SQLite cannot read: it cannot be repaired in place.
  public static func damagedAdvice(_ path: String) -> String {
    "it cannot be repaired in place: move it aside (`mv \(path) \(path).damaged`), then import an export or "
      + "a backup into a new memory (`engram import FILE --db \(path)`), or start afresh (`engram init --db \(path)`)"
  }

  /// One line for a damaged database at `path`: says when the file is truncated.
  public static func describeDamage(path: String?, message: String) -> String {
    guard let path else { return "the memory is damaged (SQLite: \(message))" }
    if let truncation = DatabaseFile.truncation(path) {
      return
        "\(path): the memory is damaged: the file is truncated (\(truncation.actual) of "
        + "\(truncation.expected) bytes); \(damagedAdvice(path))"
    }
    return "\(path): the memory is damaged (SQLite: \(message)); \(damagedAdvice(path))"
  }

  /// How a command opens its memory.
  public enum Mode: Sendable, Hashable {
    /// Reads only: nothing is written (no snapshot, no access statistics, no lock files
    /// left behind), and a memory the user cannot write (read-only file, folder or medium)
    /// works. Every read command uses it: `query`, `stats`, `export`, `doctor` without
    /// `--repair`, `bench`, `compact --dry-run`, `route`.
    case readOnly
    /// Reads and writes.
    case readWrite
  }

  /// Opens the command's existing memory with its recorded embedder.
  ///
  /// A read-only open of a memory written by an older Engram (an older schema) upgrades it
  /// once through a read-write open when the file can be written, then opens it read-only.
  ///
  /// On PostgreSQL each user's memory records its own embedder. A user new to the store
  /// takes `model` (`--model`), else the store's embedder (``storeSpec(forDatabaseAt:)``),
  /// as `engram mcp --http --users` and `engram serve --users` do; a read-write open records
  /// it in the new memory and says so on standard error.
  /// - Throws: ``CommandFailure`` when `model` differs from the embedder the memory records.
  public static func openOffPool(
    _ context: CommandContext, mode: Mode = .readWrite, model: EmbedderSpec? = nil
  )
    async throws -> MemoryEngine
  {
    // Opening reads the database (and may build the vector index from its table, or migrate
    // an older file): blocking work, done off the cooperative pool.
    let (engine, new) = try await BlockingWork.run { try openEngine(context, mode: mode, model: model) }
    guard let new else { return engine }
    do {
      try await engine.maintenance.setEmbedderSpec(new.spec.text)
    } catch {
      await engine.close()
      throw error
    }
    context.error.write(
      "\(context.toolName): the memory of user \(engine.configuration.user) is new: it uses the embedder "
        + "\(new.spec.text) (\(new.origin))\n")
    return engine
  }

  /// Opens the memory; for a new user of a store, also the embedder spec to record and where
  /// it came from.
  private static func openEngine(_ context: CommandContext, mode: Mode, model: EmbedderSpec?) throws
    -> (engine: MemoryEngine, new: (spec: EmbedderSpec, origin: String)?)
  {
    let path = try requireExisting(context)
    let user = try context.user()
    let (spec, newOrigin) = try embedderChoice(path: path, user: user, model: model)
    let embedder = try spec.makeEmbedder(environment: context.environment)
    var configuration = EngramConfiguration(embedder: embedder, readOnly: mode == .readOnly)
    configuration.user = user
    let engine: MemoryEngine
    do {
      engine = try MemoryEngine(path: path, configuration: configuration)
    } catch StoreError.migrationRequired where mode == .readOnly {
      var writable = configuration
      writable.readOnly = false
      try MemoryEngine(path: path, configuration: writable).close()
      engine = try MemoryEngine(path: path, configuration: configuration)
    }
    guard let newOrigin, mode == .readWrite else { return (engine, nil) }
    return (engine, (spec, newOrigin))
  }

  /// Opens the command's memory in `mode`, runs `body`, closes the memory, and maps
  /// failures to one readable line (usage errors, exit codes and interruptions pass
  /// through). `model` is the embedder of a memory this creates (see ``open(_:mode:model:)``).
  public static func withEngine<T: Sendable>(
    _ context: CommandContext, mode: Mode = .readWrite, model: EmbedderSpec? = nil,
    _ body: (MemoryEngine) async throws -> T
  ) async throws -> T {
    try await mappingErrors {
      try await closing(try await openOffPool(context, mode: mode, model: model), body)
    }
  }

  /// Runs `body` with `engine`, then closes it awaited (its background build, snapshot and
  /// statistics are finished off the cooperative pool), on success and on failure alike.
  public static func closing<T: Sendable>(
    _ engine: MemoryEngine, isolation: isolated (any Actor)? = #isolation,
    _ body: (MemoryEngine) async throws -> T
  ) async throws -> T {
    let result: T
    do {
      result = try await body(engine)
    } catch {
      await engine.close()
      throw error
    }
    await engine.close()
    return result
  }

  /// Runs `body`, mapping failures as ``withEngine(_:_:)`` does.
  public static func mappingErrors<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    do {
      return try await body()
    } catch let error as UsageError {
      throw error
    } catch let error as ExitCode {
      throw error
    } catch let error as InterruptedError {
      throw error
    } catch EngramError.cancelled {
      throw InterruptedError()
    } catch {
      throw CommandFailure(describe(error))
    }
  }

  /// One line for an engine, store or embedder error.
  public static func describe(_ error: any Error) -> String {
    switch error {
    case let failure as CommandFailure: return failure.message
    case let error as StoreError: return describe(error)
    case let error as SQLiteError:
      let path = error.path.map { "\($0): " } ?? ""
      switch error.code {
      case .notADatabase: return "\(path)not an Engram memory (the file is not a SQLite database)"
      case .corrupt: return describeDamage(path: error.path, message: error.message)
      case .busy: return "\(path)the memory is locked by another process; try again"
      case .cannotOpen: return "\(path)cannot open the file"
      default: return "\(path)SQLite error: \(error.message)"
      }
    case let error as EmbeddingError: return error.description
    case EngramError.modelMismatch(
      let database, let databaseDimension, let configured, let configuredDimension):
      return
        "the memory's vectors come from \(database) (\(databaseDimension)-d) but the configured embedder is "
        + "\(configured) (\(configuredDimension)-d); run `engram reindex` to switch models"
    case let error as EngramError: return error.description
    case let error as ImportError: return error.description
    case let error as ICalendarError: return error.description
    case let error as EmbedderSpec.SpecError: return error.description
    default: return describeFileError(error) ?? CommandLineTool.describe(error)
    }
  }

  /// One line for a Foundation file error, naming the path and the real cause (Foundation on
  /// Linux reports a missing folder as "You don't have permission").
  static func describeFileError(_ error: any Error) -> String? {
    let nsError = error as NSError
    guard nsError.domain == NSCocoaErrorDomain else { return nil }
    guard
      let path = (nsError.userInfo[NSFilePathErrorKey] as? String)
        ?? (nsError.userInfo[NSURLErrorKey] as? URL)?.path
    else { return nil }
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    var isFolder: ObjCBool = false
    if !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) {
      return "\(path): no such folder (\(folder))"
    }
    if !isFolder.boolValue { return "\(path): \(folder) is not a folder" }
    switch CocoaError.Code(rawValue: nsError.code) {
    case .fileNoSuchFile, .fileReadNoSuchFile: return "\(path): no such file"
    case .fileWriteNoPermission, .fileReadNoPermission: return "\(path): permission denied"
    case .fileWriteOutOfSpace: return "\(path): the disk is full"
    case .fileWriteVolumeReadOnly: return "\(path): the file system is read-only"
    case .fileWriteFileExists: return "\(path): the file already exists"
    default: return "\(path): \(nsError.localizedDescription)"
    }
  }

  static func describe(_ error: StoreError) -> String {
    switch error {
    case .schemaTooNew(let path, let found, let supported):
      return
        "\(path) was written by a newer Engram (schema \(found), this engram knows \(supported)); "
        + "upgrade engram to use it (the file was not changed)"
    case .migrationRequired(let path, let found, let required):
      return "\(path) needs upgrading from schema \(found) to \(required); open it once without read-only"
    case .readOnlyFile(let path): return "\(path) is read-only"
    case .readOnlyDirectory(let path): return "cannot write in the folder of \(path)"
    case .databaseReadOnly(let path): return "\(path) was opened read-only"
    case .closed(let path): return "\(path) is closed"
    case .invalidImportance(let value): return "importance must lie in 0...1 (got \(value))"
    case .notFound(let table, let id): return "no row \(id) in \(table)"
    case .modelMismatch(let expectedModel, let expectedDimension, let actualModel, let actualDimension):
      return
        "the memory's vectors come from \(expectedModel) (\(expectedDimension)-d), not \(actualModel) "
        + "(\(actualDimension)-d); run `engram reindex` to switch models"
    case .invalidMigrations(let version, let expected):
      return "this engram's schema migrations are misnumbered (\(version) where \(expected) was expected)"
    case .wrongDimension(let expected, let actual):
      return "a vector has \(actual) values where the memory expects \(expected)"
    case .nonFiniteVector(let index): return "a vector holds NaN or infinity (value \(index))"
    case .emptyVector: return "a vector is empty"
    case .embeddingModelNotConfigured: return "the memory has no embedding model yet; run `engram init`"
    case .invalidEmbeddingModel(let model, let dimension):
      return "invalid embedding model '\(model)' of dimension \(dimension)"
    case .invalidColumnValue(let table, let column, let value):
      return "the memory holds a value this engram cannot read (\(table).\(column) = '\(value)'); "
        + "was it written by another tool?"
    case .invalidUTF8(let column):
      return
        "the memory holds text that is not valid UTF-8 (column \(column)); was it written by another tool?"
    case .missingID(let table): return "a \(table) row without an id cannot be updated"
    case .invalidPage(let limit, let offset): return "invalid page (limit \(limit), offset \(offset))"
    case .unsupported(let operation, let store): return "\(store): this store has no \(operation)"
    case .invalidUser(let user):
      return "invalid user '\(user)': use 1-128 ASCII letters, digits, '.', '_', '-' or '@' "
        + "(not starting with '.' or '-')"
    case .invalidLocation(let location, let reason): return "\(location): \(reason)"
    case .storeUnavailable(let location, let missing):
      return "\(location): this engram cannot open it yet: \(missing) is missing"
    }
  }
}
