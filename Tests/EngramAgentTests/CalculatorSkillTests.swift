import EngramTestSupport
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct CalculatorSkillTests {
  /// Chinese numerals with units, percentages and operator words, inside ordinary requests.
  @Test(arguments: [
    ("一千二加三百四", 1540.0), ("两万五减五千", 20000), ("三点五乘二", 7), ("十二万除以四", 30000),
    ("一百除四", 25), ("三百四乘上十", 3400), ("3万加2千", 32000), ("负五加三", -2),
    ("17% of 2350", 399.5), ("what's 17% of 2350?", 399.5), ("2350的17%", 399.5), ("2350的百分之十七", 399.5),
    ("百分之十七乘以2350", 399.5), ("what is 15 percent of 80", 12), ("12 times 7", 84),
    ("what's 100 divided by 8", 12.5), ("hey, quick: 6 multiplied by 7?", 42), ("9 minus 12", -3),
    ("can you tell me what 12 times 7 is", 84), ("帮我算一下12乘以3等于多少", 36), ("一千二加三百四等于几？", 1540),
    ("how much is $1,200 plus $340", 1540), ("(3 + 4) * 2", 14), ("what's twelve times seven", 84),
    ("two hundred and five plus five", 210), ("half of 80", 40), ("五十的一半", 25),
    ("forty-two divided by six", 7),
  ])
  func answers(_ text: String, _ expected: Double) throws {
    let answer = try #require(CalculatorSkill.answer(for: text))
    #expect(abs(answer - expected) < 1e-9)
  }

  /// Arithmetic said as a task: verbs, splitting a bill, a percentage of an amount, what is left,
  /// 再 (then) applying to everything before it, and 块 amounts with a tenth (九块九 = 9.9).
  @Test(arguments: [
    ("multiply 12 by 12", 144.0), ("divide 300 by 15", 20), ("add 250 and 750", 1000), ("add 5 to 10", 15),
    ("subtract 7 from 50", 43), ("split 120 dollars among 6 friends", 20),
    ("the bill is 90, we're splitting it 3 ways", 30), ("三百块钱五个人平分", 60), ("两百四分给六个人，每人多少", 40),
    ("a 15% tip on 40", 6), ("shoes cost 80 and they're 25% off, how much do I save", 20),
    ("一千减二百再减三百", 500), ("2加3再乘以4", 20), ("十块五乘以二", 21), ("九块九加一块一", 11),
    ("I had 500 and spent 120, how much is left", 380), ("工资八千，花了三千，还剩多少", 5000),
    // A sum said first, then one operation on it.
    ("add up 64, 18 and 230, then divide it by 4", 78), ("total 10, 20 and 30 and then multiply by 2", 120),
    ("add 5 and 7 then subtract 2", 10), ("把15、25和60加起来，然后除以4", 25),
  ])
  func phrasedArithmetic(_ text: String, _ expected: Double) throws {
    let answer = try #require(CalculatorSkill.answer(for: text))
    #expect(abs(answer - expected) < 1e-9)
  }

  /// Roots, powers, discounts and splits asked in a sentence, in English and Chinese.
  @Test(arguments: [
    ("square root of 81", 9.0), ("what's the square root of 144?", 12), ("3 to the power of 4", 81),
    ("2^10", 1024), ("what is 7 squared", 49), ("四百块钱打八五折是多少钱", 340), ("一千二打八折多少钱", 960),
    ("split 96 between 4", 24), ("how much is 12 x 12", 144), ("what's 20% off 250", 200),
    ("二的十次方等于多少", 1024), ("一百四十四的平方根是多少", 12), ("根号八十一等于几", 9),
    ("cube root of 1000 please", 10), ("(2 + 3) to the power of 2", 25),
  ])
  func answersRootsPowersAndDiscounts(_ text: String, _ expected: Double) throws {
    let answer = try #require(CalculatorSkill.answer(for: text), "\(text)")
    #expect(abs(answer - expected) < 1e-9, "\(text) = \(answer)")
  }

  /// These requests are the calculator's, not another skill's or the language model's.
  @Test(arguments: [
    "square root of 81", "3 to the power of 4", "2^10", "四百块钱打八五折是多少钱", "split 96 between 4",
    "what's 20% off 250", "二的十次方等于多少", "5 x 6",
  ])
  func routesToTheCalculator(_ text: String) async throws {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let decision = try await SkillRouter(registry: registry).route(text, clock: .system())
    #expect(decision?.skillID == "calculator", "\(text) -> \(decision?.skillID ?? "none")")
  }

  /// A number and two units of one dimension: the unit right after the number is what it is in.
  @Test(arguments: [
    ("0 celsius in kelvin", 273.15), ("how many cm is 5 feet", 152.4), ("2 gallons to liters", 7.570823568),
    ("5公斤是多少磅", 11.023113109), ("-40°F in °C", -40), ("12 inches in centimeters", 30.48),
    ("one mile is how many meters", 1609.344),
  ])
  func convertsUnits(_ text: String, _ expected: Double) throws {
    let answer = try #require(CalculatorSkill.answer(for: text), "\(text)")
    #expect(abs(answer - expected) < 1e-6, "\(text) = \(answer)")
  }

  /// One unit, two numbers, or units that measure different things are no conversion.
  @Test(arguments: [
    "run 5 km tomorrow", "the box weighs 5 kg and 11 pounds", "5 km in 30 minutes",
    "3 cups of flour and 2 liters",
    "我跑了5公里", "3 kg in feet",
  ])
  func notAConversion(_ text: String) {
    #expect(UnitConversion.parse(text) == nil, "\(text)")
  }

  /// Cue words count only as whole words.
  @Test func cuesAreWholeWords() {
    #expect(CalculatorSkill.phrasedExpression("my address is 12 and 40 always") == nil)
    #expect(CalculatorSkill.phrasedExpression("add 12 and 40") == "12 + 40")
  }

  @Test(arguments: ["what's the weather", "I have 2 kids and 3 dogs", "", "提醒我明天交报告"])
  func noExpressionNoAnswer(_ text: String) {
    #expect(CalculatorSkill.answer(for: text) == nil)
  }

  @Test func evaluateThrowsTypedErrors() throws {
    let skill = CalculatorSkill()
    #expect(throws: SkillError.divisionByZero) { try skill.evaluate(["expression": .string("5 除以 0")]) }
    #expect(throws: SkillError.missingArgument(name: "expression")) { try skill.evaluate([:]) }
    #expect(throws: SkillError.self) { try skill.evaluate(["expression": .string("5 +")]) }
    #expect(try skill.evaluate(["expression": .string("一千二加三百四")]) == 1540)
  }

  @Test func expressionArgumentIsTheArithmeticOnly() {
    let skill = CalculatorSkill()
    let clock = AgentClock.system()
    #expect(
      skill.extractArguments(from: "what's 17% of 2350?", clock: clock)["expression"]
        == .string("17% of 2350"))
    #expect(skill.extractArguments(from: "帮我算一下两万五减五千", clock: clock)["expression"] == .string("两万五减五千"))
    #expect(skill.claims("两万五减五千等于多少", clock: clock))
    #expect(skill.claims("what's 100 divided by 8", clock: clock))
    #expect(!skill.claims("it's 20% off today", clock: clock))
  }

  /// Long or hostile input answers (or not) without trapping.
  @Test func hostileInputNeverTraps() {
    #expect(CalculatorSkill.answer(for: String(repeating: "一二三四五六七八九", count: 5) + "加一") == nil)
    #expect(CalculatorSkill.answer(for: String(repeating: "1 + ", count: 240) + "1") == 241)
    // Unbalanced parentheses are not an expression; words for numbers without an operator are
    // not a calculation.
    #expect(CalculatorSkill.answer(for: String(repeating: "1 + 2 ) ", count: 120)) == nil)
    #expect(
      CalculatorSkill.answer(for: String(repeating: "nine hundred thousand million ", count: 30)) == nil)
  }

  /// What a request says was stored is where a recalled number goes, in English (the thing
  /// before "I gave you") and in Chinese (the thing after 你记住的); the recall looks up the
  /// thing alone.
  @Test func aRecalledNumberStandsForWhatWasStored() throws {
    let english = try #require(
      CalculatorSkill.expression("divide the salary I gave you by 12", taking: "6000"))
    #expect(try ArithmeticExpression.evaluate(english) == 500)
    #expect(CalculatorSkill.storedPhrase(in: "divide the salary I gave you by 12") == "the salary")
    let chinese = try #require(CalculatorSkill.expression("用你记住的 daily rate 算一下乘以22是多少", taking: "400"))
    #expect(try ArithmeticExpression.evaluate(chinese) == 8800)
    #expect(CalculatorSkill.storedPhrase(in: "用你记住的 daily rate 算一下乘以22是多少") == "daily rate")
    #expect(CalculatorSkill.expression("divide 600 by 12", taking: "5") == nil)
  }
}
