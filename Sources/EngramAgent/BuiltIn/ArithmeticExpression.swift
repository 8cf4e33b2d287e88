import EngramCore
import Foundation

/// Errors of the arithmetic evaluator; `position` counts characters from the start.
public enum ArithmeticError: Error, Sendable, Hashable {
  /// Nothing to evaluate.
  case empty
  /// A character the grammar does not know.
  case unexpectedCharacter(Character, position: Int)
  /// A word the grammar does not know ("square foo of 81" has `foo`).
  case unknownWord(String, position: Int)
  /// A token in the wrong place (`3 +`, `* 2`, `(3))`).
  case unexpectedToken(String, position: Int)
  /// An opening parenthesis without its closing one.
  case unbalancedParenthesis
  /// A divisor (or modulus) of zero.
  case divisionByZero
  /// The result overflowed to infinity.
  case notFinite
  /// A root or fractional power of a negative number (no real value), or a zeroth root.
  case notReal
  /// More than `ArithmeticExpression.maximumDepth` nested parentheses or signs.
  case tooDeep
  /// More than `ArithmeticExpression.maximumLength` characters.
  case tooLong
}

/// A small safe arithmetic evaluator: `+ - * /`, parentheses, decimals, postfix `%`, unary signs,
/// `× ÷` (and `x` between numbers), the words 加 减 乘(以) 除(以), plus minus times "divided by"
/// "multiplied by", percentages ("17% of 2350", "2350的17%", 百分之十七, "15 percent of 80"), an
/// amount plus or minus a percentage of itself ("200 + 10%"), percentages off ("20% off 80",
/// "80 with 20% off") and discounts (打八五折, 八折), powers (`^`, `**`, "to the power of",
/// "squared", 的N次方, 平方), roots ("square root of", "cube root of", "4th root of", `sqrt`,
/// `√`, 根号, 的平方根, 开根号) and Chinese numerals with units (一千二, 两万五, 三点五, 3万).
/// No variables.
///
/// Precedence, loosest first: `+ -`; `* /` (and a discount next to an amount); signs and
/// roots; `^` (right-associative, so `-2^2` is -4 and `2^3^2` is 512); postfix `%`, squared,
/// 平方, off.
public enum ArithmeticExpression {
  /// The deepest nesting accepted.
  public static let maximumDepth = 64
  /// The longest expression accepted.
  public static let maximumLength = 1000

  enum Token: Equatable {
    case number(Double)
    /// `+ - * /`, `^` (power) and `r` (root with an index: `4th root of 81` is 4 r 81).
    case op(Character)
    case open
    case close
    case percent
    /// A root of what follows ("square root of", `√`, 根号), of this degree.
    case root(Double)
    /// An operator written after its operand ("squared", 的平方根, "off").
    case postfix(Postfix)
  }

  /// Operators written after their operand.
  enum Postfix: Equatable {
    /// Raised to this power (squared, 的立方).
    case power(Double)
    /// The root of this degree (的平方根, 开根号).
    case root(Double)
    /// A percentage off: 20% off is a factor of 0.8.
    case off
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
    guard !value.isNaN else { throw .notReal }
    guard value.isFinite else { throw .notFinite }
    return value == 0 ? 0 : value
  }

  /// Words and signs, longest first where one begins another (的平方根 before 的平方 before 的):
  /// the `operators` of `arithmetic-words.json`.
  private static let words: [(String, Token)] = WordTable.arithmetic.list("operators").map {
    ($0.word, token($0.value))
  }

