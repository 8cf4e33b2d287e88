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
    let password = testHit(id: 1, text: "The cabin wifi password is trout-42", date: Self.day)
    let unrelated = testHit(id: 2, text: "I bought new running shoes", date: Self.day)
    #expect(
      gate.relevant([unrelated, password], to: "what's the wifi password at the cabin?").map(\.id) == [1])
    #expect(gate.relevant([unrelated], to: "what's the wifi password at the cabin?").isEmpty)
    #expect(gate.relevant([password], to: "hello there").isEmpty)
  }

  @Test func speakerNamesCount() {
    let turn = testHit(id: 3, text: "I've been researching adoption agencies", speaker: "Caroline")
    #expect(MemoryAnswer(minimumCoverage: 1).relevant([turn], to: "What did Caroline research?").count == 1)
  }

  @Test func cosineGateAppliesOnlyToTheCalibratedModel() {
    let similar = testHit(id: 4, text: "unrelated words entirely", cosine: 0.9)
    #expect(
      MemoryAnswer(modelID: MemoryAnswer.calibratedModel).relevant([similar], to: "cabin wifi").count == 1)
    #expect(MemoryAnswer(modelID: "hashing-v1-256").relevant([similar], to: "cabin wifi").isEmpty)
  }

  @Test func replyQuotesAtMostThreeBestFirstWithDates() {
    let memories = (1...5).map {
      testHit(
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
    #expect(
      lines == [
        "Lisbon trip note 1 (2025-06-12)", "- Lisbon trip note 2 (2025-06-13)",
        "- Lisbon trip note 3 (2025-06-14)",
      ])
  }

  /// Once anything passes the gate, the ranking's best items that share a term with the
  /// question are quoted first, in its order, even below the gate; one sharing nothing is not.
  @Test func theRankingsBestItemsLeadOnceAnythingPassesTheGate() {
    let ranked = [
      testHit(id: 1, text: "Our climbing evenings moved to Tuesdays", cosine: 0.2),
      testHit(id: 2, text: "Bought new running shoes", cosine: 0.1),
      testHit(id: 3, text: "The climbing gym membership renews in March", cosine: 0.6),
    ]
    let gate = MemoryAnswer(modelID: MemoryAnswer.calibratedModel)
    let question = "when does the climbing gym membership renew?"
    // The gate alone passes only the third (its cosine); the first shares terms but covers
    // too little of the question.
    #expect(gate.relevant(ranked, to: question).map(\.id) == [3])
    guard
      case .memories(let answer, let hits) = gate.reply(
        to: question, from: ranked, clock: testClock, language: .english)
    else {
      Issue.record("expected memories")
      return
    }
    #expect(hits.map(\.id) == [1, 3])
    #expect(answer.hasPrefix("Our climbing evenings moved to Tuesdays"))
    #expect(!answer.contains("running shoes"))
    // Nothing passes: nothing is quoted, however well ranked.
    #expect(
      gate.reply(to: question, from: Array(ranked.prefix(2)), clock: testClock, language: .english)
        == .memories(answer: MemoryAnswer.nothingYet(.english), hits: []))
  }

  @Test func nothingRelevantIsSaidHonestlyInTheUsersLanguage() {
    let output = MemoryAnswer().reply(
      to: "我的护照号码是多少？", from: [testHit(id: 1, text: "买了新跑鞋")], clock: testClock, language: .chinese)
    #expect(output == .memories(answer: MemoryAnswer.nothingYet(.chinese), hits: []))
  }

  /// Answers lead with the answering sentence of the best item (a long one: an item of up to
  /// 160 characters is quoted whole), then the rest, shortened.
  @Test func theReplyLeadsWithTheSentenceThatAnswers() {
    let said = wallClock(2025, 6, 9, 18, in: Zones.shanghai)
    let best = testHit(
      id: 1,
      text:
        "What a week it has been, with guests every evening and the car in the garage again. The plumber fixed the kitchen tap on Friday. Then we had pizza on the balcony.",
      kind: .message, date: said, speaker: "Ann")
    let long = testHit(
      id: 2,
      text:
        "The plumber also said the boiler pressure is low and we should call the landlord about the radiator in the hall before winter.",
      kind: .message, date: said, speaker: "Bo")
    let output = MemoryAnswer(minimumCoverage: 0.3).reply(
      to: "what did the plumber fix?", from: [best, long], clock: testClock, language: .english)
    let lines = output.text.split(separator: "\n").map(String.init)
    #expect(lines.first == "Ann: The plumber fixed the kitchen tap on Friday. (2025-06-09)")
    #expect(lines.count == 2)
    // The supporting line keeps the item's start (at least 60 characters), cut at a word.
    #expect(lines[1].hasPrefix("- Bo: " + long.text.prefix(60)))
    #expect(lines[1].contains("…"))
    #expect(lines[1].count < 100)
  }

  /// A "when" question leads with the time the sentence names, read against the day it was said.
  @Test func aWhenQuestionLeadsWithTheResolvedDay() {
    let said = wallClock(2025, 6, 11, 15, in: Zones.shanghai)  // a Wednesday
    let turn = testHit(
      id: 1, text: "We finally went to the climbing gym last Saturday!", kind: .message, date: said,
      speaker: "Ann")
    let english = MemoryAnswer(minimumCoverage: 0.3).reply(
      to: "When did Ann go to the climbing gym?", from: [turn], clock: testClock, language: .english)
    #expect(
      english.text == "7 June 2025: Ann: We finally went to the climbing gym last Saturday! (said 2025-06-11)"
    )
    let chinese = testHit(id: 2, text: "我们昨天去爬山了", kind: .message, date: said, speaker: "小王")
    let reply = MemoryAnswer(minimumCoverage: 0.3).reply(
      to: "小王什么时候去爬山的？", from: [chinese], clock: testClock, language: .chinese)
    #expect(reply.text.hasPrefix("2025年6月10日：小王: 我们昨天去爬山了"))
    // Without a time in the sentence, the line is the sentence with its day.
    let plain = testHit(id: 3, text: "The climbing gym membership started", kind: .memory, date: said)
    #expect(
      MemoryAnswer(minimumCoverage: 0.3).reply(
        to: "when did the climbing gym membership start?", from: [plain], clock: testClock, language: .english
      ).text == "The climbing gym membership started (2025-06-11)")
  }

  /// A question about two things: the item covering the second thing answers too, in full.
  @Test func aQuestionAboutTwoThingsGetsBothAnswers() {
    let said = wallClock(2025, 6, 11, 15, in: Zones.shanghai)
    let dog = testHit(id: 1, text: "Our dog is called Biscuit.", date: said)
    let filler = testHit(
      id: 2, text: "Biscuit loves the beach and the dog park near the harbour in summer evenings", date: said)
    let cat = testHit(id: 3, text: "The cat is named Pepper.", date: said)
    let reply = MemoryAnswer(minimumCoverage: 0.2).reply(
      to: "what are the names of the dog and the cat?", from: [dog, filler, cat], clock: testClock,
      language: .english)
    let lines = reply.text.split(separator: "\n").map(String.init)
    #expect(
      lines.prefix(2) == ["Our dog is called Biscuit. (2025-06-11)", "The cat is named Pepper. (2025-06-11)"])
  }

  @Test func pastExpressionsResolveAgainstTheDayTheyWereSaid() {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let said = Date(timeIntervalSince1970: 1_683_554_160)  // Monday 8 May 2023, 13:56 UTC
    func read(_ text: String) -> String? {
      PastDateResolver.resolve(text, said: said, calendar: calendar).map {
        PastDateResolver.describe($0, calendar: calendar, language: .english)
      }
    }
    #expect(read("I went yesterday") == "7 May 2023")
    #expect(read("the day before yesterday it rained") == "6 May 2023")
    #expect(read("last Saturday was fun") == "6 May 2023")
    #expect(read("last Monday I started") == "1 May 2023")
    #expect(read("we met two weeks ago") == "the week of 24 April 2023")
    #expect(read("3 days ago") == "5 May 2023")
    #expect(read("last week we painted") == "the week of 1 May 2023")
    #expect(read("last weekend") == "the weekend of 6 May 2023")
    #expect(read("a few months ago") == "February 2023")
    #expect(read("last year") == "2022")
    #expect(read("Last month, finally!") == "April 2023")
    #expect(read("I'll go next week") == nil)
    #expect(read("today is great") == nil)
    #expect(read("我们去年去过") == "2022")
    #expect(
      PastDateResolver.resolve("昨天", said: said, calendar: calendar).map {
        PastDateResolver.describe($0, calendar: calendar, language: .chinese)
      } == "2023年5月7日")
  }
}
