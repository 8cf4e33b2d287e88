import Testing

@testable import EngramStore

@Suite struct FTSQueryTests {
  @Test func quotesWordsAndDropsStopwords() {
    #expect(FTSQuery.matchExpression(for: "What is the weather in Paris?") == #""weather" OR "Paris""#)
  }

  @Test func keepsStopwordsWhenNothingElseRemains() {
    #expect(FTSQuery.matchExpression(for: "to be or") == #""to" OR "be" OR "or""#)
  }

  @Test func turnsCJKIntoBigramPhrases() {
    #expect(FTSQuery.matchExpression(for: "下午三点") == #""下午 午三 三点""#)
    #expect(FTSQuery.matchExpression(for: "攀岩") == #""攀岩""#)
    #expect(FTSQuery.matchExpression(for: "我") == #""我""#)
    #expect(FTSQuery.matchExpression(for: "Swift编程") == #""Swift" OR "编程""#)
  }

  @Test func splitsMixedASCIIAndOtherScripts() {
    #expect(
      FTSQuery.matchExpression(for: "Café naïve_résumé 42nd, x²; Ωmega")
        == #""Café" OR "naïve" OR "résumé" OR "42nd" OR "x²" OR "Ωmega""#)
  }

  @Test func longCJKRunsContributeBigrams() {
    #expect(FTSQuery.terms(for: "我周末去攀岩").count == 5)
  }

  @Test func emptyOrPunctuationOnlyGivesNil() {
    #expect(FTSQuery.matchExpression(for: "") == nil)
    #expect(FTSQuery.matchExpression(for: "  ?!()\"*:^- ") == nil)
  }

  @Test func removesRepeats() {
    #expect(FTSQuery.matchExpression(for: "Paris paris PARIS") == #""Paris""#)
  }

  @Test func quoteDoublesInnerQuotes() {
    #expect(FTSQuery.quote(#"say "hi""#) == #""say ""hi""""#)
  }
}