  /// The token an operator word's value names: `root N`, `op C`, `postfix power N`,
  /// `postfix root N`, `postfix off`, `open`, `close` or `percent`.
  ///
  /// A value of another shape is a programming error (`WordTableTests` reads every value).
  static func token(_ value: String) -> Token {
    let parts = value.split(separator: " ").map(String.init)
    switch parts.count {
    case 1 where parts[0] == "open": return .open
    case 1 where parts[0] == "close": return .close
    case 1 where parts[0] == "percent": return .percent
    case 2 where parts[0] == "root": if let degree = Double(parts[1]) { return .root(degree) }
    case 2 where parts[0] == "op" && parts[1].count == 1: return .op(Character(parts[1]))
    case 2 where parts == ["postfix", "off"]: return .postfix(.off)
    case 3 where parts[0] == "postfix" && parts[1] == "power":
      if let exponent = Double(parts[2]) { return .postfix(.power(exponent)) }
    case 3 where parts[0] == "postfix" && parts[1] == "root":
      if let degree = Double(parts[2]) { return .postfix(.root(degree)) }
    default: break
    }
    preconditionFailure("arithmetic-words.json: no operator token \(value)")
  }

  /// A list of `arithmetic-words.json` as a map from word to number.
  private static func numbers(_ list: String) -> [String: Double] {
    WordTable.arithmetic.map(list).mapValues { value in
      guard let number = Double(value) else {
        preconditionFailure("arithmetic-words.json: \(list): \(value)")
      }
      return number
    }
  }

  /// Characters that carry no arithmetic and are skipped like spaces (currency signs and units).
  private static let ignorable = Set(SkillWords.list("calculator.ignorable_characters").compactMap(\.first))

  private static let chineseNumeralCharacters: Set<Character> = Set("零〇一二两三四五六七八九十百千万亿")

  /// Multipliers written after an Arabic number (3万, 1.5千).
  private static let chineseMagnitudes = Dictionary(
    uniqueKeysWithValues: numbers("chinese_magnitudes").map { (Character($0.key), $0.value) })

  static func tokenize(_ text: String) throws(ArithmeticError) -> [(Token, Int)] {
    var tokens: [(Token, Int)] = []
    for item in scan(Array(text.lowercased())) {
      switch item {
      case .token(let token, let start, _): tokens.append((token, start))
      case .unknown(let text, let position):
        if text.count == 1, let character = text.first, !character.isLetter {
          throw .unexpectedCharacter(character, position: position)
        }
        throw .unknownWord(text, position: position)
      }
    }
    return tokens
  }

  /// One scanned item: a token with its character span, or a character (or whole word) the
  /// grammar does not know.
  enum Scanned {
    case token(Token, start: Int, end: Int)
    case unknown(String, position: Int)
  }

