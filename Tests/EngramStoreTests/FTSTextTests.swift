import EngramCore
import EngramTestSupport
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct FTSTextTests {
  @Test func expandsCJKRunsIntoUnigramsAndBigrams() {
    #expect(FTSText.indexText("我周末去攀岩了") == "我 周 末 去 攀 岩 了 我周 周末 末去 去攀 攀岩 岩了")
    #expect(FTSText.indexText("开会") == "开 会 开会")
    #expect(FTSText.indexText("我") == "我")
  }

  @Test func lowercasesAndStemsEnglishWords() {
    #expect(
      FTSText.indexText("Ann: We WALKED to the Knights' castle, walking 3 miles!")
        == "ann we walk to the knight castl walk 3 mile")
    // Stopwords stay (phrases that hold one still match); words with digits are lowercased.
    #expect(FTSText.indexText("out of the Blue at 3PM") == "out of the blue at 3pm")
  }

  @Test func dropsPossessivesWithTheirApostrophe() {
    #expect(FTSText.indexText("Caroline's and Eleanor’s dogs; it's") == "carolin and eleanor dog it")
    // Not a possessive: the apostrophe only separates.
    #expect(FTSText.indexText("don't 'sup rock'n'roll") == "don t sup rock n roll")
  }

  @Test func keepsOtherScriptsForTheTokenizer() {
    // unicode61 folds their case and diacritics; they are not stemmed.
    #expect(FTSText.indexText("Café naïve_résumé x² Ωmega") == "Café naïve résumé x² Ωmega")
    #expect(FTSText.indexText("") == "")
    #expect(FTSText.indexText("?!.. --") == "")
  }

  @Test func handlesEachRunSeparately() {
    #expect(FTSText.indexText("我 loves 攀岩。好") == "我 love 攀 岩 攀岩 好")
  }

  @Test func coversKanaAndHangul() {
    #expect(FTSText.indexText("カタ") == "カ タ カタ")
    #expect(FTSText.indexText("ひら") == "ひ ら ひら")
    #expect(FTSText.indexText("한국") == "한 국 한국")
  }

  @Test func putsTheUTCDayFirst() {
    // 2023-05-08 13:56 UTC.
    #expect(FTSText.indexText("Ann: hi", time: 1_683_554_160_000) == "8 may 2023 ann hi")
    #expect(Tokenizer.dayText(milliseconds: 0) == "1 January 1970")
    #expect(Tokenizer.dayText(milliseconds: -1) == "31 December 1969")
    #expect(Tokenizer.dayText(milliseconds: 951_782_400_000) == "29 February 2000")
    #expect(Tokenizer.dayText(milliseconds: 1_703_980_800_000 + 86_399_999) == "31 December 2023")
  }

  @Test func survivesInvalidUTF8() {
    let bytes: [UInt8] = [0xE4, 0xBD, 0xA0, 0xFF, 0xE5, 0xA5, 0xBD, 0xE5, 0xA5, 0x41]
    var output: [UInt8] = []
    var stemmer = EnglishStemmer()
    bytes.withUnsafeBufferPointer { Tokenizer.normalize($0, into: &output, stemmer: &stemmer) }
    // 你 and 好 are separate runs (the 0xFF byte splits them); the truncated bytes separate.
    #expect(output == Array("你 好 a".utf8))
  }

  @Test func sqlFunctionMatchesSwift() throws {
    let connection = try Connection(path: ":memory:")
    let text = "明天下午三点开会 at 3pm, Ann's meetings"
    let viaSQL = try connection.scalarString("SELECT engram_fts_text(?1)", [.text(text)])
    #expect(viaSQL == FTSText.indexText(text))
    let dated = try connection.scalarString(
      "SELECT engram_fts_text(?1, ?2)", [.text(text), .integer(1_683_554_160_000)])
    #expect(dated == FTSText.indexText(text, time: 1_683_554_160_000))
    #expect(try connection.scalarString("SELECT engram_fts_text(?1, NULL)", [.text(text)]) == viaSQL)
    #expect(try connection.scalarString("SELECT engram_fts_text('Plain')") == "plain")
    #expect(try connection.scalarString("SELECT engram_fts_text('')") == "")
    #expect(try connection.scalarString("SELECT engram_fts_text(NULL)") == nil)
    #expect(try connection.scalarString("SELECT engram_fts_text(NULL, 0)") == nil)
  }

  /// The SQL function keeps its buffers and the last day's terms from row to row: every row
  /// still gets exactly what `indexText` gives it, across days, empty texts and NULL times.
  @Test func sqlFunctionRowAfterRowMatchesSwift() throws {
    let connection = try Connection(path: ":memory:")
    let texts = [
      "Walking to the lake", "", "明天下午三点开会", "ok", "The generously organized meetings' notes",
      "x² Café", "?!", String(repeating: "climbing ", count: 40),
    ]
    let day: Int64 = 86_400_000
    let times: [Int64?] = [
      1_683_554_160_000, 1_683_554_160_001, nil, 1_683_554_160_000 + day, -1, 0, nil, 5 * day,
    ]
    let statement = try connection.prepare("SELECT engram_fts_text(?1, ?2)")
    var rows = 0
    for round in 0..<3 {
      for (index, text) in texts.enumerated() {
        let time = times[(index + round) % times.count]
        try statement.bind(text, at: 1)
        try statement.bind(time, at: 2)
        let viaSQL = try statement.first { $0.string(at: 0) }
        #expect(viaSQL == FTSText.indexText(text, time: time), "\(text) \(String(describing: time))")
        rows += 1
      }
    }
    #expect(rows == 3 * texts.count)
  }
}
