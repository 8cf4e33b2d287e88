import Engram
import Foundation

/// `engram export [FILE]`: writes the whole memory as JSONL.
public enum ExportCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "export", abstract: "Write the whole memory as JSONL (to FILE, mode 0600, or stdout).",
    options: [.database],
    positionals: [
      PositionalSpec("file", optional: true, help: "The file to write; standard output when absent.")
    ])

  /// Exports.
  public static func run(_ context: CommandContext) async throws {
    let file = context.arguments.string("file")
    try await EngineAccess.withEngine(context, mode: .readOnly) { engine in
      if let file, file != "-" {
        let lines = try engine.export(to: file)
        context.error.write("exported \(lines) lines to \(file)\n")
        return
      }
      // Through a private temporary file, so the output goes where the context says.
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "engram-export-\(UUID().uuidString)")
      try FileManager.default.createDirectory(
        at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      defer { try? FileManager.default.removeItem(at: folder) }
      let temporary = folder.appendingPathComponent("export.jsonl")
      try engine.export(to: temporary.path)
      let handle = try FileHandle(forReadingFrom: temporary)
      defer { try? handle.close() }
      while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
        context.output.write(String(decoding: chunk, as: UTF8.self))
      }
    }
  }
}
