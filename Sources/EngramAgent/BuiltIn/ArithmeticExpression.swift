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
/// `× ÷`, the words 加 减 乘(以) 除(以), plus minus times "divided by" "multiplied by", percentages
/// ("17% of 2350", "2350的17%", 百分之十七, "15 percent of 80") and Chinese numerals with units
/// (一千二, 两万五, 三点五, 3万). No variables, no calls.
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
    ("divided by", .op("/")), ("multiplied by", .op("*")), ("乘以", .op("*")), ("乘上", .op("*")),
    ("除以", .op("/")), ("plus", .op("+")), ("minus", .op("-")), ("times", .op("*")), ("加上", .op("+")),
    ("减去", .op("-")), ("减掉", .op("-")), ("加", .op("+")), ("减", .op("-")), ("乘", .op("*")),
    ("除", .op("/")), ("×", .op("*")), ("÷", .op("/")), ("x", .op("*")), ("（", .open), ("）", .close),
    ("percent", .percent), ("per cent", .percent), ("of", .op("*")), ("的", .op("*")), ("负", .op("-")),
  ]

  /// Characters that carry no arithmetic and are skipped like spaces (currency signs and units).
  private static let ignorable: Set<Character> = ["$", "¥", "￥", "€", "£", "元", "块", "钱"]

  private static let chineseNumeralCharacters: Set<Character> = Set("零〇一二两三四五六七八九十百千万亿")

  /// Multipliers written after an Arabic number (3万, 1.5千).
  private static let chineseMagnitudes: [Character: Double] = [
    "十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000,
  ]

  static func tokenize(_ text: String) throws(ArithmeticError) -> [(Token, Int)] {
    var tokens: [(Token, Int)] = []
    for item in scan(Array(text.lowercased())) {
      guard case .token(let token, let start, _) = item else {
        if case .unknown(let character, let position) = item {
          throw .unexpectedCharacter(character, position: position)
        }
        continue
      }
      tokens.append((token, start))
    }
    return tokens
  }

  /// One scanned item: a token with its character span, or a character the grammar does not know.
  enum Scanned {
    case token(Token, start: Int, end: Int)
    case unknown(Character, position: Int)
  }

  /// Scans `characters` into tokens; an unknown character (or a whole unknown word) becomes one
  /// `.unknown` item and scanning goes on after it.
  static func scan(_ characters: [Character]) -> [Scanned] {
    var items: [Scanned] = []
    var thenMarkers: [Int] = []
    var index = 0
    outer: while index < characters.count {
      let character = characters[index]
      if character.isWhitespace || character == "," || ignorable.contains(character) {
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
        guard var value = Double(digits) else {
          items.append(.unknown(characters[start], position: start))
          continue
        }
        // 3万, 1.5千 (not 3十, which reads as a date-like fragment).
        if index < characters.count, let magnitude = chineseMagnitudes[characters[index]], magnitude >= 100 {
          value *= magnitude
          index += 1
        }
        if let (tenths, end) = moneyTenths(characters, at: index) {
          value += tenths
          index = end
        }
        items.append(.token(.number(value), start: start, end: index))
        continue
      }
      if matches(characters, at: index, word: "百分之") {
        // 百分之十七 = 17%.
        let start = index
        index += 3
        let numberStart = index
        while index < characters.count, isChineseNumberCharacter(characters, at: index) { index += 1 }
        var digits = String(characters[numberStart..<index])
        if digits.isEmpty {
          while index < characters.count, characters[index].isASCII,
            characters[index].isNumber || characters[index] == "."
          {
            index += 1
          }
          digits = String(characters[numberStart..<index])
        }
        guard let value = ChineseNumeral.number(of: digits) ?? Double(digits) else {
          items.append(.unknown(characters[start], position: start))
          continue
        }
        items.append(.token(.number(value), start: start, end: index))
        items.append(.token(.percent, start: start, end: index))
        continue
      }
      if character.isASCII, character.isLetter, let (value, end) = englishNumber(characters, at: index) {
        items.append(.token(.number(value), start: index, end: end))
        index = end
        continue
      }
      if matches(characters, at: index, word: "一半") {
        // 五十的一半 = 50 × 0.5.
        items.append(.token(.number(0.5), start: index, end: index + 2))
        index += 2
        continue
      }
      if chineseNumeralCharacters.contains(character) {
        let start = index
        while index < characters.count, isChineseNumberCharacter(characters, at: index) { index += 1 }
        guard var value = ChineseNumeral.number(of: String(characters[start..<index])) else {
          items.append(.unknown(characters[start], position: start))
          continue
        }
        if let (tenths, end) = moneyTenths(characters, at: index) {
          value += tenths
          index = end
        }
        items.append(.token(.number(value), start: start, end: index))
        continue
      }
      if let length = ["再", "然后", "then"].first(where: { matches(characters, at: index, word: $0) })?.count {
        // "2加3再乘以4": everything before 再 is done first.
        items.append(.token(.close, start: index, end: index + length))
        thenMarkers.append(items.count - 1)
        index += length
        continue
      }
      switch character {
      case "+", "-", "*", "/":
        items.append(.token(.op(character), start: index, end: index + 1))
      case "(": items.append(.token(.open, start: index, end: index + 1))
      case ")": items.append(.token(.close, start: index, end: index + 1))
      case "%", "％": items.append(.token(.percent, start: index, end: index + 1))
      default:
        for (word, token) in words where matches(characters, at: index, word: word) {
          items.append(.token(token, start: index, end: index + word.count))
          index += word.count
          continue outer
        }
        items.append(.unknown(character, position: index))
        // An unknown word is one item.
        if character.isASCII, character.isLetter {
          while index + 1 < characters.count, characters[index + 1].isASCII, characters[index + 1].isLetter {
            index += 1
          }
        }
      }
      index += 1
    }
    return openingThenGroups(items, closingAt: thenMarkers)
  }

  /// Puts an opening parenthesis at the start of the run (the tokens since the last unknown
  /// character) that each 再/then closes.
  private static func openingThenGroups(_ items: [Scanned], closingAt markers: [Int]) -> [Scanned] {
    guard !markers.isEmpty else { return items }
    var result: [Scanned] = []
    var runStart = 0
    var opens: [Int: Int] = [:]  // index in `items` -> opening parentheses before it
    for (index, item) in items.enumerated() {
      if case .unknown = item { runStart = index + 1 }
      if markers.contains(index) { opens[runStart, default: 0] += 1 }
    }
    for (index, item) in items.enumerated() {
      if let count = opens[index], case .token(_, let start, _) = item {
        result += Array(repeating: .token(.open, start: start, end: start), count: count)
      }
      result.append(item)
    }
    return result
  }

  /// 块 (or 元) and one digit after an amount is tenths: 九块九 = 9.9, 十块五毛 = 10.5.
  private static func moneyTenths(_ characters: [Character], at index: Int) -> (Double, Int)? {
    guard index + 1 < characters.count, characters[index] == "块" || characters[index] == "元" else {
      return nil
    }
    let next = characters[index + 1]
    guard let digit = ChineseNumeral.digits[next] ?? (next.isASCII ? next.wholeNumberValue : nil) else {
      return nil
    }
    var end = index + 2
    if end < characters.count, characters[end] == "毛" || characters[end] == "角" {
      end += 1
    } else if end < characters.count,
      chineseNumeralCharacters.contains(characters[end])
        || characters[end].isASCII && characters[end].isNumber
    {
      return nil
    }
    return (Double(digit) / 10, end)
  }

  /// The numbers written in `text`, in order, each with the text that wrote it and whether a
  /// percent sign follows it.
  public static func numbers(in text: String) -> [(value: Double, text: String, percent: Bool)] {
    let characters = Array(text.lowercased())
    let items = scan(characters)
    var result: [(value: Double, text: String, percent: Bool)] = []
    for (index, item) in items.enumerated() {
      guard case .token(.number(let value), let start, let end) = item else { continue }
      var percent = false
      var finish = end
      if index + 1 < items.count, case .token(.percent, _, let percentEnd) = items[index + 1] {
        percent = true
        finish = max(end, percentEnd)
      }
      result.append((value, String(characters[start..<finish]), percent))
    }
    return result
  }

  private static let englishUnits: [String: Double] = [
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "half": 0.5,
  ]
  private static let englishScales: [String: Double] = [
    "hundred": 100, "thousand": 1000, "million": 1_000_000,
  ]

  /// An English number in words starting at `index` ("twelve", "two hundred and five",
  /// "forty-two", "half"), and the index after it; nil when the word there is no number.
  private static func englishNumber(_ characters: [Character], at index: Int) -> (Double, Int)? {
    var total = 0.0
    var current = 0.0
    var position = index
    var end: Int?
    // What came last: nothing, a tens word (twenty), another unit (seven, twelve), or a scale.
    var last = "start"
    while position < characters.count {
      var wordEnd = position
      while wordEnd < characters.count, characters[wordEnd].isASCII, characters[wordEnd].isLetter {
        wordEnd += 1
      }
      let word = String(characters[position..<wordEnd])
      if let unit = englishUnits[word],
        last == "start" || last == "scale" && unit >= 1 || last == "tens" && unit >= 1 && unit < 10
      {
        guard !(word == "half" && last != "start") else { break }
        current += unit
        last = unit >= 20 && unit.truncatingRemainder(dividingBy: 10) == 0 ? "tens" : "unit"
        end = wordEnd
      } else if let scale = englishScales[word], last == "tens" || last == "unit" {
        if scale == 100 {
          current *= scale
        } else {
          total += current * scale
          current = 0
        }
        last = "scale"
        end = wordEnd
      } else if word == "and", last == "scale" {
        // "two hundred and five": goes on only if a number word follows.
      } else {
        break
      }
      if word == "half" { break }
      // Skip one separator (space or hyphen) between number words.
      guard wordEnd < characters.count, characters[wordEnd] == " " || characters[wordEnd] == "-" else {
        break
      }
      position = wordEnd + 1
      guard position < characters.count, characters[position].isASCII, characters[position].isLetter else {
        break
      }
    }
    guard let end else { return nil }
    return (total + current, end)
  }

  /// A Chinese numeral character, or 点 between two of them (三点五).
  private static func isChineseNumberCharacter(_ characters: [Character], at index: Int) -> Bool {
    if chineseNumeralCharacters.contains(characters[index]) { return true }
    guard characters[index] == "点", index > 0, index + 1 < characters.count else { return false }
    return chineseNumeralCharacters.contains(characters[index - 1])
      && ChineseNumeral.digits[characters[index + 1]] != nil
  }

  /// The longest arithmetic expression in `text` that evaluates and has two numbers and an
  /// operator, or a percent sign ("what's 12 times 7 again" → "12 times 7"), lowercased; nil when there is none.
  public static func extract(from text: String) -> String? {
    let characters = Array(text.lowercased())
    guard characters.count <= maximumLength else { return nil }
    var runs: [[(Token, Int, Int)]] = [[]]
    for item in scan(characters) {
      switch item {
      case .token(let token, let start, let end): runs[runs.count - 1].append((token, start, end))
      case .unknown: runs.append([])
      }
    }
    var best: (String, Int)?
    for run in runs where run.count > (best?.1 ?? 1) {
      // The whole run, else the run less a few stray tokens at its edges ("of 12 + 3").
      var windows: [Range<Int>] = []
      for left in 0...min(3, run.count) {
        for right in 0...min(3, run.count - left) where run.count - left - right >= 2 {
          windows.append(left..<run.count - right)
        }
      }
      windows.sort { $0.count > $1.count }
      for range in windows where range.count > (best?.1 ?? 1) {
        let window = Array(run[range])
        // Two numbers and an operator, or a percentage: a lone signed number is no sum.
        let numbers = window.filter { token, _, _ in
          if case .number = token { return true }
          return false
        }
        let hasOperator = window.contains { token, _, _ in
          if case .op = token { return numbers.count >= 2 }
          return token == .percent
        }
        var parser = Parser(tokens: window.map { ($0.0, $0.1) })
        guard hasOperator, let value = try? parser.expression(depth: 0), parser.index == window.count,
          value.isFinite
        else { continue }
        best = (String(characters[window.first!.1..<window.last!.2]), window.count)
        break
      }
    }
    return best?.0
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

    /// Products keep their percent signs apart (17% of 2350 is 17 × 2350 / 100, exactly 399.5).
    mutating func term(depth: Int) throws(ArithmeticError) -> Double {
      var (value, scale) = try factor(depth: depth)
      while index < tokens.count, case .op(let op) = tokens[index].0, op == "*" || op == "/" {
        index += 1
        let (rhs, rhsScale) = try factor(depth: depth)
        if op == "/" {
          guard rhs != 0 else { throw .divisionByZero }
          value /= rhs
          scale /= rhsScale
        } else {
          value *= rhs
          scale *= rhsScale
        }
      }
      return value / scale
    }

    /// A number, signed factor or parenthesized expression, and the power of 100 its percent
    /// signs divide it by.
    mutating func factor(depth: Int) throws(ArithmeticError) -> (Double, Double) {
      guard depth < ArithmeticExpression.maximumDepth else { throw .tooDeep }
      guard index < tokens.count else {
        throw .unexpectedToken("end", position: tokens.last.map { $0.1 + 1 } ?? 0)
      }
      let (token, position) = tokens[index]
      var value: Double
      switch token {
      case .op(let op) where op == "-" || op == "+":
        index += 1
        let (operand, scale) = try factor(depth: depth + 1)
        return (op == "-" ? -operand : operand, scale)
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
      var scale = 1.0
      while index < tokens.count, tokens[index].0 == .percent {
        index += 1
        scale *= 100
      }
      return (value, scale)
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
