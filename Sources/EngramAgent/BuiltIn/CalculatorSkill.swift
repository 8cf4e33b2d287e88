import Foundation

/// `calculator`: evaluates an arithmetic expression safely.
public struct CalculatorSkill: Skill {
  /// Creates the skill.
  public init() {}

  public var id: String { "calculator" }
  public var displayName: String { "Calculator" }
  public var description: String {
    "Evaluates an arithmetic expression (+ - * / parentheses, decimals, %); returns the result."
  }
  public var samplePhrases: [String] {
    [
      "calculate", "what is", "how much is", "compute", "plus", "times", "divided by", "计算", "算一下", "等于多少",
      "加", "乘以",
      "除以",
    ]
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter("expression", .string, description: "the arithmetic expression, e.g. (3+4)*2")
    ])
  }
  public var hasSideEffects: Bool { false }
  public var requiresConfirmation: Bool { false }
  public var category: String { "utility" }
  public var tags: Set<String> { ["utility", "office"] }

  static let fillers = [
    "please", "can you", "could you", "calculate", "compute", "evaluate", "what is", "what's", "whats",
    "how much is",
    "tell me", "the result of", "equals", "equal", "is", "请", "帮我", "帮忙", "计算一下", "计算", "算一下", "算算", "算",
    "等于多少",
    "等于几", "等于", "是多少", "得多少", "多少", "的结果", "结果", "=", "？", "?",
  ]

  // Parentheses and signs belong to the expression; only sentence punctuation is trimmed.
  static let edge = CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: "?？!！.。,，:：=;；"))

  public func canHandle(_ text: String) -> Bool {
    let arguments = extractArguments(from: text, clock: .system())
    guard let expression = arguments["expression"]?.stringValue,
      let tokens = try? ArithmeticExpression.tokenize(expression)
    else {
      return false
    }
    let hasOperator = tokens.contains { token, _ in
      if case .op = token { return true }
      return token == .percent
    }
    let numbers = tokens.filter { token, _ in
      if case .number = token { return true }
      return false
    }
    return hasOperator && !numbers.isEmpty
  }

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    let expression = TextCues.strip(text, removing: nil, fillers: Self.fillers, edge: Self.edge)
    return expression.isEmpty ? SkillArguments() : ["expression": .string(expression)]
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    guard let expression = arguments["expression"]?.stringValue else {
      throw SkillError.missingArgument(name: "expression")
    }
    do {
      let value = try ArithmeticExpression.evaluate(expression)
      return .text("\(expression) = \(ArithmeticExpression.format(value))")
    } catch .divisionByZero {
      throw SkillError.divisionByZero
    } catch {
      throw SkillError.invalidArgument(name: "expression", reason: .other(String(describing: error)))
    }
  }
}
