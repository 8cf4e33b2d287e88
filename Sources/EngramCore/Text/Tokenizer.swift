/// Engram's one tokenizer: it splits text into words and CJK runs for every reader of text.
///
/// Two readings share it. `tokens(_:)` and `terms(_:)` read a `String` with the options of
/// the reader: rule routing (`routing`), the intent model and the answer's content terms
/// (`intent`). `indexText(_:time:)`, `normalize(_:time:into:stemmer:)` and
/// `indexTerms(_:droppingStopwords:)` read UTF-8 bytes for the keyword index (FTS text and
/// queries, the re-ranker's terms), stemmed and without allocation per word, because the
/// index calls them for every row written.
///
/// Where two readers differ on purpose (one reads any script, the other ASCII words and
/// symbols; one drops apostrophes, the other keeps them), the difference is an option, so
/// each reader's tokens are what they were when it had its own tokenizer.
public struct Tokenizer: Sendable, Hashable {
  /// How a `Tokenizer` reads a `String`.
  public struct Options: Sendable, Hashable {
    /// The unit text is read in.
    public enum Unit: Sendable, Hashable {
      /// Grapheme clusters (`Character`), each word lowercased once it ends.
      case characters
      /// The Unicode scalars of the lowercased text, full-width forms (？ ％ Ａ １) read as
      /// their ASCII equivalents, 。 as "." and ， as ",".
      case scalars
    }

    /// Which units make up a word.
    public enum Letters: Sendable, Hashable {
      /// Letters and numbers of any script.
      case anyScript
      /// ASCII letters; other scripts separate words.
      case ascii
    }

    /// What becomes of ASCII digits.
    public enum Digits: Sendable, Hashable {
      /// Kept in the word as they are (with `Letters.anyScript`, digits are word units).
      case kept
      /// Each run of digits in a word becomes one `0` ("6:15" is "0", "0"; "a1b22" is "a0b0").
      case foldedToZero
    }

    /// What becomes of an apostrophe inside a word.
    public enum Apostrophes: Sendable, Hashable {
      /// "'" joins the word and is dropped ("don't" is "dont"); "’" separates.
      case dropped
      /// "'" and "’" join the word as "'" ("don’t" is "don't").
      case kept
    }

    /// The unit text is read in.
    public var unit: Unit
    /// Which units make up a word.
    public var letters: Letters
    /// What becomes of ASCII digits.
    public var digits: Digits
    /// What becomes of an apostrophe inside a word.
    public var apostrophes: Apostrophes
    /// Whether 〇 (the ideographic zero, a number elsewhere) joins a CJK run.
    public var zeroJoinsCJK: Bool
    /// Symbols kept as tokens of their own (everything else that is neither word nor CJK
    /// separates tokens and is dropped).
    public var symbols: Set<Character>

    /// Options of a tokenizer (see each property).
    public init(
      unit: Unit, letters: Letters, digits: Digits, apostrophes: Apostrophes, zeroJoinsCJK: Bool = false,
      symbols: Set<Character> = []
    ) {
      self.unit = unit
      self.letters = letters
      self.digits = digits
      self.apostrophes = apostrophes
      self.zeroJoinsCJK = zeroJoinsCJK
      self.symbols = symbols
    }
  }

  /// One piece of text.
  public enum Token: Sendable, Hashable {
    /// A word, lowercased.
    case word(String)
    /// A run of CJK ideographs.
    case cjk(String)
    /// A symbol of `Options.symbols`.
    case symbol(Character)
  }

  /// How this tokenizer reads text.
  public let options: Options

  /// A tokenizer reading text with `options`.
  public init(_ options: Options) { self.options = options }

  /// Rule routing's reading: lowercased words of letters and numbers in any script
  /// (apostrophes dropped), CJK ideograph runs; `terms(_:)` gives the runs as bigrams.
  public static let routing = Tokenizer(
    Options(unit: .characters, letters: .anyScript, digits: .kept, apostrophes: .dropped))

  /// The intent model's reading: lowercased ASCII words with apostrophes, digit runs as `0`,
  /// CJK ideograph runs (〇 included), and the symbols that carry meaning in a request
  /// (? % : + - * / × ÷ =); full-width forms count as ASCII.
  public static let intent = Tokenizer(
    Options(
      unit: .scalars, letters: .ascii, digits: .foldedToZero, apostrophes: .kept, zeroJoinsCJK: true,
      symbols: Set("?%:+-*/×÷=")))

