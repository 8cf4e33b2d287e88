import EngramCore

/// Turns what a person typed into a safe FTS5 MATCH expression.
///
/// The text is read with the index's own scanner and stemmer (`Tokenizer.IndexScanner`,
/// `EnglishStemmer`), so "walked" finds "walking". Every term becomes a quoted string ("..."
/// with inner quotes doubled), so FTS syntax in the input (parentheses, AND/OR/NOT/NEAR, `*`,
/// `-`, `:`, `^`, column filters) is searched as plain text and can never raise a syntax
/// error. Words between a pair of double quotes form one phrase, stopwords included (the
/// index keeps them, so "out of the blue" matches those four words in that order); an
/// unpaired quote is plain text. Outside phrases, English stopwords (`Lexicon.stopwords`) are
/// dropped unless nothing else would remain. A CJK run of up to `maxCJKPhrase` characters becomes one phrase of its bigrams (a single
/// character stays a unigram), matching what `engram_fts_text` indexes; a longer run (a CJK
/// sentence) contributes its bigrams as separate terms, so partial matches still rank.
/// Terms are joined with OR: BM25 then ranks documents by how many terms they match and
/// how rare those are.
public enum FTSQuery {
  /// Longest CJK run kept as one phrase.
  public static let maxCJKPhrase = 4

  /// The terms of `text` (each already a quoted FTS5 string), in first-seen order without
  /// repeats. Empty when nothing searchable remains.
  public static func terms(for text: String) -> [String] {
    var words: [(term: String, isStopword: Bool)] = []
    var phrases: [String] = []
    var cjkTerms: [String] = []
    var stemmer = EnglishStemmer()
    let segments = text.split(separator: "\"", omittingEmptySubsequences: false)
    for (position, segment) in segments.enumerated() {
      let isPhrase = position % 2 == 1 && position != segments.count - 1
      var phraseWords: [String] = []
      var segment = String(segment)
      segment.withUTF8 { input in
        var tokenizer = Tokenizer.IndexScanner(input)
        while let token = tokenizer.next() {
          switch token {
          case .word(let range, let ascii):
            let word = UnsafeBufferPointer(rebasing: input[range])
            let term = normalizedWord(word, ascii: ascii, stemmer: &stemmer)
            if isPhrase {
              phraseWords.append(term)
            } else {
              words.append((term, ascii && Lexicon.stopwords.contains(lowercasedASCII(word))))
            }
          case .cjkRun(let range):
            cjkTerms += self.cjkTerms(UnsafeBufferPointer(rebasing: input[range]))
          }
        }
      }
      if phraseWords.count == 1 {
        words.append((phraseWords[0], false))
      } else if phraseWords.count > 1 {
        phrases.append(quote(phraseWords.joined(separator: " ")))
      }
    }
    let meaningful = words.filter { !$0.isStopword }
    let keptWords = meaningful.isEmpty && phrases.isEmpty && cjkTerms.isEmpty ? words : meaningful
    let terms = keptWords.map { quote($0.term) } + phrases + cjkTerms
    var seen: Set<String> = []
    return terms.filter { seen.insert($0.lowercased()).inserted }
  }

  /// The MATCH expression for `text`, or nil when it holds nothing searchable (empty or
  /// punctuation only).
  public static func matchExpression(for text: String) -> String? {
    let terms = terms(for: text)
    return terms.isEmpty ? nil : terms.joined(separator: " OR ")
  }

  /// `text` as an FTS5 string literal.
  public static func quote(_ text: String) -> String {
    // Words rarely hold a quote; skip the (Foundation, slow) replacement when none does.
    guard text.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + text + "\"" }
    return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// A word as the index holds it: ASCII lowercased and stemmed, other words as they are.
  private static func normalizedWord(
    _ word: UnsafeBufferPointer<UInt8>, ascii: Bool, stemmer: inout EnglishStemmer
  ) -> String {
    guard ascii else { return String(decoding: word, as: UTF8.self) }
    var output: [UInt8] = []
    Tokenizer.appendIndexWord(word, to: &output, stemmer: &stemmer)
    return String(decoding: output, as: UTF8.self)
  }

  private static func lowercasedASCII(_ word: UnsafeBufferPointer<UInt8>) -> String {
    String(decoding: word.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
  }

  /// A CJK run's terms: one character as itself, up to `maxCJKPhrase` characters as one
  /// phrase of their bigrams, a longer run as its bigrams.
  private static func cjkTerms(_ run: UnsafeBufferPointer<UInt8>) -> [String] {
    var characters: [String] = []
    var index = 0
    while index < run.count {
      let length = Tokenizer.decodeUTF8(run, at: index).length
      characters.append(
        String(decoding: UnsafeBufferPointer(rebasing: run[index..<(index + length)]), as: UTF8.self))
      index += length
    }
    guard characters.count > 1 else { return characters.map(quote) }
    let bigrams = (0..<(characters.count - 1)).map { characters[$0] + characters[$0 + 1] }
    return characters.count <= maxCJKPhrase ? [quote(bigrams.joined(separator: " "))] : bigrams.map(quote)
  }
}
