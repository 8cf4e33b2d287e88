import Engram
import EngramAgent
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct ChatRenderingTests {
  @Test func runningStatesHaveAStatusLineAndEndingsHaveAReply() {
    #expect(ChatRendering.statusLabel(for: .retrieving) == "retrieving memories…")
    #expect(ChatRendering.statusLabel(for: .planning) == "planning…")
    #expect(
      ChatRendering.statusLabel(for: .executing(skillID: "reminder.create", step: 2, total: 3))
        == "executing step 2/3 reminder.create…")
    #expect(ChatRendering.statusLabel(for: .idle) == nil)
    #expect(ChatRendering.replyText(for: .planning) == nil)
    #expect(ChatRendering.replyText(for: .idle) == nil)
  }

  @Test func foldingPutsAReplyOnOneLine() {
    #expect(
      ChatRendering.folded("Here is what I remember:\n- a (2026-01-02)\r\n  - b  \n\n")
        == "Here is what I remember: - a (2026-01-02) - b")
    #expect(ChatRendering.folded("one line") == "one line")
    #expect(ChatRendering.folded("") == "")
  }

  @Test func historyNamesTheSpeakersAndIndentsContinuationLines() throws {
    let utc = try #require(TimeZone(identifier: "UTC"))
    let date = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14 22:13 UTC
    func turn(_ speaker: String, _ text: String) -> SearchHit {
      SearchHit(
        kind: .message, id: 1, text: text, sessionID: 1, speaker: speaker, timestamp: date, bm25: nil,
        cosine: nil, score: 0, provenance: [], metadata: [:])
    }
    let lines = ChatRendering.history(
      [turn("user", "what is my code"), turn("assistant", "Here is what I remember:\n- 4512")], timeZone: utc)
    #expect(
      lines == [
        "2023-11-14 22:13  you: what is my code",
        "2023-11-14 22:13  engram: Here is what I remember:",
        "                          - 4512",
      ])
    #expect(ChatRendering.history([], timeZone: utc) == ["(no turns yet)"])
  }

  @Test func theShownContextIsWhatTheModelReceivesUnderItsTokenCount() throws {
    let utc = try #require(TimeZone(identifier: "UTC"))
    let hit = SearchHit(
      kind: .memory, id: 7, text: "my locker code is 4512", sessionID: nil, speaker: nil,
      timestamp: Date(timeIntervalSince1970: 1_700_000_000), bm25: nil, cosine: nil, score: 1, provenance: [],
      metadata: [:])
    let turn = TurnContext(query: "code?", budget: 1500, hits: [hit], timeZone: utc, omitted: 2)
    let lines = ChatRendering.context(
      turn, tokens: ContextTokenCount(tokens: 31, source: .server), budget: 1500)
    #expect(
      lines.first
        == "--- prompt context: 31 tokens (counted by the model's server), budget 1500, 2 left out ---")
    #expect(lines.dropFirst().dropLast().joined(separator: "\n") == turn.rendered)
    #expect(lines.contains("[memory #7 2023-11-14] my locker code is 4512"))
    #expect(lines.last == "--- end of prompt context ---")
    let estimated = ChatRendering.context(TurnContext(timeZone: utc), tokens: nil, budget: 80)
    #expect(
      estimated == [
        "--- prompt context: 0 tokens (estimated), budget 80 ---", "(empty)", "--- end of prompt context ---",
      ])
  }

  @Test func theSkillsTableShowsEachSkillsEnabledState() async throws {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    try await registry.setEnabled(false, id: "calculator")
    let lines = ChatRendering.skills(registry, width: 200, styled: false)
    #expect(lines.first == "id               enabled  asks  name")
    #expect(lines.count == BuiltInSkills.all().count + 1)
    #expect(lines.contains("calculator       no       no    Calculator"))
    #expect(lines.contains("memory.remember  yes      yes   Remember"))
  }
}
