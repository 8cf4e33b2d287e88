import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct DurationParserTests {
  @Test(arguments: [
    ("45s", 45.0), ("30m", 1_800), ("12h", 43_200), ("30d", 2_592_000), ("2w", 1_209_600),
    ("1h30m", 5_400), ("1D", 86_400), (" 0s ", 0), ("1w2d3h4m5s", 788_645),
  ])
  func parsesUnitsAndCombinations(text: String, seconds: Double) {
    #expect(DurationParser.parse(text) == seconds)
  }

  @Test(arguments: ["", "30", "d", "30x", "1.5h", "-3d", "3d4", "1h1h", "h1", "30 d", "３０d"])
  func rejectsEverythingElse(text: String) {
    #expect(DurationParser.parse(text) == nil)
  }

  @Test func rejectsOverflow() {
    #expect(DurationParser.parse(String(repeating: "9", count: 40) + "s") == nil)
  }

  @Test func formatsTheTwoLargestUnits() {
    #expect(DurationParser.format(0) == "0s")
    #expect(DurationParser.format(45) == "45s")
    #expect(DurationParser.format(93_784) == "1d 2h")
    #expect(DurationParser.format(-1) == "?")
  }
}
