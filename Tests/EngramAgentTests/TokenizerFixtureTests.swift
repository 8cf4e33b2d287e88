import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram
@testable import EngramAgent
@testable import EngramStore

/// What the five tokenizers (`FTSText.indexText`, `RoutingTokenizer`, `IntentFeatures.tokenize`,
/// `Reranker.termSet`, `MemoryAnswer.contentTerms`) and the word lists made of a varied corpus
/// before they became one `Tokenizer` and one `Lexicon` in EngramCore: `tokenizer-fixture.jsonl`
/// was written by that code (commit "Tokenizer fixture ..."). The FTS index text must stay byte
/// for byte (existing databases are not reindexed), and routing, the intent model's features,
/// the re-ranker's terms and the answer's content terms must not move. Regenerating it
/// (`ENGRAM_WRITE_TOKENIZER_FIXTURE=1`) is for a deliberate change that rebuilds the indexes.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct TokenizerFixtureTests {
  static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/tokenizer-fixture.jsonl")

  /// One text's readings, as the fixture holds them.
  struct Reading: Codable, Equatable {
    var text: String
    var time: Int64
    var fts: String
    var ftsDay: String
    var ftsQuery: [String]
    var routing: [String]
    var intent: [String]
    /// The intent model's hashed features, as `digest(_:)` (the lists would make the fixture
    /// megabytes).
    var features: String
    var wordFeatures: String
    var content: [String]
    var contentAll: [String]
    var terms: [String]
    var termsNoStop: [String]
    var hasNumber: Bool
    var hasTemporalCue: Bool
    var retraction: Bool
    var chineseNumeral: Int?
  }

  /// Raw bytes (not always UTF-8) and their index text, both as hex.
  struct ByteReading: Codable, Equatable {
    var bytes: String
    var fts: String
  }

  static func read(_ text: String, time: Int64) -> Reading {
    Reading(
      text: text, time: time, fts: Tokenizer.indexText(text), ftsDay: FTSText.indexText(text, time: time),
      ftsQuery: FTSQuery.terms(for: text), routing: Tokenizer.routing.terms(text),
      intent: Tokenizer.intent.tokens(text).map(\.key), features: digest(IntentFeatures.extract(text)),
      wordFeatures: digest(IntentFeatures.wordFeatures(text)),
      content: MemoryAnswer.contentTerms(text).sorted(),
      contentAll: MemoryAnswer.contentTerms(text, keepStopwords: true).sorted(),
      terms: Tokenizer.indexTerms(text).sorted(),
      termsNoStop: Tokenizer.indexTerms(text, droppingStopwords: true).sorted(),
      hasNumber: Reranker.hasNumber(text), hasTemporalCue: Reranker.hasTemporalCue(text),
      retraction: ConversationIntent.isPlainRetraction(text), chineseNumeral: ChineseNumeral.value(of: text))
  }

  static func read(bytes: [UInt8]) -> ByteReading {
    var output: [UInt8] = []
    var stemmer = EnglishStemmer()
    bytes.withUnsafeBufferPointer { Tokenizer.normalize($0, into: &output, stemmer: &stemmer) }
    return ByteReading(bytes: hex(bytes), fts: hex(output))
  }

  /// A list of features as its count and an FNV-1a digest of its values in order.
  static func digest(_ features: [Int32]) -> String {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325
    for feature in features {
      for shift in stride(from: 0, to: 32, by: 8) {
        value ^= UInt64(UInt32(bitPattern: feature) >> UInt32(shift) & 0xFF)
        value &*= 0x100_0000_01b3
      }
    }
    return "\(features.count):" + String(value, radix: 16)
  }

  static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  @Test func everyTokenizerReadsTheCorpusAsBefore() throws {
    let corpus = TokenizerCorpus.texts()
    let byteCorpus = TokenizerCorpus.byteStrings()
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    if ProcessInfo.processInfo.environment["ENGRAM_WRITE_TOKENIZER_FIXTURE"] == "1" {
      var lines: [String] = []
      for (index, text) in corpus.enumerated() {
        let time = TokenizerCorpus.time(index)
        lines.append(String(decoding: try encoder.encode(Self.read(text, time: time)), as: UTF8.self))
      }
      for bytes in byteCorpus {
        lines.append(String(decoding: try encoder.encode(Self.read(bytes: bytes)), as: UTF8.self))
      }
      try (lines.joined(separator: "\n") + "\n").write(to: Self.fixture, atomically: true, encoding: .utf8)
    }
    let lines = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == corpus.count + byteCorpus.count)
    let decoder = JSONDecoder()
    var differing = 0
    for (index, line) in lines.enumerated() {
      let data = Data(line.utf8)
      if index < corpus.count {
        let expected = try decoder.decode(Reading.self, from: data)
        #expect(expected.text == corpus[index])
        let actual = Self.read(expected.text, time: expected.time)
        if actual != expected { differing += 1 }
        #expect(actual == expected)
      } else {
        let expected = try decoder.decode(ByteReading.self, from: data)
        let actual = Self.read(bytes: byteCorpus[index - corpus.count])
        if actual != expected { differing += 1 }
        #expect(actual == expected)
      }
      if differing > 20 { break }
    }
    #expect(differing == 0)
  }
}

