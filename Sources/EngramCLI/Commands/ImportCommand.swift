import Engram
import Foundation

/// `engram import FILE`: loads an export into a new or empty memory, or the reminders and
/// events of an iCalendar file into any memory.
public enum ImportCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "import", abstract: "Load an export into a new (or empty) memory.",
    discussion: """
      The embedder is the export's own unless --model names another of the same model. All or
      nothing, read line by line: a line that is not UTF-8 or not a row, a vector of the wrong
      dimension, with NaN, infinity or a component too large to score, or an export whose end
      line is missing or does not match (truncated or altered) stores nothing.

      An iCalendar file (it begins with BEGIN:VCALENDAR; --format ics for standard input)
      adds its events (VEVENT) and reminders (VTODO) to the memory, new or not. Importing it
      again adds nothing: an item whose UID is stored is updated when the file changes it.
      Floating times and all-day items (at 09:00) are read in the local time zone ($TZ). A
      line that cannot be read, a bad date or an unknown time zone stores nothing and names
      the line (docs/icalendar.md).
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
    @OptionGroup var embedder: EmbedderOptions
    @Option(help: "What the file is (default: read from its content; standard input: jsonl).") var format:
      ExchangeFormat?
    @Argument(help: "The export file ('-' reads standard input).") var file: String

    /// The defaults.
    public init() {}
  }

  /// Imports all of the file or nothing.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let file = options.file
    let path = context.databasePath
    let requested = try options.embedder.spec()
    if try (options.format ?? detectFormat(file)) == .ics {
      try await importCalendar(file, requested: requested, context: context)
      return
    }
    try await EngineAccess.mappingErrors {
      // No link, FIFO or empty file at the path (see DatabaseFile); an absent path is created.
      let existed = try DatabaseFile.inspect(path, toolName: context.toolName) != .absent
      let spec: EmbedderSpec
      if existed {
        spec = try EngineAccess.spec(forDatabaseAt: path)
      } else if let requested {
        spec = requested
      } else {
        spec = try exportSpec(file)
      }
      let embedder = try spec.makeEmbedder(environment: context.environment)
      if !existed { try DatabaseFile.createExclusively(path) }
      do {
        var configuration = EngramConfiguration(embedder: embedder)
        configuration.user = try context.user()
        let engine = try MemoryEngine(path: path, configuration: configuration)
        try await EngineAccess.closing(engine) { engine in
          let rows: Int
          do {
            rows = try await engine.transfer.importExport(from: file)
          } catch EngramError.importTargetNotEmpty {
            throw CommandFailure("\(path) already holds a memory; import into a new file")
          }
          try await engine.maintenance.setEmbedderSpec(spec.text)
          if existed && rows == 0 {
            context.output.write("\(path) already holds every row of this export; nothing was imported\n")
          } else {
            context.output.write("imported \(rows) rows into \(path)\n")
          }
        }
      } catch {
        // A file this command created holds nothing useful after a failed import.
        if !existed {
          for suffix in ["", "-wal", "-shm", ".vectors"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
          }
        }
        throw error
      }
    }
  }

  /// `.ics` for a regular file that begins with `BEGIN:VCALENDAR`, else `.jsonl` (standard
  /// input and pipes are read once, by the import itself: `--format ics` names them).
  static func detectFormat(_ file: String) throws -> ExchangeFormat {
    guard file != "-", InputFile.isRegularFile(file), let handle = FileHandle(forReadingAtPath: file) else {
      return .jsonl
    }
    defer { try? handle.close() }
    let head = (try? handle.read(upToCount: 4096)) ?? Data()
    return MemoryEngine.isICalendar(head) ? .ics : .jsonl
  }

  /// Adds the events and reminders of an iCalendar file to the memory (created when absent),
  /// all or nothing.
  static func importCalendar(_ file: String, requested: EmbedderSpec?, context: CommandContext) async throws {
    let path = context.databasePath
    let shown = file == "-" ? "standard input" : file
    try await EngineAccess.mappingErrors {
      // Standard input may wait for its writer: read off the cooperative pool.
      let data = try await BlockingWork.run { () throws -> Data in
        if file == "-" { return try FileHandle.standardInput.readToEnd() ?? Data() }
        try InputFile.refuseFolder(file)
        guard let contents = FileManager.default.contents(atPath: file) else {
          throw ImportError.unreadable(path: file, reason: "no such file or not readable")
        }
        return contents
      }
      let existed = try DatabaseFile.inspect(path, toolName: context.toolName) != .absent
      let spec = existed ? try EngineAccess.spec(forDatabaseAt: path) : requested ?? .default
      let embedder = try spec.makeEmbedder(environment: context.environment)
      if !existed { try DatabaseFile.createExclusively(path) }
      let summary: CalendarImportSummary
      do {
        var configuration = EngramConfiguration(embedder: embedder)
        configuration.user = try context.user()
        let engine = try MemoryEngine(path: path, configuration: configuration)
        summary = try await EngineAccess.closing(engine) { engine in
          let summary: CalendarImportSummary
          do {
            summary = try await engine.transfer.importCalendar(data)
          } catch let error as ICalendarError {
            throw CommandFailure("\(shown):\(error.line): \(error.reason); nothing was imported")
          }
          if !existed { try await engine.maintenance.setEmbedderSpec(spec.text) }
          return summary
        }
      } catch {
        if !existed {
          for suffix in ["", "-wal", "-shm", ".vectors"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
          }
        }
        throw error
      }
      var line = "imported \(shown) into \(path): \(summary.added) added"
      if summary.updated > 0 { line += ", \(summary.updated) updated" }
      line += ", \(summary.unchanged) already there"
      if summary.skipped > 0 { line += ", \(summary.skipped) skipped (cancelled, or one changed occurrence)" }
      context.output.write(line + "\n")
    }
  }

  /// The embedder the export's header names (`embedding_model`), read from its first line.
  static func exportSpec(_ file: String) throws -> EmbedderSpec {
    try InputFile.refuseFolder(file)
    // Standard input, a FIFO or a pipe can be read only once: the import reads it, so the
    // header is not peeked at and the default embedder (or --model) is used.
    guard InputFile.isRegularFile(file) else { return .default }
    guard let handle = FileHandle(forReadingAtPath: file) else {
      throw ImportError.unreadable(path: file, reason: "no such file or not readable")
    }
    defer { try? handle.close() }
    let head = (try? handle.read(upToCount: 4096)) ?? Data()
    let firstLine = head.split(separator: 0x0A, maxSplits: 1).first.map { Data($0) } ?? Data()
    guard let header = try? JSONValue.parse(firstLine), header["type"] == "header" else {
      throw EngramError.malformedExport(line: 1, reason: "missing engram-export header")
    }
    guard let model = header["embedding_model"]?.stringValue else { return .default }
    guard let spec = EmbedderSpec.inferred(fromModelID: model) else {
      throw CommandFailure("\(file) holds vectors of \(model); name its embedder with --model")
    }
    return spec
  }
}
