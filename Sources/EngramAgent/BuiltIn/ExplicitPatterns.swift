import Foundation

// The built-in skills' high-precision patterns: requests so explicit that no model is asked.
// Everything else goes to the intent model (see SkillRouter).

extension CalculatorSkill {
  /// The request, without polite fillers, is an arithmetic expression with a number and an
  /// operator ("(3+4)*2", "what is 17% of 2350?").
  public func claims(_ text: String, clock: AgentClock) -> Bool {
    guard let expression = extractArguments(from: text, clock: clock)["expression"]?.stringValue,
      let tokens = try? ArithmeticExpression.tokenize(expression)
    else {
      return false
    }
    let hasOperator = tokens.contains { token, _ in
      if case .op = token { return true }
      return token == .percent
    }
    let hasNumber = tokens.contains { token, _ in
      if case .number = token { return true }
      return false
    }
    return hasOperator && hasNumber
  }
}

extension ReminderSkill {
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
