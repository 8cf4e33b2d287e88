import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// The words the built-in skills strip and match live in `skill-words.json` beside the
/// corpus; the compiled copy is current and holds every list the code reads.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct SkillWordsTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Sources/EngramAgent")

  /// `make corpus` output is current: the generated literal holds exactly the JSON lists.
  @Test func generatedWordsMatchTheJSONFile() throws {
    let data = try Data(contentsOf: Self.folder.appendingPathComponent("Intent/skill-words.json"))
    let decoded = try JSONDecoder().decode([String: [String]].self, from: data)
    #expect(decoded == SkillWords.lists, "stale SkillWords+Generated.swift: run `make corpus`")
  }

  /// Every `SkillWords.list("…")` in the agent's sources names a list the file holds.
  @Test func everyListTheCodeReadsExists() throws {
    var names = Set<String>()
    let files = try #require(FileManager.default.enumerator(at: Self.folder, includingPropertiesForKeys: nil))
    for case let url as URL in files where url.pathExtension == "swift" {
      let text = try String(contentsOf: url, encoding: .utf8)
      for match in text.matches(of: #/SkillWords\.list\("([a-z_.]+)"\)/#) { names.insert(String(match.1)) }
    }
    #expect(names.count >= 10)
    for name in names { #expect(SkillWords.lists[name]?.isEmpty == false, "\(name)") }
  }
}
