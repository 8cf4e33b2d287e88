import EngramCore
import EngramStore
import Foundation
import Synchronization

/// The text an item is embedded as.
enum DocumentText {
  /// The text a turn (or a summary) is embedded as: when it was said, to the minute, who
  /// said it, and what: "[1:56 pm on 8 May, 2023] Ann: ...". The time is UTC, written the way
  /// LoCoMo writes its session times. Measured on the LoCoMo dev split (MiniLM, vector search
  /// alone, hit@10): the day alone 0.574, the time to the minute 0.60.
  static func make(speaker: String?, content: String, date: Date) -> String {
    let time = timeFormatter.withLock { $0.string(from: date) }
    if let speaker, !speaker.isEmpty {
      return "[\(time)] \(speaker): \(content)"
    }
    return "[\(time)] \(content)"
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

  /// Times as `1:56 pm on 8 May, 2023`, in UTC.
  private static let timeFormatter = Mutex<DateFormatter>(
    {
      let formatter = DateFormatter()
      formatter.locale = Locale(identifier: "en_US_POSIX")
      formatter.timeZone = TimeZone(identifier: "UTC")
      formatter.dateFormat = "h:mm a 'on' d MMMM, yyyy"
      formatter.amSymbol = "am"
      formatter.pmSymbol = "pm"
      return formatter
    }())
}
