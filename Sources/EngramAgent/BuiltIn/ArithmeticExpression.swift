/// Errors of the arithmetic evaluator; `position` counts characters from the start.
public enum ArithmeticError: Error, Sendable, Hashable {
  /// Nothing to evaluate.
  case empty
  /// A character or word the grammar does not know.
  case unexpectedCharacter(Character, position: Int)
  /// A token in the wrong place (`3 +`, `* 2`, `(3))`).
  case unexpectedToken(String, position: Int)
  /// An opening parenthesis without its closing one.
  case unbalancedParenthesis
  /// A divisor (or modulus) of zero.
  case divisionByZero
  /// The result overflowed to infinity.
  case notFinite
  /// More than `ArithmeticExpression.maximumDepth` nested parentheses or signs.
  case tooDeep
  /// More than `ArithmeticExpression.maximumLength` characters.
  case tooLong
}

/// A small safe arithmetic evaluator: `+ - * /`, parentheses, decimals, postfix `%`, unary signs,
/// `× ÷`, and the words 加 减 乘(以) 除以, plus minus times "divided by". No variables, no calls.
public enum ArithmeticExpression {
  /// The deepest nesting accepted.
  public static let maximumDepth = 64
  /// The longest expression accepted.
  public static let maximumLength = 1000

  enum Token: Equatable {
    case number(Double)
    case op(Character)
    case open
    case close
    case percent
  }

  /// The value of `text`.
  /// - Throws: `ArithmeticError`.
  /// - Complexity: O(n) in the length of `text`.
  public static func evaluate(_ text: String) throws(ArithmeticError) -> Double {
    guard text.count <= maximumLength else { throw .tooLong }
    let tokens = try tokenize(text)
    guard !tokens.isEmpty else { throw .empty }
    var parser = Parser(tokens: tokens)
    let value = try parser.expression(depth: 0)
    if parser.index < tokens.count {
      throw .unexpectedToken(describe(tokens[parser.index].0), position: tokens[parser.index].1)
    }
    guard value.isFinite else { throw .notFinite }
    return value == 0 ? 0 : value
  }

  private static let words: [(String, Token)] = [
    ("divided by", .op("/")), ("multiplied by", .op("*")), ("乘以", .op("*")), ("除以", .op("/")),
    ("plus", .op("+")),
    ("minus", .op("-")), ("times", .op("*")), ("加上", .op("+")), ("减去", .op("-")), ("加", .op("+")),
    ("减", .op("-")),
    ("乘", .op("*")), ("×", .op("*")), ("÷", .op("/")), ("x", .op("*")), ("（", .open), ("）", .close),
  ]

  static func tokenize(_ text: String) throws(ArithmeticError) -> [(Token, Int)] {
    let characters = Array(text.lowercased())
    var tokens: [(Token, Int)] = []
    var index = 0
    outer: while index < characters.count {
      let character = characters[index]
      if character.isWhitespace || character == "," {
        index += 1
        continue
      }
      if character.isASCII, character.isNumber || character == "." {
        let start = index
        var digits = ""
        while index < characters.count, characters[index].isASCII {
          let current = characters[index]
          if current.isNumber || current == "." {
            digits.append(current)
          } else if current == ",", isThousandsSeparator(characters, at: index) {
            // 1,000: skip the separator.
          } else {
            break
          }
          index += 1
        }
        guard let value = Double(digits) else {
          throw .unexpectedCharacter(characters[start], position: start)
        }
        tokens.append((.number(value), start))
        continue
      }
      if ChineseNumeral.value(of: String(character)) != nil {
        let start = index
        while index < characters.count,
          ChineseNumeral.value(of: String(characters[index])) != nil
            || "十百千".contains(characters[index])
        {
          index += 1
        }
        guard let value = ChineseNumeral.value(of: String(characters[start..<index])) else {
          throw .unexpectedCharacter(characters[start], position: start)
        }
        tokens.append((.number(Double(value)), start))
        continue
      }
      switch character {
      case "+", "-", "*", "/": tokens.append((.op(character), index))
      case "(": tokens.append((.open, index))
      case ")": tokens.append((.close, index))
      case "%", "％": tokens.append((.percent, index))
      default:
        for (word, token) in words where matches(characters, at: index, word: word) {
          tokens.append((token, index))
          index += word.count
          continue outer
        }
        throw .unexpectedCharacter(character, position: index)
      }
      index += 1
    }
    return tokens
  }

