import Foundation

/// Parses durations such as `30d`, `12h`, `1h30m`, `2w` (units s, m, h, d, w) into seconds.
public enum DurationParser {
  /// Seconds per unit letter.
  static let unitSeconds: [Character: Double] = [
    "s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800,
  ]

  /// The duration in seconds, or `nil` when `text` is not a sequence of `<integer><unit>` parts.
  ///
  /// A bare number is rejected on purpose: `--older-than 30` is ambiguous.
  public static func parse(_ text: String) -> TimeInterval? {
    let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
    guard !trimmed.isEmpty else { return nil }
    var total: Double = 0
    var digits = ""
    var usedUnits = Set<Character>()
    for character in trimmed {
      if character.isASCII, character.isNumber {
        digits.append(character)
        continue
      }
      guard let seconds = unitSeconds[character], !digits.isEmpty,
        usedUnits.insert(character).inserted, let count = Int(digits)
      else { return nil }
      total += Double(count) * seconds
      digits = ""
    }
    // Trailing digits without a unit.
    guard digits.isEmpty, total.isFinite else { return nil }
    return total
  }

  /// A short human form of `seconds` (`1d 2h`, `45s`), for messages and summaries.
  public static func format(_ seconds: TimeInterval) -> String {
    guard seconds.isFinite, seconds >= 0 else { return "?" }
    var remaining = Int(seconds.rounded())
    if remaining == 0 { return "0s" }
    var parts: [String] = []
    for (unit, size) in [("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]
    where remaining >= size {
      parts.append("\(remaining / size)\(unit)")
      remaining %= size
    }
    return parts.prefix(2).joined(separator: " ")
  }
}
