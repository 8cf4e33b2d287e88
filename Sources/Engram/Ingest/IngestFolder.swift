import Foundation

/// What `ingest` reads when it is given a folder.
public enum IngestFolder {
  /// The paths to ingest for the folder `path`, in order: the folder itself when it holds
  /// Markdown notes (at any depth; they are read together), then each `.json`, `.jsonl` and
  /// `.txt` file directly in it, sorted by name (hidden files left out). With `format`
  /// `markdown` only the notes are read; with another format only the files.
  public static func entries(_ path: String, format: ConversationFile.Format? = nil) -> [String] {
    var entries: [String] = []
    if format == nil || format == .markdown, !NoteFolder.files(in: path).isEmpty { entries.append(path) }
    guard format != .markdown else { return entries }
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    for name in names.sorted() where !name.hasPrefix(".") {
      let lowered = name.lowercased()
      guard lowered.hasSuffix(".json") || lowered.hasSuffix(".jsonl") || lowered.hasSuffix(".txt") else {
        continue
      }
      let file = URL(fileURLWithPath: path).appendingPathComponent(name).path
      if InputFile.isRegularFile(file) { entries.append(file) }
    }
    return entries
  }
}
