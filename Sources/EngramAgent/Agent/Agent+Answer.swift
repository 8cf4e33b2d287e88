import Foundation

extension Agent {
  /// The reply to a request no skill takes: a social reply to greetings, thanks and the
  /// like (no memory, no side effect); else the memories that pass the relevance gate; else
  /// "nothing about that yet" for a question, or what the assistant can do.
  func answerWithoutSkill(_ text: String, context: SkillContext) -> SkillOutput {
    if let social = SocialReply.reply(to: text, language: context.language) { return .text(social) }
    let answerer = MemoryAnswer(modelID: engine.embedder.modelID)
    let output = answerer.reply(
      to: text, from: context.memories, clock: context.clock, language: context.language)
    if case .memories(_, let hits) = output, hits.isEmpty, !TextCues.isQuestion(text) {
      return .text(Self.noSkillMessage(context.language))
    }
    return output
  }
}

extension SkillOutput {
  /// Whether this is an answer drawn from memory.
  var isMemoryAnswer: Bool {
    if case .memories = self { return true }
    return false
  }
}

/// Replies to greetings, thanks, goodbyes, acknowledgements and "never mind": small talk
/// that triggers no skill and no memory.
enum SocialReply {
  /// The reply, or nil when `text` is not small talk of these kinds.
  static func reply(to text: String, language: MessageLanguage) -> String? {
    let normalized = text.lowercased().trimmingCharacters(
      in: .whitespacesAndNewlines.union(.punctuationCharacters).union(.symbols))
    guard !normalized.isEmpty else { return nil }
    let words = normalized.split { !$0.isLetter && $0 != "'" }.map(String.init)
    func starts(_ phrases: [String]) -> Bool {
      phrases.contains { phrase in
        normalized == phrase || normalized.hasPrefix(phrase + " ") || normalized.hasPrefix(phrase + ",")
          || (phrase.unicodeScalars.first?.isCJKIdeograph == true && normalized.hasPrefix(phrase))
      }
    }
    // Short messages only: "thanks, and remind me to…" is a request.
    guard words.count <= 6 || normalized.count <= 12 else { return nil }
    if starts([
      "thanks", "thank you", "thx", "ty", "cheers", "much appreciated", "谢谢", "多谢", "感谢", "谢啦", "辛苦了",
    ]) {
      return language == .english ? "You're welcome!" : "不客气！"
    }
    if starts(["bye", "goodbye", "good night", "see you", "see ya", "later", "再见", "拜拜", "晚安", "回头见"]) {
      return language == .english ? "Goodbye!" : "再见！"
    }
    if starts([
      "hi", "hello", "hey", "hiya", "yo", "good morning", "good afternoon", "good evening", "morning", "你好",
      "您好",
      "嗨", "早上好", "早安", "早", "下午好", "晚上好", "哈喽",
    ]) {
      return language == .english
        ? "Hello! I can remember things, set reminders and events, take notes, and answer from memory."
        : "你好！我可以记住事情、设置提醒和日程、记笔记，也可以根据记忆回答问题。"
    }
    if Agent.isCancellation(text)
      || starts(["ok", "okay", "cool", "great", "nice", "got it", "好的", "好吧", "嗯", "行", "知道了"])
    {
      return language == .english ? "OK." : "好的。"
    }
    return nil
  }
}
