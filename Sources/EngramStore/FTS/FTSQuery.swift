/// Turns what a person typed into a safe FTS5 MATCH expression.
///
/// Every word becomes a quoted string ("..." with inner quotes doubled), so FTS syntax in
/// the input (quotes, parentheses, AND/OR/NOT/NEAR, `*`, `-`, `:`, `^`, column filters) is
/// searched as plain text and can never raise a syntax error. English stopwords are dropped
/// unless every word is one. A CJK run of up to `maxCJKPhrase` characters becomes one
/// phrase of its bigrams (a single character stays a unigram), matching what
/// `engram_fts_text` indexes; a longer run (a CJK sentence) contributes its bigrams as
/// separate terms, so partial matches still rank. Terms are joined with OR: BM25 then
/// ranks documents by how many terms they match and how rare those are.
public enum FTSQuery {
  /// Longest CJK run kept as one phrase.
  public static let maxCJKPhrase = 4

  /// A small list of English function words that carry no search meaning.
  public static let stopwords: Set<String> = [
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "did", "do", "does", "for", "from",
    "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on",
    "or", "our", "so", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to",
    "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
  ]

  /// The terms of `text` (each already a quoted FTS5 string), in first-seen order without
  /// repeats. Empty when nothing searchable remains.
  public static func terms(for text: String) -> [String] {
    var words: [String] = []
    var cjkRuns: [(position: Int, run: [Unicode.Scalar])] = []
    var word = String.UnicodeScalarView()
    var run: [Unicode.Scalar] = []

    func flushWord() {
      if !word.isEmpty { words.append(String(word)) }
      word = String.UnicodeScalarView()
    }
    func flushRun() {
      if !run.isEmpty { cjkRuns.append((words.count, run)) }
      run.removeAll()
    }

    for scalar in text.unicodeScalars {
      // ASCII first: the Unicode property lookups below are slow, and in ASCII only
      // letters and digits are alphabetic or numeric.
      if scalar.isASCII {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A:
          flushRun()
          word.append(scalar)
        default:
          flushWord()
          flushRun()
        }
      } else if FTSText.isCJK(scalar.value) {
        flushWord()
        run.append(scalar)
      } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
        flushRun()
        word.append(scalar)
      } else {
        flushWord()
        flushRun()
      }
    }
    flushWord()
    flushRun()

    let meaningful = words.filter { !stopwords.contains($0.lowercased()) }
    let keptWords = meaningful.isEmpty ? words : meaningful
    var terms: [String] = keptWords.map(quote)
    for (_, run) in cjkRuns {
      let characters = run.map { String(Character($0)) }
      if characters.count == 1 {
        terms.append(quote(characters[0]))
      } else {
        let bigrams = (0..<(characters.count - 1)).map { characters[$0] + characters[$0 + 1] }
        if characters.count <= maxCJKPhrase {
          terms.append(quote(bigrams.joined(separator: " ")))
        } else {
          terms += bigrams.map(quote)
        }
      }
    }
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
}
