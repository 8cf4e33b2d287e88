/// Splits text into the tokens rule routing compares.
///
/// Latin text becomes lowercased words (letters and digits); a run of CJK ideographs becomes its
/// character bigrams (a single ideograph stays a unigram), so a Chinese phrase matches when the
/// text contains it or all its pairs. Punctuation and whitespace separate tokens.
public enum RoutingTokenizer {
  /// The tokens of `text`, in order, with repeats.
  public static func tokens(_ text: String) -> [String] {
    var tokens: [String] = []
    var word = ""
    var cjkRun: [Character] = []

    func flushWord() {
      if !word.isEmpty { tokens.append(word.lowercased()) }
      word = ""
    }
    func flushCJK() {
      if cjkRun.count == 1 {
        tokens.append(String(cjkRun[0]))
      } else if cjkRun.count > 1 {
        for index in 0..<(cjkRun.count - 1) { tokens.append(String(cjkRun[index...index + 1])) }
      }
      cjkRun.removeAll()
    }

    for character in text {
      if character.unicodeScalars.first?.isCJKIdeograph == true {
        flushWord()
        cjkRun.append(character)
      } else if character.isLetter || character.isNumber || character == "'" {
        flushCJK()
        if character != "'" { word.append(character) }
      } else {
        flushWord()
        flushCJK()
      }
    }
    flushWord()
    flushCJK()
    return tokens
  }

  /// Whether every token of `phrase` appears in `text`'s tokens (an empty phrase never matches).
  public static func phrase(_ phrase: String, matches textTokens: Set<String>) -> Bool {
    let phraseTokens = tokens(phrase)
    return !phraseTokens.isEmpty && phraseTokens.allSatisfy(textTokens.contains)
  }
}
