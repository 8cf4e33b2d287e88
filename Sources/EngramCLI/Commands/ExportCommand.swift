import Engram
import Foundation

/// `engram export [FILE]`: writes the whole memory as JSONL.
public enum ExportCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "export", abstract: "Write the whole memory as JSONL (to FILE, mode 0600, or stdout).",
    discussion: """
      Rows are streamed, so memory stays small whatever the memory's size. The last line
      (`end`) counts the lines before it and carries their checksum: `engram import` refuses
      a truncated or altered file. A FILE is written privately (mode 0600 from the start)
      beside its destination and renamed into place when complete.
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
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
        let lines = try MemoryEngine.export(databaseAt: path, user: user, to: .file(file))
        context.error.write("exported \(lines) lines to \(file)\n")
        return
      }
      // Chunks of whole lines, so each decodes on its own and no character is split.
      try MemoryEngine.export(databaseAt: path, user: user) { chunk in
        context.output.write(String(decoding: chunk, as: UTF8.self))
      }
    }
  }
}
