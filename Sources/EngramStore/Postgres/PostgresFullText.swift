import EngramCore

/// The text PostgreSQL's full-text columns index and the terms its queries search for: the
/// same as the SQLite store's (``FTSText`` and ``FTSQuery``), in the shape the PostgreSQL
/// schema (schemas/postgres) takes.
///
/// The schema's generated `search` column indexes `text || fts_cjk`; the writer stores
/// ``cjkSuffix(of:)`` of the indexed text in `fts_cjk`, so the index sees the CJK terms
/// `FTSText.indexText(text)` holds (English words are stemmed by PostgreSQL's own
/// configuration, the SQLite store's by `EnglishStemmer`). A query passes ``queryTermsJSON(for:)`` to the schema's
/// `engram_tsquery(json)`.
public enum PostgresFullText {
  /// The unigrams and bigrams of `text`'s CJK runs, as `FTSText` indexes them (starting with
  /// a space), or nil when `text` has no CJK character. PostgreSQL's own parser and stemmer
  /// handle the other words.
  public static func cjkSuffix(of text: String) -> String? {
    var text = text
    return text.withUTF8 { input -> String? in
      var output: [UInt8] = [0x20]
      var tokenizer = FTSTokenizer(input)
      var found = false
      while let token = tokenizer.next() {
        guard case .cjkRun(let range) = token else { continue }
        if found { output.append(0x20) }
        found = true
        var run: [UInt8] = []
        FTSText.appendCJKRun(UnsafeBufferPointer(rebasing: input[range]), to: &run)
        output.append(contentsOf: run)
      }
      return found ? String(decoding: output, as: UTF8.self) : nil
    }
  }

  /// The search terms of `text`, as ``FTSQuery/terms(for:)`` finds them, unquoted: words, and
  /// CJK runs as space-separated bigrams (each term becomes one phrase; phrases are joined
  /// with OR).
  public static func queryTerms(for text: String) -> [String] {
    FTSQuery.terms(for: text).map { quoted in
      var inner = quoted.dropFirst().dropLast()
      if inner.contains("\"") { inner = Substring(inner.replacing("\"\"", with: "\"")) }
      return String(inner)
    }
  }

  /// ``queryTerms(for:)`` as a JSON array of strings, the argument of `engram_tsquery(json)`.
  /// Empty array when nothing is searchable (the query then matches nothing).
  public static func queryTermsJSON(for text: String) -> String {
    JSONValue.array(queryTerms(for: text).map(JSONValue.string)).jsonText
  }
}
