import Foundation

// The built-in skills' high-precision patterns: requests so explicit that no model is asked.
// Everything else goes to the intent model (see SkillRouter).

extension CalculatorSkill: PatternClaimingSkill {
  /// The request is nothing but arithmetic (see `isArithmetic`), or asks the days between two
  /// days it names.
  public func claims(_ text: String, clock: AgentClock) -> Bool {
    Self.isArithmetic(text) || DateSpan.parse(text, clock: clock) != nil
  }
}

extension RememberSkill: PatternClaimingSkill {
  /// An explicit request to keep a fact: it opens with "remember that", "save the fact that",
  /// "memorize", 记住 (after "please", "could you") and says something to keep, or ends with
  /// ", remember that". A question that opens so ("remember that café we liked?") asks back and
  /// is not claimed; one put as a polite request ("could you remember that …?") is.
  public func claims(_ text: String, clock: AgentClock) -> Bool {
    let lower = text.lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
    let polite = SkillWords.list("memory.remember.polite").contains { lower.hasPrefix($0) }
    if TextCues.isQuestion(text), !polite { return false }
    let head = InverseGuard.opening(of: text)
    let opens = SkillWords.list("memory.remember.claim_heads").contains { word in
      guard head.hasPrefix(word) else { return false }
      let rest = head.dropFirst(word.count)
      guard word.first?.isASCII == true else { return rest.count >= 2 }
      return rest.first.map { !$0.isLetter } ?? false && rest.split(separator: " ").count >= 2
    }
    var tail = Substring(lower)
    while let last = tail.last, last.isPunctuation || last.isWhitespace { tail = tail.dropLast() }
    let closes = SkillWords.list("memory.remember.claim_tails").contains { tail.hasSuffix($0) }
    return opens || closes
  }
}

extension ReminderSkill: PatternClaimingSkill {
  /// An explicit command to be reminded to do something at a readable date: it starts with
  /// "remind me to" / "set a reminder to" (after "please") or 提醒我, and names a date.
  public func claims(_ text: String, clock: AgentClock) -> Bool {
    var lower = text.lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
    for polite in ["please ", "pls ", "hey, ", "hey "] where lower.hasPrefix(polite) {
      lower = String(lower.dropFirst(polite.count))
    }
    let explicit = [
      "remind me to ", "set a reminder to ", "set me a reminder to ", "add a reminder to ",
      "add a reminder for ",
      "create a reminder to ", "提醒我",
    ].contains { lower.hasPrefix($0) }
    guard explicit else { return false }
    return DateExpressionParser(clock: clock).parse(text) != nil
  }
}
