import Engram
import Foundation
import Synchronization

/// `engram ingest FILE...`: stores conversation logs (JSONL messages or LoCoMo JSON).
public enum IngestCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "ingest", abstract: "Store conversation files (JSONL messages or LoCoMo JSON).",
    discussion: """
      Each file is stored whole or not at all: a malformed line refuses the file with its
      line number. Ctrl-C stops between embedding batches and leaves the file unstored.
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Flag(help: ArgumentHelp.json) var json = false
    @Argument(help: "Files to read; '-' reads standard input.") var file: [String]

    /// The defaults.
    public init() {}
  }

  /// Ingests each file in turn.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let files = options.file
    guard !files.isEmpty else { throw UsageError(.missingArgument("FILE")) }
    if files.filter({ $0 == "-" }).count > 1 {
      throw UsageError("standard input ('-') can be read only once")
    }
    Interruption.install()
    defer { Interruption.uninstall() }
    try await EngineAccess.withEngine(context) { engine in
      var totalTurns = 0
      for file in files {
        try Interruption.check()
        let report = try await ingest(file, engine: engine, context: context)
        totalTurns += report.turns
        if options.json {
          try context.jsonLines.write(
            [
              "file": .string(file), "format": .string(report.format.rawValue),
              "sessions": .int(report.sessions),
              "turns": .int(report.turns), "already_stored": .int(report.alreadyStored),
              "completed": .int(report.completed),
            ] as JSONValue)
        } else {
          var line =
            "ingested \(report.turns) turns in \(report.sessions) session\(report.sessions == 1 ? "" : "s") "
            + "from \(file) (\(report.format.rawValue))"
          if report.alreadyStored > 0 { line += "; \(report.alreadyStored) already stored, skipped" }
          if report.completed > 0 { line += "; embedded \(report.completed) an interrupted ingest left" }
          context.output.write(line + "\n")
        }
      }
      if files.count > 1 && !options.json {
        context.output.write("ingested \(totalTurns) turns from \(files.count) files\n")
      }
    }
  }

  /// Runs one file's ingest in a task that Ctrl-C cancels between embedding batches.
  static func ingest(_ file: String, engine: MemoryEngine, context: CommandContext) async throws
    -> IngestReport
  {
    let bar = Mutex<ProgressBar?>(nil)
    let label = file == "-" ? "ingest" : "ingest " + URL(fileURLWithPath: file).lastPathComponent
    let task = Task {
      try await engine.ingest(path: file) { progress in
        guard progress.phase == "embedding" else { return }
        let current = bar.withLock { bar in
          if bar == nil { bar = ProgressBar(label: label, total: progress.total, context: context) }
          return bar!
        }
        current.update(done: progress.done)
      }
    }
    let watcher = Task {
      while !Task.isCancelled {
        if Interruption.isRequested {
          task.cancel()
          return
        }
        try? await Task.sleep(for: .milliseconds(20))
      }
    }
    defer { watcher.cancel() }
    do {
      let report = try await task.value
      bar.withLock { $0 }?.finish()
      return report
    } catch {
      if Interruption.isRequested { throw InterruptedError() }
      throw error
    }
  }
}
