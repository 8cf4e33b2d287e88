import EngramTestSupport
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ArithmeticExpressionTests {
  @Test(arguments: [
    ("1 + 2 * 3", 7.0), ("(1 + 2) * 3", 9), ("10 / 4", 2.5), ("-3 + 5", 2), ("2 * -3", -6), ("50%", 0.5),
    ("200 * 15%", 30), ("0.1 + 0.2", 0.30000000000000004), ("3加5", 8), ("十二乘以三", 36), ("100除以8", 12.5),
    ("7 减 10", -3), ("6 × 7", 42), ("8 ÷ 2", 4), ("3 plus 4 times 2", 11), ("9 divided by 3", 3),
    ("（1+1）*2", 4),
    ("3 x 4", 12), ("1,000 + 1", 1001), ("一千二加三百四", 1540), ("两万五", 25000), ("三点五 * 2", 7),
    ("17% of 2350", 399.5), ("2350的17%", 399.5), ("百分之十七", 0.17), ("15 percent of 80", 12), ("12除4", 3),
    ("6 multiplied by 7", 42), ("1.5万 + 1", 15001),
  ])
  func evaluates(_ text: String, _ expected: Double) throws {
    #expect(try ArithmeticExpression.evaluate(text) == expected)
  }

  /// Powers (`^`, `**`, words, 次方, squared), roots (words, √, 根号, 开根号, nth roots), `x`
  /// and `×` between numbers, percentages off and 打N折, nested in ordinary arithmetic.
  @Test(arguments: [
    ("2^10", 1024.0), ("2 ** 3 + 1", 9), ("-2^2", -4), ("(-2)^2", 4), ("2^-1", 0.5), ("2^3^2", 512),
    ("(1 + 2)^2 * 2", 18), ("3 to the power of 4", 81), ("2 raised to the power of 5", 32),
    ("10 raised to 3", 1000), ("5 squared", 25), ("3 cubed + 1", 28), ("1.5 squared", 2.25),
    ("2的10次方", 1024), ("二的十次方", 1024), ("3的平方", 9), ("十的立方减一", 999), ("5平方", 25),
    ("2的3次幂", 8), ("square root of 81", 9), ("square root of (9 + 16)", 5), ("sqrt(2.25)", 1.5),
    ("cube root of 27", 3), ("cube root of -8", -2), ("4th root of 81", 3), ("3rd root of 125", 5),
    ("√49 + 1", 8), ("∛64", 4), ("根号16", 4), ("根号二十五加一", 6), ("81的平方根", 9), ("27的立方根", 3),
    ("49开根号", 7), ("一百开平方", 10), ("2 * square root of 16", 8), ("square root of 4^2", 4),
    ("3x4", 12), ("2 × 3 x 4", 24), ("1.5x2", 3), ("20% off 80", 64), ("80 with 25% off", 60),
    ("80 less 25%", 60), ("200 + 10%", 220), ("200 - 10%", 180), ("50% + 50%", 1),
    ("400打八五折", 340), ("400打8折", 320), ("400打7.5折", 300), ("一千打九五折", 950),
    ("两百块打七折", 140), ("(100 + 100) 打九折", 180),
  ])
  func evaluatesPowersRootsAndDiscounts(_ text: String, _ expected: Double) throws {
    let value = try ArithmeticExpression.evaluate(text)
    #expect(abs(value - expected) < 1e-9, "\(text) = \(value)")
  }

  /// A root of a negative number, or a fraction power of one, has no real value.
  @Test(arguments: ["square root of -4", "根号负九", "(-8)^0.5", "0th root of 5"])
  func noRealValueIsAnError(_ text: String) {
    #expect(throws: ArithmeticError.self) { try ArithmeticExpression.evaluate(text) }
  }

  @Test func errorsAreTyped() {
    #expect(throws: ArithmeticError.divisionByZero) { try ArithmeticExpression.evaluate("1 / 0") }
    #expect(throws: ArithmeticError.divisionByZero) { try ArithmeticExpression.evaluate("5 / (2 - 2)") }
    #expect(throws: ArithmeticError.empty) { try ArithmeticExpression.evaluate("  ") }
    #expect(throws: ArithmeticError.unbalancedParenthesis) { try ArithmeticExpression.evaluate("(1 + 2") }
    #expect(throws: ArithmeticError.unexpectedToken(")", position: 5)) {
      try ArithmeticExpression.evaluate("1 + 2)")
    }
    #expect(throws: ArithmeticError.unknownWord("abc", position: 4)) {
      try ArithmeticExpression.evaluate("1 + abc")
    }
    #expect(throws: ArithmeticError.unexpectedCharacter("@", position: 2)) {
      try ArithmeticExpression.evaluate("1 @ 2")
    }
    #expect(throws: ArithmeticError.tooDeep) {
      try ArithmeticExpression.evaluate(
        String(repeating: "(", count: 100) + "1" + String(repeating: ")", count: 100))
    }
    #expect(throws: ArithmeticError.tooLong) {
      try ArithmeticExpression.evaluate(String(repeating: "1+", count: 600) + "1")
    }
    #expect(throws: ArithmeticError.notFinite) {
      try ArithmeticExpression.evaluate("1" + String(repeating: "0", count: 308) + " * 10")
    }
  }

  @Test(arguments: [
    ("what's 12 times 7 again", "12 times 7"), ("the answer to 3 + 4 please", "3 + 4"),
    ("no numbers here", nil),
    ("just 42", nil), ("一千二加三百四等于多少", "一千二加三百四"),
  ])
  func extractsTheLongestEvaluableExpression(_ text: String, _ expected: String?) {
    #expect(ArithmeticExpression.extract(from: text) == expected)
  }

  @Test func formatting() {
    #expect(ArithmeticExpression.format(8) == "8")
    #expect(ArithmeticExpression.format(2.5) == "2.5")
    #expect(ArithmeticExpression.format(0.1 + 0.2) == "0.3")
    #expect(ArithmeticExpression.format(-3) == "-3")
  }
}
