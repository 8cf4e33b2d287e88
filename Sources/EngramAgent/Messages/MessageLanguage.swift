import EngramCore

/// The language of replies, confirmations and error messages.
public enum MessageLanguage: String, Sendable, Hashable, CaseIterable {
  /// English.
  case english = "en"
  /// Simplified Chinese.
  case chinese = "zh"

  /// The preference key that overrides detection (`en` or `zh`).
  public static let preferenceKey = "language"

  /// Chinese when `text` contains a CJK ideograph, else English.
  public static func detect(_ text: String) -> MessageLanguage {
    text.unicodeScalars.contains(where: \.isCJKIdeograph) ? .chinese : .english
  }

  /// The preference (`en`/`zh`, also `english`/`chinese`/`zh-CN`) when set and known, else detection.
  public static func resolve(text: String, preference: String?) -> MessageLanguage {
    if let preference = preference?.lowercased() {
      if preference.hasPrefix("zh") || preference == "chinese" { return .chinese }
      if preference.hasPrefix("en") || preference == "english" { return .english }
    }
    return detect(text)
  }
}
