import Engram
import Foundation

/// What `engram export` and `engram import` read and write.
public enum ExchangeFormat: String, CaseIterable, Sendable, ExpressibleByArgument {
  /// The whole memory, one JSON object a line (`schemas/memory-export.schema.json`).
  case jsonl
  /// Reminders and events as iCalendar (RFC 5545; `docs/icalendar.md`).
  case ics
}

/// `engram export [--format jsonl|ics] [FILE]`: writes the whole memory as JSONL, or its
/// reminders and events as iCalendar.
public enum ExportCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "export", abstract: "Write the whole memory as JSONL (to FILE, mode 0600, or stdout).",
    discussion: """
      Rows are streamed, so memory stays small whatever the memory's size. The last line
      (`end`) counts the lines before it and carries their checksum: `engram import` refuses
      a truncated or altered file. A FILE is written privately (mode 0600 from the start)
      beside its destination and renamed into place when complete.

      --format ics writes the reminders (VTODO, with an alarm at the due time) and events
      (VEVENT) as an iCalendar file a calendar app can import; their UIDs stay the same from
      one export to the next, so importing a newer export updates the items instead of
      adding them twice (docs/icalendar.md).
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Option(help: "What to write: the whole memory (jsonl) or reminders and events (ics).") var format =
      ExchangeFormat.jsonl
    @Argument(help: "The file to write; standard output when absent.") var file: String?

    /// The defaults.
    public init() {}
  }

  /// Exports.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let file = options.file
    try await EngineAccess.mappingErrors {
      let path = try EngineAccess.requireExisting(context)
      let user = try context.user()
      if let file, file != "-" {
        let folder = (file as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        if !folder.isEmpty,
          !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) || !isFolder.boolValue
        {
          throw CommandFailure("cannot export to \(file): no such folder \(folder)")
        }
        if options.format == .ics {
          let summary = try MemoryEngine.exportCalendar(databaseAt: path, user: user, toFile: file)
          context.error.write(
            "exported \(summary.events) \(summary.events == 1 ? "event" : "events") and \(summary.reminders) "
              + "\(summary.reminders == 1 ? "reminder" : "reminders") to \(file)\n")
          return
        }
        let lines = try MemoryEngine.export(databaseAt: path, user: user, to: .file(file))
        context.error.write("exported \(lines) lines to \(file)\n")
        return
      }
      if options.format == .ics {
        context.output.write(try MemoryEngine.calendar(databaseAt: path, user: user).text)
        return
      }
      // Chunks of whole lines, so each decodes on its own and no character is split.
      try MemoryEngine.export(databaseAt: path, user: user) { chunk in
        context.output.write(String(decoding: chunk, as: UTF8.self))
      }
    }
  }
}
