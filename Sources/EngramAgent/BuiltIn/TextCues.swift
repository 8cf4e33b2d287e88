import Foundation

/// Keyword and filler helpers shared by the built-in skills.
enum TextCues {
  /// Whether the lowercased `text` contains any of `keywords` (keywords are lowercase).
  static func containsAny(_ text: String, _ keywords: [String]) -> Bool {
    let lower = text.lowercased()
    return keywords.contains { lower.contains($0) }
  }

  /// Whether `text` reads as a question.
  static func isQuestion(_ text: String) -> Bool {
    let lower = text.lowercased()
    if lower.contains("?") || lower.contains("？") { return true }
    let starts = [
      "what", "when", "where", "who", "how", "which", "do ", "does ", "did ", "is ", "are ", "can ",
    ]
    if starts.contains(where: { lower.hasPrefix($0) }) { return true }
    return containsAny(text, ["吗", "什么", "哪", "谁", "几", "多少", "怎么"])
  }

  /// `text` without `range`, leading/trailing `fillers` (repeatedly, case-insensitive) and edge punctuation.
  ///
  /// A 在/于/on/at/by left just before the removed range goes with it (我要在周六上午 -> 我要).
  static func strip(
    _ text: String, removing range: Range<String.Index>?, fillers: [String], edge: CharacterSet = defaultEdge
  ) -> String {
    var working = text
    if let range {
      var lower = range.lowerBound
      let before = text[..<lower]
      let trimmedBefore = before.lowercased().replacing(/\s+$/, with: "")
      let spaces = before.count - trimmedBefore.count
      for connector in ["在", "于", " on", " at", " by", " for"] where trimmedBefore.hasSuffix(connector) {
        lower = text.index(lower, offsetBy: -(connector.count + spaces))
        break
      }
      working = String(text[..<lower]) + " " + String(text[range.upperBound...])
    }
    let sortedFillers = fillers.sorted { $0.count > $1.count }
    var changed = true
    while changed {
      changed = false
      working = working.trimmingCharacters(in: edge)
      let lower = working.lowercased()
      for filler in sortedFillers {
        if lower.hasPrefix(filler), isBoundary(working, afterPrefix: filler.count) {
          working = String(working.dropFirst(filler.count))
          changed = true
          break
        }
        if lower.hasSuffix(filler), isBoundary(working, beforeSuffix: filler.count) {
          working = String(working.dropLast(filler.count))
          changed = true
          break
        }
      }
    }
    return working.split(whereSeparator: \.isWhitespace).joined(separator: " ")
  }

  /// Whitespace, punctuation and symbols.
  static let defaultEdge = CharacterSet.whitespacesAndNewlines.union(.punctuationCharacters).union(.symbols)

  /// English fillers must end at a word boundary ("to" must not eat "today").
  private static func isBoundary(_ text: String, afterPrefix count: Int) -> Bool {
    guard count < text.count else { return true }
    let last = text[text.index(text.startIndex, offsetBy: count - 1)]
    let next = text[text.index(text.startIndex, offsetBy: count)]
    return !(last.isASCII && last.isLetter && next.isASCII && next.isLetter)
  }

  private static func isBoundary(_ text: String, beforeSuffix count: Int) -> Bool {
    guard count < text.count else { return true }
    let first = text[text.index(text.endIndex, offsetBy: -count)]
    let previous = text[text.index(text.endIndex, offsetBy: -count - 1)]
    return !(first.isASCII && first.isLetter && previous.isASCII && previous.isLetter)
  }

  /// `date` as `2025-06-14 15:00 (Sat)` / `2025-06-14 15:00（周六）` in the clock's zone.
  static func render(_ date: Date, clock: AgentClock, language: MessageLanguage) -> String {
    let parts = clock.calendar.dateComponents([.year, .month, .day, .hour, .minute, .weekday], from: date)
    let stamp = String(
      format: "%04d-%02d-%02d %02d:%02d", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!)
    let weekday = parts.weekday! - 1
    switch language {
    case .english: return "\(stamp) (\(["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][weekday]))"
    case .chinese: return "\(stamp)（\(["周日", "周一", "周二", "周三", "周四", "周五", "周六"][weekday])）"
    }
  }
}