  private static func isThousandsSeparator(_ characters: [Character], at index: Int) -> Bool {
    guard index > 0, characters[index - 1].isNumber, index + 3 < characters.count else { return false }
    let group = characters[(index + 1)...].prefix(4)
    let digits = group.prefix { $0.isASCII && $0.isNumber }
    return digits.count == 3
  }

  private static func matches(_ characters: [Character], at index: Int, word: String) -> Bool {
    let wordCharacters = Array(word)
    guard index + wordCharacters.count <= characters.count,
      Array(characters[index..<index + wordCharacters.count]) == wordCharacters
    else { return false }
    // "x" is multiplication only between operands, never inside a word.
    if word == "x" || word.first!.isASCII && word.first!.isLetter {
      let before = index > 0 ? characters[index - 1] : " "
      let after =
        index + wordCharacters.count < characters.count ? characters[index + wordCharacters.count] : " "
      return !(before.isASCII && before.isLetter) && !(after.isASCII && after.isLetter)
    }
    return true
  }

  static func describe(_ token: Token) -> String {
    switch token {
    case .number(let value): return String(value)
    case .op(let character): return String(character)
    case .open: return "("
    case .close: return ")"
    case .percent: return "%"
    }
  }

  private struct Parser {
    let tokens: [(Token, Int)]
    var index = 0

    init(tokens: [(Token, Int)]) { self.tokens = tokens }

    mutating func expression(depth: Int) throws(ArithmeticError) -> Double {
      var value = try term(depth: depth)
      while index < tokens.count, case .op(let op) = tokens[index].0, op == "+" || op == "-" {
        index += 1
        let rhs = try term(depth: depth)
        value = op == "+" ? value + rhs : value - rhs
      }
      return value
    }

    mutating func term(depth: Int) throws(ArithmeticError) -> Double {
      var value = try factor(depth: depth)
      while index < tokens.count, case .op(let op) = tokens[index].0, op == "*" || op == "/" {
        index += 1
        let rhs = try factor(depth: depth)
        if op == "/" {
          guard rhs != 0 else { throw .divisionByZero }
          value /= rhs
        } else {
          value *= rhs
        }
      }
      return value
    }

    mutating func factor(depth: Int) throws(ArithmeticError) -> Double {
      guard depth < ArithmeticExpression.maximumDepth else { throw .tooDeep }
      guard index < tokens.count else {
        throw .unexpectedToken("end", position: tokens.last.map { $0.1 + 1 } ?? 0)
      }
      let (token, position) = tokens[index]
      var value: Double
      switch token {
      case .op(let op) where op == "-" || op == "+":
        index += 1
        let operand = try factor(depth: depth + 1)
        return op == "-" ? -operand : operand
      case .number(let number):
        index += 1
        value = number
      case .open:
        index += 1
        value = try expression(depth: depth + 1)
        guard index < tokens.count, tokens[index].0 == .close else { throw .unbalancedParenthesis }
        index += 1
      default:
        throw .unexpectedToken(ArithmeticExpression.describe(token), position: position)
      }
      while index < tokens.count, tokens[index].0 == .percent {
        index += 1
        value /= 100
      }
      return value
    }
  }

  /// `value` without a trailing `.0`, rounded to 10 significant digits.
  public static func format(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    var text = String(format: "%.10g", value)
    if text.contains("."), !text.contains("e") {
      while text.hasSuffix("0") { text.removeLast() }
      if text.hasSuffix(".") { text.removeLast() }
    }
    return text
  }
}
