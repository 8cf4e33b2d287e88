import Foundation

// The built-in skills' high-precision patterns: requests so explicit that no model is asked.
// Everything else goes to the intent model (see SkillRouter).

extension CalculatorSkill: PatternClaimingSkill {
  /// The request is nothing but arithmetic (see `isArithmetic`).
  public func claims(_ text: String, clock: AgentClock) -> Bool { Self.isArithmetic(text) }
}

extension ReminderSkill: PatternClaimingSkill {
  /// An explicit command to be reminded to do something at a readable date: it starts with
  /// "remind me to" / "set a reminder to" (after "please") or 提醒我, and names a date.
  public func claims(_ text: String, clock: AgentClock) -> Bool {
    var lower = text.lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
    for polite in ["please ", "pls ", "hey, ", "hey "] where lower.hasPrefix(polite) {
      lower = String(lower.dropFirst(polite.count))
    }
    let explicit = ["remind me to ", "set a reminder to ", "提醒我"].contains { lower.hasPrefix($0) }
    guard explicit else { return false }
    return DateExpressionParser(clock: clock).parse(text) != nil
  }
}
