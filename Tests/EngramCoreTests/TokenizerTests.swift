import EngramTestSupport
import Testing

@testable import EngramCore

/// The readings' options, one difference at a time (`TokenizerFixtureTests` in
/// EngramAgentTests holds what each reading made of a varied corpus before they merged).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct TokenizerTests {
  @Test func routingReadsAnyScriptDropsApostrophesAndPairsCJK() {
    #expect(
      Tokenizer.routing.terms("Don't say CAFÉ 42 提醒我开会") == [
        "dont", "say", "café", "42", "提醒", "醒我", "我开", "开会",
      ])
    #expect(Tokenizer.routing.terms("加 A1") == ["加", "a1"])
    #expect(Tokenizer.routing.tokens("it’s?") == [.word("it"), .word("s")])
  }

  @Test func intentReadsASCIIWordsFoldsDigitsAndKeepsSymbols() {
    #expect(
      Tokenizer.intent.tokens("Don’t say CAFÉ 6:15 明天〇点？")
        == [
          .word("don't"), .word("say"), .word("caf"), .word("0"), .symbol(":"), .word("0"), .cjk("明天〇点"),
          .symbol("?"),
        ])
    #expect(Tokenizer.intent.tokens("ＡＢＣ１２％") == [.word("abc0"), .symbol("%")])
  }

  @Test func oneOptionChangesOneThing() {
    var options = Tokenizer.routing.options
    options.apostrophes = .kept
    #expect(Tokenizer(options).terms("don’t") == ["don't"])
    options.digits = .foldedToZero
    #expect(Tokenizer(options).terms("a12b3") == ["a0b0"])
    options.symbols = ["?"]
    #expect(Tokenizer(options).terms("why?") == ["why", "?"])
  }

  @Test func indexTermsAreTheIndexTextsWordsWithOrWithoutStopwords() {
    #expect(Tokenizer.indexText("Ann's friends went climbing 周末") == "ann friend went climb 周 末 周末")
    #expect(Tokenizer.indexTerms("What did the walkers walk") == ["what", "did", "the", "walker", "walk"])
    #expect(Tokenizer.indexTerms("What did the walkers walk", droppingStopwords: true) == ["walker", "walk"])
    #expect(Tokenizer.dayText(milliseconds: 1_683_554_160_000) == "8 May 2023")
  }

  @Test func theLexiconsListsAgree() {
    #expect(Lexicon.months.count == 12 && Lexicon.lowercasedMonths[8] == "september")
    #expect(Lexicon.englishNumbers["twelve"] == 12 && Lexicon.chineseDigits["两"] == 2)
    #expect(Lexicon.retractions.contains("never mind") && Lexicon.retractions.contains("算了"))
    #expect(!Lexicon.stopwords.contains("may"))  // a month: turns are indexed with their day
  }
}
