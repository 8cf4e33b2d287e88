import EngramTestSupport
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct FTSQueryTests {
  @Test func stemsWordsAndDropsStopwords() {
    #expect(FTSQuery.matchExpression(for: "What is the weather in Paris?") == #""weather" OR "pari""#)
    #expect(
      FTSQuery.matchExpression(for: "Where did Rosalind's friends go hiking?")
        == #""rosalind" OR "friend" OR "go" OR "hike""#)
  }

  @Test func keepsStopwordsWhenNothingElseRemains() {
    #expect(FTSQuery.matchExpression(for: "to be or") == #""to" OR "be" OR "or""#)
  }

  @Test func quotedWordsFormOnePhraseWithTheirStopwords() {
    #expect(FTSQuery.matchExpression(for: #"the "out of the Blue" call"#) == #""call" OR "out of the blue""#)
    // One quoted word is a plain term, kept even when it is a stopword.
    #expect(FTSQuery.matchExpression(for: #"what about "the" band"#) == #""the" OR "band""#)
    // An unpaired quote is plain text.
    #expect(FTSQuery.matchExpression(for: #"the "out of town"#) == #""town""#)
  }

  @Test func turnsCJKIntoBigramPhrases() {
    #expect(FTSQuery.matchExpression(for: "下午三点") == #""下午 午三 三点""#)
    #expect(FTSQuery.matchExpression(for: "攀岩") == #""攀岩""#)
    #expect(FTSQuery.matchExpression(for: "我") == #""我""#)
    #expect(FTSQuery.matchExpression(for: "Swift编程") == #""swift" OR "编程""#)
    // A stopword beside Chinese is dropped: the Chinese term remains.
    #expect(FTSQuery.matchExpression(for: "the 攀岩") == #""攀岩""#)
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
    #expect(FTSQuery.matchExpression(for: #""""#) == nil)
  }

  @Test func removesRepeats() {
    #expect(FTSQuery.matchExpression(for: "Paris paris PARIS walks walking") == #""pari" OR "walk""#)
  }

  @Test func quoteDoublesInnerQuotes() {
    #expect(FTSQuery.quote(#"say "hi""#) == #""say ""hi""""#)
  }
}