  /// Scans `characters` into tokens; an unknown character (or a whole unknown word) becomes one
  /// `.unknown` item and scanning goes on after it.
  static func scan(_ characters: [Character]) -> [Scanned] {
    var items: [Scanned] = []
    var thenMarkers: [Int] = []
    var powerSuffixPending = false
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
          items.append(.unknown(String(characters[start]), position: start))
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
        appendNumber(value, start: start, end: &index, characters, to: &items)
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
          items.append(.unknown(String(characters[start]), position: start))
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
          items.append(.unknown(String(characters[start]), position: start))
          continue
        }
        if let (tenths, end) = moneyTenths(characters, at: index) {
          value += tenths
          index = end
        }
        appendNumber(value, start: start, end: &index, characters, to: &items)
        continue
      }
      if let end = powerSuffixEnd(characters, at: index), powerSuffixPending {
        // The 次方 of 的十次方: 的 already stood for the power; the exponent's span takes it in.
        powerSuffixPending = false
        if case .token(let token, let start, _)? = items.last {
          items[items.count - 1] = .token(token, start: start, end: end)
        }
        index = end
        continue
      }
      if character == "的", powerExponentFollows(characters, after: index) {
        // 2的10次方: 的 is the power, and the 次方 after the exponent is skipped.
        items.append(.token(.op("^"), start: index, end: index + 1))
        powerSuffixPending = true
        index += 1
        continue
      }
      if let length = ["**", "^"].first(where: { matches(characters, at: index, word: $0) })?.count {
        items.append(.token(.op("^"), start: index, end: index + length))
        index += length
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
        // An unknown word is one item.
        let start = index
        if character.isASCII, character.isLetter {
          while index + 1 < characters.count, characters[index + 1].isASCII, characters[index + 1].isLetter {
            index += 1
          }
        }
        items.append(.unknown(String(characters[start...index]), position: start))
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

  /// Appends a number, or, when 折 follows it, the discount it names (八五折 = 0.85, 8折 = 0.8,
  /// 7.5折 = 0.75) with a multiplication before it when an amount precedes ("400八折").
  private static func appendNumber(
    _ value: Double, start: Int, end index: inout Int, _ characters: [Character], to items: inout [Scanned]
  ) {
    guard index < characters.count, characters[index] == "折", value > 0, value < 100 else {
      items.append(.token(.number(value), start: start, end: index))
      return
    }
    index += 1
    if case .token(let previous, _, let previousEnd)? = items.last, endsOperand(previous) {
      items.append(.token(.op("*"), start: previousEnd, end: start))
    }
    items.append(.token(.number(value < 10 ? value / 10 : value / 100), start: start, end: index))
  }

  /// Whether an operand can end with `token` (a number, `)`, `%` or a postfix operator).
  private static func endsOperand(_ token: Token) -> Bool {
    switch token {
    case .number, .close, .percent, .postfix: return true
    case .op, .open, .root: return false
    }
  }

  /// The end of 次方 or 次幂 at `index`, or nil.
  private static func powerSuffixEnd(_ characters: [Character], at index: Int) -> Int? {
    ["次方", "次幂"].contains { matches(characters, at: index, word: $0) } ? index + 2 : nil
  }

  /// Whether a number and then 次方 (or 次幂) follow the 的 at `index` (的十次方, 的 3 次幂).
  private static func powerExponentFollows(_ characters: [Character], after index: Int) -> Bool {
    var position = index + 1
    while position < characters.count, characters[position].isWhitespace { position += 1 }
    if position < characters.count, characters[position] == "-" || characters[position] == "负" {
      position += 1
    }
    let numberStart = position
    while position < characters.count,
      chineseNumeralCharacters.contains(characters[position]) || characters[position] == "点"
        || characters[position].isASCII && (characters[position].isNumber || characters[position] == ".")
    {
      position += 1
    }
    guard position > numberStart else { return false }
    while position < characters.count, characters[position].isWhitespace { position += 1 }
    return powerSuffixEnd(characters, at: position) != nil
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

  /// Number words below a hundred (`Lexicon.englishNumbers`, and "half"), and the scales
  /// after them.
  private static let englishUnits = Lexicon.englishNumbers.filter { $0.value < 100 }.mapValues(Double.init)
    .merging(numbers("english_fractions")) { word, _ in word }
  private static let englishScales = Lexicon.englishNumbers.filter { $0.value >= 100 }.mapValues(Double.init)

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
        let hasOperator = window.contains { token, _, _ in isOperator(token, numbers: numbers.count) }
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

  /// Whether `token` makes arithmetic of a window with `numbers` numbers: a binary operator
  /// with two numbers, or a percent sign, root or postfix operator with one.
  static func isOperator(_ token: Token, numbers: Int) -> Bool {
    switch token {
    case .op: return numbers >= 2
    case .percent, .root, .postfix: return numbers >= 1
    case .number, .open, .close: return false
    }
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
    if word.first!.isASCII && word.first!.isLetter {
      let before = index > 0 ? characters[index - 1] : " "
      let after =
        index + wordCharacters.count < characters.count ? characters[index + wordCharacters.count] : " "
      return !(before.isASCII && before.isLetter) && !(after.isASCII && after.isLetter)
    }
    return true
  }

  static func describe(_ token: Token) -> String {
    switch token {
    case .number(let value): return format(value)
    case .op("r"): return "root"
    case .op(let character): return String(character)
    case .open: return "("
    case .close: return ")"
    case .percent: return "%"
    case .root(let degree): return degree == 2 ? "√" : "root"
    case .postfix(.power(let power)): return power == 2 ? "squared" : "cubed"
    case .postfix(.root): return "root"
    case .postfix(.off): return "off"
    }
  }

  private struct Parser {
    let tokens: [(Token, Int)]
    var index = 0

    init(tokens: [(Token, Int)]) { self.tokens = tokens }

    /// Sums; a percentage added to or taken from an amount is a percentage of that amount
    /// (200 + 10% = 220), as on a calculator, while percentages add as numbers (50% + 50% = 1).
    mutating func expression(depth: Int) throws(ArithmeticError) -> Double {
      var (value, isPercentage) = try term(depth: depth)
      while index < tokens.count, case .op(let op) = tokens[index].0, op == "+" || op == "-" {
        index += 1
        let (rhs, rhsIsPercentage) = try term(depth: depth)
        let amount = rhsIsPercentage && !isPercentage ? value * rhs : rhs
        value = op == "+" ? value + amount : value - amount
        isPercentage = isPercentage && rhsIsPercentage
      }
      return value
    }

    /// Products keep their percent signs apart (17% of 2350 is 17 × 2350 / 100, exactly 399.5).
    /// A discount next to an amount multiplies it ("20% off 80", "80 20% off"). Returns the
    /// value and whether it is a lone percentage.
    mutating func term(depth: Int) throws(ArithmeticError) -> (Double, Bool) {
      var operand = try signed(depth: depth)
      var value = operand.value
      var scale = operand.scale
      var factors = 1
      while index < tokens.count {
        var op: Character = "*"
        if case .op(let written) = tokens[index].0, written == "*" || written == "/" {
          op = written
          index += 1
        } else if !(startsOperand(tokens[index].0) && (operand.isDiscount || nextOperandIsDiscount())) {
          break
        }
        operand = try signed(depth: depth)
        factors += 1
        if op == "/" {
          guard operand.value != 0 else { throw .divisionByZero }
          value /= operand.value
          scale /= operand.scale
        } else {
          value *= operand.value
          scale *= operand.scale
        }
      }
      return (value / scale, factors == 1 && scale != 1)
    }

    func startsOperand(_ token: Token) -> Bool {
      switch token {
      case .number, .open, .root: return true
      case .op, .close, .percent, .postfix: return false
      }
    }

    /// Whether the tokens from the current one are a percentage off ("80 20% off"): a number,
    /// percent signs, then off. Read by token, never by parsing ahead, so nesting stays linear.
    func nextOperandIsDiscount() -> Bool {
      guard index < tokens.count, case .number = tokens[index].0 else { return false }
      var next = index + 1
      while next < tokens.count, tokens[next].0 == .percent { next += 1 }
      return next > index + 1 && next < tokens.count && tokens[next].0 == .postfix(.off)
    }

    /// An operand: its value, the power of 100 its percent signs divide it by, and whether it
    /// is a discount factor.
    struct Operand {
      var value: Double
      var scale = 1.0
      var isDiscount = false
    }

    /// A signed operand, or a root of one: signs and roots bind looser than `^`.
    mutating func signed(depth: Int) throws(ArithmeticError) -> Operand {
      guard depth < ArithmeticExpression.maximumDepth else { throw .tooDeep }
      guard index < tokens.count else {
        throw .unexpectedToken("end", position: tokens.last.map { $0.1 + 1 } ?? 0)
      }
      switch tokens[index].0 {
      case .op(let op) where op == "-" || op == "+":
        index += 1
        var operand = try signed(depth: depth + 1)
        if op == "-" { operand.value = -operand.value }
        return operand
      case .root(let degree):
        index += 1
        let operand = try signed(depth: depth + 1)
        return Operand(value: try ArithmeticExpression.root(operand.value / operand.scale, degree: degree))
      default:
        return try power(depth: depth)
      }
    }

    /// A postfixed operand, raised to a power or taken a root of (`4 r 81`) when `^` or `r`
    /// follows; the exponent may carry a sign (2^-1).
    mutating func power(depth: Int) throws(ArithmeticError) -> Operand {
      let base = try postfixed(depth: depth)
      guard index < tokens.count, case .op(let op) = tokens[index].0, op == "^" || op == "r" else {
        return base
      }
      index += 1
      let exponent = try signed(depth: depth + 1)
      let (left, right) = (base.value / base.scale, exponent.value / exponent.scale)
      if op == "r" { return Operand(value: try ArithmeticExpression.root(right, degree: left)) }
      return Operand(value: try ArithmeticExpression.raise(left, to: right))
    }

    /// A number or parenthesized expression with its postfix operators (`%`, squared, off).
    mutating func postfixed(depth: Int) throws(ArithmeticError) -> Operand {
      guard depth < ArithmeticExpression.maximumDepth else { throw .tooDeep }
      guard index < tokens.count else {
        throw .unexpectedToken("end", position: tokens.last.map { $0.1 + 1 } ?? 0)
      }
      let (token, position) = tokens[index]
      var operand: Operand
      switch token {
      case .number(let number):
        index += 1
        operand = Operand(value: number)
      case .open:
        index += 1
        operand = Operand(value: try expression(depth: depth + 1))
        guard index < tokens.count, tokens[index].0 == .close else { throw .unbalancedParenthesis }
        index += 1
      default:
        throw .unexpectedToken(ArithmeticExpression.describe(token), position: position)
      }
      while index < tokens.count {
        switch tokens[index].0 {
        case .percent:
          operand.scale *= 100
        case .postfix(.power(let exponent)):
          operand = Operand(
            value: try ArithmeticExpression.raise(operand.value / operand.scale, to: exponent))
        case .postfix(.root(let degree)):
          operand = Operand(
            value: try ArithmeticExpression.root(operand.value / operand.scale, degree: degree))
        case .postfix(.off):
          // Only a percentage can be taken off ("20% off"); "20 off" is no factor.
          guard operand.scale != 1, !operand.isDiscount else {
            throw .unexpectedToken("off", position: tokens[index].1)
          }
          operand = Operand(value: 1 - operand.value / operand.scale, isDiscount: true)
        default:
          return operand
        }
        index += 1
      }
      return operand
    }
  }

  /// `base` to the power `exponent`.
  /// - Throws: `.notReal` for a fractional power of a negative number, `.divisionByZero` for
  ///   a negative power of zero, `.notFinite` on overflow.
  static func raise(_ base: Double, to exponent: Double) throws(ArithmeticError) -> Double {
    if base == 0, exponent < 0 { throw .divisionByZero }
    let value = Foundation.pow(base, exponent)
    guard !value.isNaN else { throw .notReal }
    guard value.isFinite else { throw .notFinite }
    return value
  }

  /// The root of `degree` of `value`, exact when it is a whole number (∛27 is 3, not
  /// 3.0000000000000004); an odd root of a negative number is negative.
  /// - Throws: `.notReal` for an even root of a negative number or a zeroth root.
  static func root(_ value: Double, degree: Double) throws(ArithmeticError) -> Double {
    guard degree != 0, degree.isFinite else { throw .notReal }
    let isOddWhole = degree == degree.rounded() && Int64(degree) % 2 != 0
    guard value >= 0 || isOddWhole else { throw .notReal }
    let magnitude: Double
    switch degree {
    case 2: magnitude = Foundation.sqrt(abs(value))
    case 3: magnitude = Foundation.cbrt(abs(value))
    default: magnitude = Foundation.pow(abs(value), 1 / degree)
    }
    var result = value < 0 ? -magnitude : magnitude
    // A whole root a rounding error away (pow(81, 0.25) = 3.0000000000000004) is the whole one.
    let whole = result.rounded()
    if whole != result, abs(whole - result) < 1e-9 * max(1, abs(whole)),
      Foundation.pow(abs(whole), degree) == abs(value)
    {
      result = whole
    }
    return result
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