/// The texts the fixture is made of: the intent corpus (real requests in English and
/// Chinese), odd cases written out, and seeded random mixtures of fragments (English,
/// Chinese, Japanese, Korean, digits, punctuation, emoji, combining marks, full-width forms,
/// control and unassigned scalars, FTS query syntax).
enum TokenizerCorpus {
  static let seeds: [String] = [
    "", " ", "\n\t", "?!.. --", "Ann's friends went climbing 周末攀岩",
    "Ann: We WALKED to the Knights' castle, walking 3 miles!", "out of the Blue at 3PM",
    "Caroline's and Eleanor’s dogs; it's", "don't 'sup rock'n'roll", "Café naïve_résumé x² Ωmega",
    "我 loves 攀岩。好", "カタ ひら 한국", "我周末去攀岩了", "提醒我明天下午三点开会", "十二月二十五日 一月 二〇二七年",
    "12月25号 3点半", "Remind me at 6:15 明天开会？ 17% of 2350", "ＡＢＣ１２？ ＋－×÷＝ ％：", "A1 a1b2c3 007 3.14 1,000,000",
    "\"out of the blue\" AND (walk* OR run) NOT -x NEAR(a b) ^col: title:foo", "\"unpaired quote", "\"\"",
    "a\"b\"c",
    "e\u{301}cole cafe\u{301} n\u{303}", "\u{301}\u{302} leading marks", "👍🏽 👨‍👩‍👧 🇨🇳 ✈️ #️⃣", "ﬁne ﬂow Ǆ ǅ",
    "İstanbul ΟΔΟΣ ẞ straße", "שלום مرحبا नमस्ते", "\u{200B}zero\u{200D}width\u{FEFF}bom",
    "\u{0}nul\u{7F}del\u{1B}[0m",
    "\u{FFFD}replacement \u{FFFE}\u{FFFF}", "\u{E000}private\u{10FFFF}", "〇〇七 々 〆", "ｶﾀｶﾅ half-width",
    "𠀀𪜀 ext B",
    "never mind", "Never Mind!", "cancel.", "forget it", "算了", "取消", "不用了", "stop", "no",
    "January February March April May June July August September October November December",
    "jan feb mar apr jun jul aug sep sept oct nov dec",
    "one two three four five six seven eight nine ten eleven twelve",
    "twenty thirty hundred dozen couple few several once twice", "零一二两三四五六七八九十百千万亿",
    "thirteen forty thousand zero", "十二", "二十五", "三百零五", "二〇二七", "一千二", "两", "十", "一百", "九千九百九十九",
    "What is the wifi password at the cabin?", "What did Caroline research?", "我的车停在哪了？", "我的猫呢",
    "hey, good morning!", "WALKING walked walks walker's", "generously generalization", "42nd 1st 2nd 3rd",
    "x'", "'x", "''", "it’s", "rock’n’roll", "’s", "s's's", "Ann'S", "a-b_c.d/e\\f|g",
    "tab\tsep\u{A0}nbsp\u{3000}ideographic space", "line\u{2028}sep\u{2029}para", "你好，世界！", "「引号」『书名』【括号】",
    "１２３４５６７８９０", "ⅠⅡⅢ ① ½ ²", "٣٤٥ ๓๔", "Ａｎｎ’ｓ", "mixed中文English混合123数字", "a中b文c",
    "https://example.com/path?q=1&r=2#frag", "user@example.com", "C++ C# .NET", "$5.99 €10 ¥100 £3",
    "3:45pm 10:00 a.m. 6/20 2024-05-01", "😀😀😀", "中", "中文", "中文字", "ｈｅｌｌｏ　ｗｏｒｌｄ",
  ]