  /// The tokens of `text`, in order, with repeats.
  /// - Complexity: O(n) in the length of `text`.
  public func tokens(_ text: String) -> [Token] {
    var reader = Reader(options: options)
    switch options.unit {
    case .characters:
      for character in text { reader.read(character) }
    case .scalars:
      for scalar in text.lowercased().unicodeScalars { reader.read(Character(Self.asciiEquivalent(scalar))) }
    }
    reader.flush()
    return reader.tokens
  }

  /// The terms of `text`, in order, with repeats: each word, each symbol, and each CJK run's
  /// character bigrams (a run of one character as itself), so a Chinese phrase matches when
  /// a text holds it or all its pairs.
  public func terms(_ text: String) -> [String] {
    var terms: [String] = []
    for token in tokens(text) {
      switch token {
      case .word(let word): terms.append(word)
      case .symbol(let symbol): terms.append(String(symbol))
      case .cjk(let run):
        let characters = Array(run)
        if characters.count == 1 {
          terms.append(String(characters[0]))
        } else {
          for index in 0..<(characters.count - 1) { terms.append(String(characters[index...index + 1])) }
        }
      }
    }
    return terms
  }

  /// Whether every term of `phrase` is among `textTerms` (an empty phrase never matches).
  public func phrase(_ phrase: String, matches textTerms: Set<String>) -> Bool {
    let phraseTerms = terms(phrase)
    return !phraseTerms.isEmpty && phraseTerms.allSatisfy(textTerms.contains)
  }

  /// Full-width ASCII forms (？ ％ ： ＋ and full-width digits and letters) as ASCII; 。 as "."
  /// and ， as ",".
  public static func asciiEquivalent(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
    if (0xFF01...0xFF5E).contains(scalar.value), let ascii = Unicode.Scalar(scalar.value - 0xFEE0) {
      return ascii
    }
    if scalar == "。" { return "." }
    if scalar == "，" { return "," }
    return scalar
  }

  /// The state of one `tokens(_:)` call: the word and the CJK run being read.
  private struct Reader {
    let options: Options
    var tokens: [Token] = []
    var word = ""
    var run = ""

    init(options: Options) { self.options = options }

    mutating func read(_ character: Character) {
      let first = character.unicodeScalars.first!
      if first.isCJKIdeograph || (options.zeroJoinsCJK && character == "〇") {
        endWord()
        run.append(character)
      } else if isApostrophe(character) {
        endRun()
        if options.apostrophes == .kept { word.append("'") }
      } else if options.digits == .foldedToZero, first.isASCII, first.properties.numericType != nil {
        endRun()
        if !word.hasSuffix("0") || word.isEmpty { word.append("0") }
      } else if isLetter(character, first) {
        endRun()
        word.append(character)
      } else {
        flush()
        if options.symbols.contains(character) { tokens.append(.symbol(character)) }
      }
    }

    func isApostrophe(_ character: Character) -> Bool {
      switch options.apostrophes {
      case .dropped: character == "'"
      case .kept: character == "'" || character == "’"
      }
    }

    func isLetter(_ character: Character, _ first: Unicode.Scalar) -> Bool {
      switch options.letters {
      case .anyScript: character.isLetter || character.isNumber
      case .ascii: first.isASCII && first.properties.isAlphabetic
      }
    }

    mutating func endWord() {
      guard !word.isEmpty else { return }
      tokens.append(.word(options.unit == .characters ? word.lowercased() : word))
      word = ""
    }

    mutating func endRun() {
      guard !run.isEmpty else { return }
      tokens.append(.cjk(run))
      run = ""
    }

    mutating func flush() {
      endWord()
      endRun()
    }
  }
}

extension Unicode.Scalar {
  /// Whether this is a CJK ideograph (CJK Unified Ideographs, Extensions A and B, and
  /// Compatibility Ideographs): what marks text as Chinese and forms the CJK runs of
  /// `Tokenizer.tokens(_:)`.
  public var isCJKIdeograph: Bool {
    switch value {
    case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0xF900...0xFAFF, 0x20000...0x2A6DF: return true
    default: return false
    }
  }
}
