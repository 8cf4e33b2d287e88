import Foundation

/// `calculator`: evaluates an arithmetic expression safely.
public struct CalculatorSkill: Skill {
  /// Creates the skill.
  public init() {}

  public var id: String { "calculator" }
  public var displayName: String { "Calculator" }
  public var description: String {
    "Evaluates arithmetic (+ - * / parentheses, decimals, %, powers, roots, percentages off, 打N折) "
      + "and converts units (temperature, length, mass, volume); returns the result."
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

  static let fillers = SkillWords.list("calculator.fillers")
  /// The cues of arithmetic said as a task (`phrasedExpression`), in `skill-words.json`.
  static let subtractCues = SkillWords.list("calculator.subtract_cues")
  static let multiplyCues = SkillWords.list("calculator.multiply_cues")
  static let divideCues = SkillWords.list("calculator.divide_cues")
  static let addCues = SkillWords.list("calculator.add_cues")
  static let remainderCues = SkillWords.list("calculator.remainder_cues")

  // Parentheses and signs belong to the expression; only sentence punctuation is trimmed.
  static let edge = CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: "?？!！.。,，:：=;；"))

  /// The whole request, without polite fillers, is an arithmetic expression with a number
  /// and an operator ("(3+4)*2", "what is 17% of 2350?"); "it's 20% off today" is not.
  static func isArithmetic(_ text: String) -> Bool {
    // "turn 30 celsius into fahrenheit": a number and the two units it goes between.
    if UnitConversion.parse(text) != nil { return true }
    let expression = TextCues.strip(text, removing: nil, fillers: Self.fillers, edge: Self.edge)
    guard let tokens = try? ArithmeticExpression.tokenize(expression) else { return false }
    let numbers = tokens.filter { token, _ in
      if case .number = token { return true }
      return false
    }.count
    // One number with a root, power or percent sign ("square root of 81", "5 squared") is
    // arithmetic; a binary operator needs its second number only to evaluate.
    return numbers > 0 && tokens.contains { token, _ in ArithmeticExpression.isOperator(token, numbers: 2) }
  }

  /// `expression`: the arithmetic in `text` without the words around it ("what's 17% of 2350?"
  /// gives "17% of 2350"); the stripped text when no part of it evaluates, so execution can
  /// report what it could not read.
  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    if let conversion = UnitConversion.parse(text) {
      let value = ArithmeticExpression.format(conversion.value)
      return ["expression": .string("\(value) \(conversion.from.names[0]) in \(conversion.to.names[0])")]
    }
    if let chained = Self.chainedExpression(text) { return ["expression": .string(chained)] }
    let found = ArithmeticExpression.extract(from: text)
    let numberCount = ArithmeticExpression.numbers(in: text).count
    if let found, ArithmeticExpression.numbers(in: found).count == numberCount {
      return ["expression": .string(found)]
    }
    if let phrased = Self.phrasedExpression(text) { return ["expression": .string(phrased)] }
    if let found { return ["expression": .string(found)] }
    let stripped = TextCues.strip(text, removing: nil, fillers: Self.fillers, edge: Self.edge)
    return stripped.isEmpty ? SkillArguments() : ["expression": .string(stripped)]
  }

  /// `text` with what it says was stored ("the rent I gave you", 你记住的 daily rate) put as
  /// `value`, the number a recall found, and read again as arithmetic ("12 percent of 2400");
  /// nil when the text names nothing stored.
  static func expression(_ text: String, taking value: String) -> String? {
    guard let span = storedSpan(in: text)?.whole else { return nil }
    let original = Array(text)
    // (用, 拿 before 你记住的…: "take what you remember", said before the arithmetic.)
    let before = String(original[..<span.lowerBound]).trimmingCharacters(in: .whitespaces)
    let lead = ["用", "拿", "把"].contains(before) ? "" : before
    var substituted = lead + " \(value) " + String(original[span.upperBound...])
    // 算一下 between the number and the operation ("8000 算一下乘以13"): said anywhere, not only
    // around the arithmetic as the fillers are.
    for filler in fillers.filter({ $0.unicodeScalars.contains(where: \.isCJKIdeograph) })
      .sorted(by: { $0.count > $1.count })
    {
      substituted = substituted.replacingOccurrences(of: filler, with: " ")
    }
    return CalculatorSkill().extractArguments(from: substituted, clock: .system())["expression"]?.stringValue
  }

  /// The thing `text` says was stored ("the rent" of "the rent I gave you", "daily rate" of
  /// 你记住的 daily rate): what a recall looks for.
  static func storedPhrase(in text: String) -> String? {
    guard let span = storedSpan(in: text)?.thing else { return nil }
    let phrase = String(Array(text)[span]).trimmingCharacters(in: .whitespaces)
    return phrase.isEmpty ? nil : phrase
  }

  /// Where `text` names a value stored before, in character offsets: the thing with the words
  /// that say it was stored (replaced by the number found), and the thing alone. English names
  /// the thing before its marker, from a determiner ("the rent I gave you"); Chinese after it, up
  /// to the arithmetic (你记住的 daily rate 算一下…).
  private static func storedSpan(in text: String) -> (whole: Range<Int>, thing: Range<Int>)? {
    let lower = text.lowercased()
    guard lower.count == text.count,
      let marker = SkillWords.list("plan.stored_before").sorted(by: { $0.count > $1.count })
        .compactMap({ lower.range(of: $0) }).first
    else { return nil }
    let characters = Array(lower)
    let markerStart = lower.distance(from: lower.startIndex, to: marker.lowerBound)
    let markerEnd = lower.distance(from: lower.startIndex, to: marker.upperBound)
    if lower[marker].last?.isASCII == true, lower[marker].last?.isLetter == true {
      let before = String(characters[..<markerStart])
      var offset = before.count
      for word in before.split(separator: " ", omittingEmptySubsequences: false).reversed().prefix(6) {
        offset -= word.count
        if ["the", "my", "our", "that", "his", "her", "their"].contains(String(word)) {
          return (offset..<markerEnd, offset..<markerStart)
        }
        offset -= 1
      }
      return nil
    }
    var end = markerEnd
    while end < characters.count, !"算乘除加减，,。？?拿是*×".contains(characters[end]) { end += 1 }
    return (markerStart..<end, markerEnd..<end)
  }

  /// Arithmetic said as a task rather than written out: "multiply 12 by 12", "subtract 7 from
  /// 50", "split 120 among 6", "a 15% tip on 40", "I had 500 and spent 120, how much is left",
  /// 平分; nil when no such cue and number pattern is there.
  static func phrasedExpression(_ text: String) -> String? {
    let numbers = ArithmeticExpression.numbers(in: text)
    guard numbers.count >= 2 else { return nil }
    let lower = text.lowercased()
    let written = numbers.map(\.text)
    // English cues are whole words ("add" is not in "address", "ways" not in "always").
    let words = Set(lower.split { !($0.isLetter || $0 == "'") }.map(String.init))
    func has(_ cues: [String]) -> Bool {
      cues.contains { cue in
        guard cue.allSatisfy(\.isASCII) else { return lower.contains(cue) }
        return cue.contains(" ") ? lower.contains(cue) : words.contains(cue)
      }
    }
    if numbers.count == 2, numbers.filter(\.percent).count == 1 {
      let percent = numbers.first(where: \.percent)!.text
      let amount = numbers.first { !$0.percent }!.text
      return "\(percent) * \(amount)"
    }
    if has(Self.subtractCues), lower.contains(" from "), numbers.count == 2 {
      return "\(written[1]) - \(written[0])"
    }
    if has(Self.multiplyCues) { return written.joined(separator: " * ") }
    if numbers.count == 2, has(Self.divideCues) {
      return "\(written[0]) / \(written[1])"
    }
    if has(Self.addCues) {
      return written.joined(separator: " + ")
    }
    if has(Self.remainderCues) {
      return written.joined(separator: " - ")
    }
    return nil
  }

  /// A sum or product said first and then taken on by one operation with one number ("add up
  /// 12, 30 and 4, then divide it by 2", 三个数加起来再除以3): "(12 + 30 + 4) / 2"; nil otherwise.
  static func chainedExpression(_ text: String) -> String? {
    let lower = text.lowercased()
    let operations: [(cues: String, symbol: String)] = [
      ("calculator.then_divide", "/"), ("calculator.then_multiply", "*"), ("calculator.then_add", "+"),
      ("calculator.then_subtract", "-"),
    ]
    var best: (range: Range<String.Index>, symbol: String)?
    for (cues, symbol) in operations {
      for cue in SkillWords.list(cues) {
        guard let range = lower.range(of: cue, options: .backwards) else { continue }
        if cue.first?.isASCII == true, range.lowerBound > lower.startIndex,
          lower[lower.index(before: range.lowerBound)].isLetter
        {
          continue
        }
        if best.map({ range.lowerBound > $0.range.lowerBound }) ?? true { best = (range, symbol) }
      }
    }
    guard let (range, symbol) = best else { return nil }
    let head = String(lower[..<range.lowerBound])
    let tail = ArithmeticExpression.numbers(in: String(lower[range.upperBound...]))
    guard tail.count == 1, ArithmeticExpression.numbers(in: head).count >= 2,
      let first = Self().extractArguments(from: head, clock: .system())["expression"]?.stringValue,
      (try? ArithmeticExpression.evaluate(first)) != nil
    else { return nil }
    return "(\(first)) \(symbol) \(tail[0].text)"
  }

  /// The numeric answer to a request such as "what's 12 times 7" or "一千二加三百四", without
  /// running the agent; nil when the text holds no expression that evaluates.
  public static func answer(for text: String) -> Double? {
    let skill = CalculatorSkill()
    return try? skill.evaluate(skill.extractArguments(from: text, clock: .system()))
  }

  /// The value of the `expression` argument.
  /// - Throws: `SkillError.missingArgument` without an expression, `SkillError.divisionByZero`,
  ///   or `SkillError.invalidArgument` with the `ArithmeticError` when it does not evaluate.
  public func evaluate(_ arguments: SkillArguments) throws(SkillError) -> Double {
    guard let expression = arguments["expression"]?.stringValue else {
      throw .missingArgument(name: "expression")
    }
    if let conversion = UnitConversion.parse(expression) { return conversion.result }
    do {
      return try ArithmeticExpression.evaluate(expression)
    } catch .divisionByZero {
      throw .divisionByZero
    } catch {
      throw .invalidArgument(name: "expression", reason: .arithmetic(error))
    }
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    let expression = arguments["expression"]?.stringValue ?? ""
    if let conversion = UnitConversion.parse(expression) {
      // Two decimals are what a converted quantity is read to ("22.22 °C").
      let rounded = (conversion.result * 100).rounded() / 100
      return .text(
        "\(ArithmeticExpression.format(conversion.value)) \(conversion.from.symbol) = "
          + "\(ArithmeticExpression.format(rounded)) \(conversion.to.symbol)")
    }
    let value = try evaluate(arguments)
    return .text("\(expression) = \(ArithmeticExpression.format(value))")
  }
}
