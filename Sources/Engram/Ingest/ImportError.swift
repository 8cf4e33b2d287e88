import Foundation

/// Why an import file was refused. Nothing from a refused file is stored.
public enum ImportError: Error, Equatable, Sendable {
  /// The file could not be read.
  case unreadable(path: String, reason: String)
  /// The bytes are not valid UTF-8.
  case invalidUTF8(path: String, line: Int)
  /// A line (or the whole JSON document, line 0) is not valid JSON or lacks a field.
  case malformed(path: String, line: Int, reason: String)
  /// The file holds no turns.
  case empty(path: String)
  /// The format could not be recognised (JSON that is none of the formats `ingest` reads).
  case unknownFormat(path: String)
}

extension ImportError {
  /// Whether the file is simply not something `ingest` reads (an unknown format, or no
  /// turns), rather than a damaged export: what a folder's other files are.
  public var isNotAnExport: Bool {
    switch self {
    case .unknownFormat, .empty: return true
    default: return false
    }
  }
}

extension ImportError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .unreadable(let path, let reason): return "\(path): cannot read: \(reason)"
    case .invalidUTF8(let path, let line): return "\(path):\(line): invalid UTF-8"
    case .malformed(let path, let line, let reason):
      return line > 0 ? "\(path):\(line): \(reason)" : "\(path): \(reason)"
    case .empty(let path): return "\(path): no conversation turns found"
    case .unknownFormat(let path):
      return
        "\(path): not a conversation file (expected a ChatGPT, Claude, WhatsApp or Telegram export, "
        + "Markdown notes, JSONL messages or LoCoMo JSON)"
    }
  }
}
