import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct MemoryAnswerTests {
  static let day = Date(timeIntervalSince1970: 1_749_607_200)

  @Test func contentTermsDropQuestionWordsAndCutWords() {
    #expect(
      MemoryAnswer.contentTerms("What is the wifi password at the cabin?") == ["wifi", "passw", "cabin"])
    #expect(MemoryAnswer.contentTerms("What did Caroline research?") == ["carol", "resea"])
    #expect(MemoryAnswer.contentTerms("我的车停在哪了？") == ["车停"])
    #expect(MemoryAnswer.contentTerms("我的猫呢") == ["猫"])
    #expect(MemoryAnswer.contentTerms("hey, good morning!").isSubset(of: ["good", "morni"]))
  }

  @Test func gatePassesCoveringItemsAndRejectsUnrelatedOnes() {
    let gate = MemoryAnswer(minimumCoverage: 0.6)
    let password = RecalledMemory(id: 1, text: "The cabin wifi password is trout-42", date: Self.day)
    let unrelated = RecalledMemory(id: 2, text: "I bought new running shoes", date: Self.day)
    #expect(
      gate.relevant([unrelated, password], to: "what's the wifi password at the cabin?").map(\.id) == [1])
    #expect(gate.relevant([unrelated], to: "what's the wifi password at the cabin?").isEmpty)
    #expect(gate.relevant([password], to: "hello there").isEmpty)
  }

  @Test func speakerNamesCount() {
    let turn = RecalledMemory(id: 3, text: "I've been researching adoption agencies", speaker: "Caroline")
    #expect(MemoryAnswer(minimumCoverage: 1).relevant([turn], to: "What did Caroline research?").count == 1)
  }

  @Test func cosineGateAppliesOnlyToTheCalibratedModel() {
    let similar = RecalledMemory(id: 4, text: "unrelated words entirely", cosine: 0.9)
    #expect(
      MemoryAnswer(modelID: MemoryAnswer.calibratedModel).relevant([similar], to: "cabin wifi").count == 1)
    #expect(MemoryAnswer(modelID: "hashing-v1-256").relevant([similar], to: "cabin wifi").isEmpty)
  }

  @Test func replyQuotesAtMostThreeBestFirstWithDates() {
    let memories = (1...5).map {
      RecalledMemory(
        id: Int64($0), text: "Lisbon trip note \($0)", date: Self.day.addingTimeInterval(Double($0) * 86_400))
    }
    let output = MemoryAnswer().reply(
      to: "what did I say about the Lisbon trip?", from: memories, clock: testClock, language: .english)
    guard case .memories(let answer, let hits) = output else {
      Issue.record("expected memories, got \(output)")
      return
    }
    #expect(hits.map(\.id) == [1, 2, 3])
    let lines = answer.split(separator: "\n")
    #expect(lines.count == 4)
    #expect(lines[1] == "- Lisbon trip note 1 (2025-06-12)")
  }

  @Test func nothingRelevantIsSaidHonestlyInTheUsersLanguage() {
    let output = MemoryAnswer().reply(
      to: "我的护照号码是多少？", from: [RecalledMemory(id: 1, text: "买了新跑鞋")], clock: testClock, language: .chinese)
    #expect(output == .memories(answer: MemoryAnswer.nothingYet(.chinese), hits: []))
  }
}
