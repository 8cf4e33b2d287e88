import Engram
import Foundation

/// `engram init`: creates a memory and records which embedder it uses.
public enum InitCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "init", abstract: "Create a memory (mode 0600) and choose its embedder.",
    discussion: """
      The file is created exclusively with mode 0600. A symbolic link, a FIFO or any other
      non-regular file at the path is refused (no command follows a link at the database
      path), and so is an empty file.

      Without --model the memory uses all-MiniLM-L6-v2; when that model is not installed,
      it falls back to the hashing embedder and says so (install the model with `make demo`
      and switch with `engram reindex --model minilm`). `--model e5-small` chooses
      multilingual-e5-small, for memories and questions in Chinese or another language than
      English (installed by `make setup`; slower than MiniLM).

      On PostgreSQL each user's memory has its own embedder. `init --db URL` records the
      store's, which a user new to the store takes (`ingest`, `remember`, the servers of
      `--users`); `init --db URL --user ID --model SPEC` makes a new user's memory with another.
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var embedder: EmbedderOptions

    /// The defaults.
    public init() {}
  }

  /// Creates the memory.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let path = context.databasePath
    let requested = try options.embedder.spec()
    try await EngineAccess.mappingErrors {
      if try DatabaseFile.inspect(path, toolName: context.toolName) != .absent {
        let user = try context.user()
        if StoreLocation.isURI(path), try EngineAccess.recordedSpec(forDatabaseAt: path, user: user) == nil {
          // A user new to a shared store: their memory takes --model, else the store's embedder.
          try await EngineAccess.closing(try await EngineAccess.openOffPool(context, model: requested)) {
            engine in
            let spec = try await engine.maintenance.metaValue(EmbedderSpec.metaKey) ?? "?"
            context.output.write(
              "created the memory of user \(user) in \(StoreLocation.redacted(path)) (embedder \(spec): "
                + "\(engine.embedder.modelID), \(engine.embedder.dimension)-d)\n")
          }
          return
        }
        let existing = try EngineAccess.spec(forDatabaseAt: path, user: user)
        if let requested, requested != existing {
          throw CommandFailure(
            "\(path) already holds a memory using \(existing.text); "
              + "switch with `\(context.toolName) reindex --model \(requested.text)`")
        }
        context.output.write("memory already exists: \(path) (embedder \(existing.text))\n")
        return
      }
      let (spec, embedder) = try chooseEmbedder(requested, context: context)
      if !StoreLocation.isURI(path) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(
          at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      }
      // Created here, exclusively, never through a link, mode 0600; then SQLite fills it.
      try DatabaseFile.createExclusively(path)
      let engine: MemoryEngine
      do {
        var configuration = EngramConfiguration(embedder: embedder)
        configuration.user = try context.user()
        engine = try MemoryEngine(path: path, configuration: configuration)
      } catch {
        try? FileManager.default.removeItem(atPath: path)
        throw error
      }
      try await EngineAccess.closing(engine) { engine in
        try await engine.maintenance.setEmbedderSpec(spec.text)
        context.output.write(
          "created memory \(path) (embedder \(spec.text): \(embedder.modelID), \(embedder.dimension)-d)\n")
      }
    }
  }

  /// The requested embedder, or MiniLM with the hashing fallback when none was requested.
  static func chooseEmbedder(_ requested: EmbedderSpec?, context: CommandContext) throws -> (
    EmbedderSpec, any Embedder
  ) {
    if let requested { return (requested, try requested.makeEmbedder(environment: context.environment)) }
    do {
      return (.minilm, try EmbedderSpec.minilm.makeEmbedder(environment: context.environment))
    } catch EmbeddingError.modelNotFound(let directory, _) {
      context.error.write(
        "\(context.toolName): all-MiniLM-L6-v2 is not installed (\(directory)); this memory uses the hashing "
          + "embedder (run `make demo` to install the model, then `\(context.toolName) reindex --model minilm`)\n"
      )
      let fallback = EmbedderSpec.hashing(dimension: 384)
      return (fallback, try fallback.makeEmbedder(environment: context.environment))
    }
  }
}

/// `--model SPEC`: the embedder, shared by `init`, `import` and `reindex`.
public struct EmbedderOptions: ParsableOptions {
  /// The spec given, if any (each command decides what its absence means).
  @Option(
    valueName: "SPEC",
    help:
      "The embedder: minilm, e5-small (multilingual), a model folder, hashing[:DIM], or http:URL#model=NAME&dim=N.",
    defaultDescription: "minilm")
  public var model: String?

  /// No embedder named.
  public init() {}

  /// The embedder `--model` names, or `nil` without it.
  /// - Throws: ``UsageError`` for a spec that does not parse.
  func spec() throws(UsageError) -> EmbedderSpec? {
    try Self.spec(model)
  }

  /// The embedder a `--model` value names, or `nil` without one.
  /// - Throws: ``UsageError`` for a spec that does not parse.
  static func spec(_ model: String?) throws(UsageError) -> EmbedderSpec? {
    guard let model else { return nil }
    switch EmbedderSpec.parseOption(model) {
    case .success(let spec): return spec
    case .failure(let error): throw UsageError(error.description)
    }
  }
}
