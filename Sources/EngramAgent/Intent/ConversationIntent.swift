import EngramCore
import Foundation

/// A request for no skill that still wants a particular reply: small talk (a greeting, thanks,
/// a goodbye, an acknowledgement) or the retraction of the exchange itself ("never mind",
/// 算了). Each is a label of the intent corpus, learned like the skills' labels; routing
/// treats them as no skill (`RouteDecision.skillID` is nil) and the agent's turn plan acts
/// on them.
public enum ConversationIntent: String, Sendable, Hashable, CaseIterable {
  /// "hi", "good morning", 你好.
  case greeting = "smalltalk.greeting"
  /// "thanks", "much appreciated", 谢谢.
  case thanks = "smalltalk.thanks"
  /// "bye", "good night", 再见.
  case goodbye = "smalltalk.goodbye"
  /// "ok", "got it", 好的.
  case acknowledgement = "smalltalk.acknowledgement"
  /// "cancel", "never mind", "forget it", 算了: drops a question the agent asked, deletes
  /// nothing.
  case cancellation = "dialogue.cancel"

  /// The intent for a corpus label, or nil for a skill id and `none`.
  public init?(label: String) { self.init(rawValue: label) }

  /// The intent model's most probable label when it is one of these and at least
  /// `threshold` likely.
  static func predicted(by prediction: IntentPrediction, threshold: Double) -> ConversationIntent? {
    guard prediction.confidence >= threshold else { return nil }
    return ConversationIntent(label: prediction.label)
  }

  /// The plainest retractions ("cancel", "never mind", 算了), read by rule as a reply to the
  /// agent's own question (as y/n answers a confirmation), with or without an intent model:
  /// a question can always be dropped. Everything else, small talk included, is the model's.
  static func isPlainRetraction(_ text: String) -> Bool {
    let normalized = text.lowercased().trimmingCharacters(
      in: .whitespacesAndNewlines.union(.punctuationCharacters).union(.symbols))
    return Lexicon.retractions.contains(normalized)
  }

  /// The agent's reply when no skill runs.
  func reply(_ language: MessageLanguage) -> String {
    switch (self, language) {
    case (.thanks, .english): return "You're welcome!"
    case (.thanks, .chinese): return "不客气！"
    case (.goodbye, .english): return "Goodbye!"
    case (.goodbye, .chinese): return "再见！"
    case (.greeting, .english):
      return "Hello! I can remember things, set reminders and events, take notes, and answer from memory."
    case (.greeting, .chinese): return "你好！我可以记住事情、设置提醒和日程、记笔记，也可以根据记忆回答问题。"
    case (.acknowledgement, .english), (.cancellation, .english): return "OK."
    case (.acknowledgement, .chinese), (.cancellation, .chinese): return "好的。"
    }
  }
}
