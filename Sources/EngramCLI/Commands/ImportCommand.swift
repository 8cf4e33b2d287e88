import Engram
import Foundation

/// `engram import FILE`: loads an export into a new or empty memory.
public enum ImportCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "import", abstract: "Load an export into a new (or empty) memory.",
    discussion: """
      The embedder is the export's own unless --model names another of the same model. All or
      nothing, read line by line: a line that is not UTF-8 or not a row, a vector of the wrong
      dimension, with NaN, infinity or a component too large to score, or an export whose end
      line is missing or does not match (truncated or altered) stores nothing.
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var embedder: EmbedderOptions
    @Argument(help: "The export file ('-' reads standard input).") var file: String

    /// The defaults.
    public init() {}
  }

  /// Imports all of the file or nothing.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let file = options.file
    let path = context.databasePath
    let requested = try options.embedder.spec()
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
        defer { engine.close() }
        let rows: Int
        do {
          rows = try engine.importExport(from: file)
        } catch EngramError.importTargetNotEmpty {
          throw CommandFailure("\(path) already holds a memory; import into a new file")
        }
        try engine.setEmbedderSpec(spec.text)
        context.output.write("imported \(rows) rows into \(path)\n")
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
