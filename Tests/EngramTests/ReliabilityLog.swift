import Foundation

/// Appends one JSON object per line to `$ENGRAM_RELIABILITY_LOG` when it is set, so
/// `scripts/reliability.sh` can gather the figures of the reliability tests into one table.
enum ReliabilityLog {
  static func record(_ kind: String, _ fields: [String: any Sendable]) {
    guard let path = ProcessInfo.processInfo.environment["ENGRAM_RELIABILITY_LOG"] else { return }
    var object = fields
    object["kind"] = kind
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
    guard let handle = FileHandle(forWritingAtPath: path) ?? Self.create(path) else { return }
    defer { try? handle.close() }
    _ = try? handle.seekToEnd()
    try? handle.write(contentsOf: data + Data("\n".utf8))
  }

  private static func create(_ path: String) -> FileHandle? {
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    return FileHandle(forWritingAtPath: path)
  }
}
