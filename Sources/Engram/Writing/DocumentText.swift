import EngramCore
import EngramStore
import Foundation
import Synchronization

/// The text an item is embedded as.
enum DocumentText {
  /// The text a turn (or a summary) is embedded as: when it was said, to the minute, who
  /// said it, and what: "[1:56 pm on 8 May, 2023] Ann: ..."; a turn that follows another in
  /// its session ends with the start of that one, " (replying to: ...)", so a reply
  /// ("Yes, last Saturday!") carries what it answers. The time is UTC, written the way
  /// LoCoMo writes its session times. Measured on LoCoMo dev conversations (MiniLM, vector
  /// search alone, hit@10): the day alone 0.574, the time to the minute 0.60; with the
  /// turn replied to, 0.637 -> 0.672 on the three training conversations and 0.564 -> 0.604
  /// on the two held aside (`engram-bench locomo --conversations`, docs/benchmarks.md).
  static func make(speaker: String?, content: String, date: Date, previous: String? = nil) -> String {
    let time = timeFormatter.withLock { $0.string(from: date) }
    var text = "[\(time)] "
    if let speaker, !speaker.isEmpty { text += "\(speaker): " }
    text += content
    if let previous = previous.map(replyContext), !previous.isEmpty {
      text += " (replying to: \(previous))"
    }
    return text
  }

  /// How much of the turn replied to an embedded turn carries.
  static let replyContextCharacters = 80

  /// The start of the turn replied to, on one line.
  static func replyContext(_ text: String) -> String {
    String(
      text.prefix(replyContextCharacters).map { $0.isNewline ? " " : $0 }
    ).trimmingCharacters(in: .whitespaces)
  }

  /// The text `item`'s embedding is made from: a turn or summary with its day (and
  /// speaker), a memory as written.
  static func make(_ item: EmbeddableItem) -> String {
    switch item.kind {
    case .message:
      return make(speaker: item.speaker, content: item.content, date: item.time, previous: item.previous)
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