  static let fragments: [String] = [
    "remind", "me", "to", "call", "mom", "tomorrow", "at", "6pm", "the", "Walking", "walked", "Ann's", "it’s",
    "don't", "what", "when", "where", "May", "September", "twelve", "two", "hundred", "2023", "3.5", "42",
    "提醒", "我", "明天", "开会", "的", "了", "吗", "周末", "攀岩", "十二", "一月", "三点", "〇", "二〇二七",
    "カタカナ", "ひらがな", "한국어", "é", "e\u{301}", "ß", "İ", "Ω", "ﬁ", "ｶ", "Ａ", "１", "？", "。", "，", "！",
    "?", "!", ".", ",", ";", ":", "'", "’", "\"", "-", "*", "(", ")", "^", "%", "+", "/", "×", "÷", "=", "#",
    "👍", "👍🏽", "👨‍👩‍👧", "🇨🇳", "\u{200D}", "\u{FEFF}", "\u{0}", "\u{FFFD}", "\u{E000}", "\u{301}", "𠀀",
    "AND", "OR", "NOT", "NEAR", "col:", "title:", "never mind", "算了", "cancel",
  ]

  static let separators: [String] = ["", " ", " ", " ", "  ", "\n", "\t", "\u{3000}", ",", "-", "'"]

  /// The intent corpus's texts, the seeds, then 1,500 seeded mixtures.
  static func texts() -> [String] {
    var texts = IntentCorpus.examples.map(\.text) + seeds
    var random = SplitMix(seed: 48)
    for _ in 0..<1500 {
      var text = ""
      for _ in 0..<(1 + random.next(12)) {
        text += fragments[random.next(fragments.count)] + separators[random.next(separators.count)]
      }
      texts.append(text)
    }
    return texts
  }

  /// Byte strings for the index's UTF-8 reader, malformed ones among them.
  static func byteStrings() -> [[UInt8]] {
    let pieces: [[UInt8]] = [
      Array("walking ".utf8), Array("Ann's ".utf8), Array("周末".utf8), Array("한".utf8), Array("café".utf8),
      [0xFF], [0xFE], [0x80], [0xBF], [0xC0, 0x80], [0xC3], [0xE4, 0xB8], [0xE4], [0xED, 0xA0, 0x80],
      [0xF0, 0x9F, 0x98], [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0x00], [0x20], [0x27],
      Array("’s".utf8), Array("12".utf8), Array("AND".utf8),
    ]
    var random = SplitMix(seed: 4848)
    var strings: [[UInt8]] = pieces
    for _ in 0..<400 {
      var bytes: [UInt8] = []
      for _ in 0..<(1 + random.next(8)) { bytes += pieces[random.next(pieces.count)] }
      strings.append(bytes)
    }
    return strings
  }

  /// A time (milliseconds since the epoch) for the `index`th text: days from before 1970 to 2100.
  static func time(_ index: Int) -> Int64 {
    var random = SplitMix(seed: UInt64(index) &+ 7)
    return Int64(random.next(5_000_000)) * 1_000_000 - 86_400_000 * 365 * 2 + Int64(random.next(86_400_000))
  }

  /// SplitMix64: a small seeded generator, the same on every platform.
  struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      z ^= z >> 31
      return Int(z % UInt64(bound))
    }
  }
}
