import Foundation

/// Appends one line per figure set to `$ENGRAM_RELIABILITY_LOG` when it is set, so
/// `scripts/reliability.sh` can gather the reliability tests' figures into one table.
///
/// Line format: `kind key=value key=value ...`, keys sorted, `%` and spaces in values
/// written as `%25` and `%20` (the script decodes them). Records may carry a `detail`: what
/// the case checks, shown in the table's DETAIL column.
enum ReliabilityLog {
  static func record(_ kind: String, _ fields: [String: any Sendable]) {
    guard let path = ProcessInfo.processInfo.environment["ENGRAM_RELIABILITY_LOG"] else { return }
    let pairs = fields.sorted { $0.key < $1.key }.map { key, value in
      let text = String(describing: value).replacingOccurrences(of: "%", with: "%25")
        .replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "\n", with: "%20")
      return "\(key)=\(text)"
    }
    let line = ([kind] + pairs).joined(separator: " ") + "\n"
    if !FileManager.default.fileExists(atPath: path) {
      _ = FileManager.default.createFile(atPath: path, contents: nil)
    }
    guard let handle = FileHandle(forWritingAtPath: path) else { return }
    defer { try? handle.close() }
    _ = try? handle.seekToEnd()
    try? handle.write(contentsOf: Data(line.utf8))
  }
}
