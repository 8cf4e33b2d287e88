import Engram
import Foundation
import Synchronization

/// `engram ingest [--format NAME] FILE|DIR...`: stores conversation exports and notes.
public enum IngestCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "ingest",
    abstract:
      "Store conversation exports (ChatGPT, Claude, WhatsApp, Telegram, JSONL, LoCoMo) and Markdown notes.",
    discussion: """
      The format is detected from each file's content; --format forces one. A folder is read
      as its Markdown notes (at any depth) and each .json, .jsonl and .txt export in it.
      Ingest is idempotent: a turn or note stored before is skipped, so a later export adds
      only what is new. It is resumable: turns are stored in batches, and a stopped ingest is
      completed by running it again. A malformed line or record refuses its file, with the
      line number, before anything of it is stored. See docs/ingest.md.
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
    @Option(help: "Read the files as this format.", defaultDescription: "detected from the content")
    var format: ConversationFile.Format?
    @Option(
      help: "The order of day and month in WhatsApp dates.",
      defaultDescription: "as the file shows, else dmy")
    var dateOrder: DateOrder?
    @Option(
      valueName: "SPEC",
      help:
        "On PostgreSQL, the embedder of the user's memory when this creates it (default: the store's, "
        + "the one `engram init` chose); a memory made before keeps its own.")
    var model: String?
    @Flag(help: ArgumentHelp.json) var json = false
    @Argument(help: "Files or folders to read; '-' reads standard input.") var file: [String]

    /// The defaults.
    public init() {}
  }

  /// Ingests each file (and each entry of each folder) in turn.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let files = options.file
    guard !files.isEmpty else { throw UsageError(.missingArgument("FILE")) }
    let model = try EmbedderOptions.spec(options.model)
    if files.filter({ $0 == "-" }).count > 1 {
      throw UsageError("standard input ('-') can be read only once")
    }
    // A folder stands for its notes and exports; a folder with neither is refused now.
    var entries: [(path: String, inFolder: Bool)] = []
    // Links of the folders that lead outside them, said before anything is read.
    var outside: [IngestWarning] = []
    for file in files {
      guard InputFile.isFolder(file) else {
        entries.append((file, false))
        continue
      }
      let listing = IngestFolder.listing(file, format: options.format)
      outside += listing.warnings
      guard !listing.entries.isEmpty else {
        throw ImportError.unreadable(
          path: file, reason: "the folder holds no Markdown notes and no .json, .jsonl or .txt exports")
      }
      entries += listing.entries.map { ($0, $0 != file) }
    }
    let ingestOptions = IngestOptions(format: options.format, dateOrder: options.dateOrder)
    Interruption.install()
    defer { Interruption.uninstall() }
    try await EngineAccess.withEngine(context, model: model) { engine in
      try write(outside, json: options.json, context: context)
      var totalTurns = 0
      var totalMemories = 0
      for entry in entries {
        try Interruption.check()
        let report: IngestReport
        do {
          report = try await ingest(entry.path, options: ingestOptions, engine: engine, context: context)
        } catch let error as ImportError where entry.inFolder && error.isNotAnExport {
          // A folder's other files (an export's account.json, a chat.html) are not exports.
          if options.json {
            try context.jsonLines.write(
              ["file": .string(entry.path), "skipped": .string(error.description)] as JSONValue)
          } else {
            context.output.write("skipped \(entry.path): \(skipReason(error))\n")
          }
          continue
        }
        try write(report.warnings, json: options.json, context: context)
        totalTurns += report.turns
        totalMemories += report.memories
        if options.json {
          var object: [String: JSONValue] = [
            "file": .string(entry.path), "format": .string(report.format.rawValue),
            "sessions": .int(report.sessions),
            "turns": .int(report.turns), "already_stored": .int(report.alreadyStored),
            "completed": .int(report.completed),
          ]
          if report.format == .markdown {
            object["memories"] = .int(report.memories)
            object["already_stored"] = .int(report.memoriesAlreadyStored)
          }
          try context.jsonLines.write(JSONValue.object(object))
        } else {
          context.output.write(line(for: report, file: entry.path) + "\n")
        }
      }
      if entries.count > 1 && !options.json {
        let memories =
          totalMemories > 0 ? " and \(totalMemories) memor\(totalMemories == 1 ? "y" : "ies")" : ""
        context.output.write("ingested \(totalTurns) turns\(memories) from \(entries.count) files\n")
      }
    }
  }

  /// Says what an ingest left out: a link outside its folder as a skipped file (as a
  /// folder's other files are), a dangling reference of an export as a note on stderr.
  static func write(_ warnings: [IngestWarning], json: Bool, context: CommandContext) throws {
    for warning in warnings {
      switch warning {
      case .linkOutsideFolder(let path, _), .linkAlreadyRead(let path, _):
        if json {
          let reason = warning.description.dropFirst("skipped \(path): ".count)
          try context.jsonLines.write(
            ["file": .string(path), "skipped": .string(String(reason))] as JSONValue)
        } else {
          context.output.write(warning.description + "\n")
        }
      case .danglingNode:
        context.error.write("engram: note: \(warning.description)\n")
      }
    }
  }

  /// The summary line of one file's ingest.
  static func line(for report: IngestReport, file: String) -> String {
    if report.format == .markdown {
      var line =
        "ingested \(report.memories) memor\(report.memories == 1 ? "y" : "ies") from \(file) (markdown)"
      if report.memoriesAlreadyStored > 0 {
        line += "; \(report.memoriesAlreadyStored) already stored, skipped"
      }
      return line
    }
    var line =
      "ingested \(report.turns) turns in \(report.sessions) session\(report.sessions == 1 ? "" : "s") "
      + "from \(file) (\(report.format.rawValue))"
    if report.alreadyStored > 0 { line += "; \(report.alreadyStored) already stored, skipped" }
    if report.completed > 0 { line += "; embedded \(report.completed) an interrupted ingest left" }
    return line
  }

  /// Why a folder's file was skipped, as the end of a sentence.
  static func skipReason(_ error: ImportError) -> String {
    if case .empty = error { return "no conversation turns in it" }
    return "not a conversation export or note"
  }

  /// Runs one file's ingest in a task that Ctrl-C cancels between embedding batches.
  static func ingest(_ file: String, options: IngestOptions, engine: MemoryEngine, context: CommandContext)
    async throws -> IngestReport
  {
    let bar = Mutex<ProgressBar?>(nil)
    let label = file == "-" ? "ingest" : "ingest " + URL(fileURLWithPath: file).lastPathComponent
    let task = Task {
      try await engine.conversation.ingest(path: file, options: options) { progress in
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
