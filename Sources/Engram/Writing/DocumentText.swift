import EngramCore
import EngramStore
import Foundation
import Synchronization

/// The text an item is embedded as.
enum DocumentText {
  /// The text a turn is embedded as: its day, its speaker and its content, so that
  /// "when" and "who" questions can match it.
  static func make(speaker: String?, content: String, date: Date) -> String {
    let day = dayFormatter.withLock { $0.string(from: date) }
    if let speaker, !speaker.isEmpty {
      return "[\(day)] \(speaker): \(content)"
    }
    return "[\(day)] \(content)"
  }

  /// The text `item`'s embedding is made from: a turn or summary with its day (and
  /// speaker), a memory as written.
  static func make(_ item: EmbeddableItem) -> String {
    switch item.kind {
    case .message: return make(speaker: item.speaker, content: item.content, date: item.time)
    case .memory: return item.content
    case .summary: return make(speaker: nil, content: item.content, date: item.time)
    }
  }

  /// Days as `8 May 2023`, in UTC.
  private static let dayFormatter = Mutex<DateFormatter>(
    {
      let formatter = DateFormatter()
      formatter.locale = Locale(identifier: "en_US_POSIX")
      formatter.timeZone = TimeZone(identifier: "UTC")
      formatter.dateFormat = "d MMMM yyyy"
      return formatter
    }())
}
