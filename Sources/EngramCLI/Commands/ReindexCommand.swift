import Engram
import Foundation
import Synchronization

/// `engram reindex`: re-embeds everything, optionally with another model.
public enum ReindexCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "reindex", abstract: "Re-embed every item (with --model, switch the embedder).")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
    @OptionGroup var embedder: EmbedderOptions

    /// The defaults.
    public init() {}
  }

  /// Re-embeds all or nothing, with progress on standard error.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let requested = try options.embedder.spec()
    Interruption.install()
    defer { Interruption.uninstall() }
    try await EngineAccess.mappingErrors {
      let path = try EngineAccess.requireExisting(context)
      let spec = try requested ?? EngineAccess.spec(forDatabaseAt: path)
      let embedder = try spec.makeEmbedder(environment: context.environment)
      var configuration = EngramConfiguration(embedder: embedder)
      configuration.user = try context.user()
      let bar = Mutex<ProgressBar?>(nil)
      let task = Task {
        // The spec is stored with the vectors in one transaction: a kill in between would
        // leave a memory the CLI refuses to open (vectors of one model, spec of the other).
        try await MemoryEngine.reindex(
          path: path, configuration: configuration, embedderSpec: spec.text
        ) { progress in
          guard progress.phase == "embedding" else { return }
          let current = bar.withLock { bar in
            if bar == nil { bar = ProgressBar(label: "reindex", total: progress.total, context: context) }
            return bar!
          }
          current.update(done: progress.done)
        }
      }
      let watcher = Task {
        while !Task.isCancelled {
          if Interruption.isRequested { task.cancel(); return }
          try? await Task.sleep(for: .milliseconds(20))
        }
      }
      defer { watcher.cancel() }
      let engine = try await task.value
      try await EngineAccess.closing(engine) { engine in
        bar.withLock { $0 }?.finish()
        let count = try await engine.maintenance.tableCounts()["embeddings"] ?? 0
        context.output.write("reindexed \(count) items with \(embedder.modelID) (\(embedder.dimension)-d)\n")
      }
    }
  }
}
