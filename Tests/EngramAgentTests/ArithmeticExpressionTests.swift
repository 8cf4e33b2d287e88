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

  @Test func errorsAreTyped() {
    #expect(throws: ArithmeticError.divisionByZero) { try ArithmeticExpression.evaluate("1 / 0") }
    #expect(throws: ArithmeticError.divisionByZero) { try ArithmeticExpression.evaluate("5 / (2 - 2)") }
    #expect(throws: ArithmeticError.empty) { try ArithmeticExpression.evaluate("  ") }
    #expect(throws: ArithmeticError.unbalancedParenthesis) { try ArithmeticExpression.evaluate("(1 + 2") }
    #expect(throws: ArithmeticError.unexpectedToken(")", position: 5)) {
      try ArithmeticExpression.evaluate("1 + 2)")
    }
    #expect(throws: ArithmeticError.unexpectedCharacter("a", position: 4)) {
      try ArithmeticExpression.evaluate("1 + abc")
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
