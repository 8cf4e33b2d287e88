import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// The calculator's and the date parser's valued words live in JSON files beside their code;
/// the compiled copies are current, and every list the code reads exists.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct WordTableTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Sources/EngramAgent")

  /// `make corpus` output is current: each compiled table holds exactly its JSON file's pairs.
  @Test(arguments: [("BuiltIn/arithmetic-words.json", "arithmetic"), ("Time/date-words.json", "dates")])
  func generatedTableMatchesTheJSONFile(file: String, table: String) throws {
    let data = try Data(contentsOf: Self.folder.appendingPathComponent(file))
    let decoded = try JSONDecoder().decode([String: [[String]]].self, from: data)
    let compiled = table == "arithmetic" ? WordTable.arithmetic : WordTable.dates
    #expect(!decoded.isEmpty)
    #expect(
      decoded == compiled.lists.mapValues { $0.map { [$0.word, $0.value] } },
      "stale generated word table of \(file): run `make corpus`")
  }

  /// Every `WordTable.<table>.list("…")` (or `.map`) in the agent's sources names a list its
  /// table holds.
  @Test func everyListTheCodeReadsExists() throws {
    var names: [(table: String, list: String)] = []
    let files = try #require(FileManager.default.enumerator(at: Self.folder, includingPropertiesForKeys: nil))
    for case let url as URL in files where url.pathExtension == "swift" {
      let text = try String(contentsOf: url, encoding: .utf8)
      for match in text.matches(of: #/WordTable\.(arithmetic|dates)\.(?:list|map)\("([a-z_.]+)"\)/#) {
        names.append((String(match.1), String(match.2)))
      }
    }
    #expect(names.count >= 6)
    for name in names {
      let table = name.table == "arithmetic" ? WordTable.arithmetic : WordTable.dates
      #expect(table.lists[name.list]?.isEmpty == false, "\(name.table): \(name.list)")
    }
  }

  /// Every operator word's value names a token (`ArithmeticExpression.token` traps on one
  /// that does not).
  @Test func everyOperatorValueIsAToken() {
    let operators = WordTable.arithmetic.list("operators")
    #expect(operators.count > 50)
    for entry in operators { _ = ArithmeticExpression.token(entry.value) }
    #expect(ArithmeticExpression.token("postfix power 2") == .postfix(.power(2)))
    #expect(ArithmeticExpression.token("op ^") == .op("^"))
  }
}
