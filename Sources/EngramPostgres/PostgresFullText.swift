import EngramCore
import EngramStore

/// The text PostgreSQL's full-text columns index and the terms its queries search for: the
/// very terms of the SQLite store (``FTSText`` and ``FTSQuery``), in the shape the PostgreSQL
/// schema (schemas/postgres, migration 2) takes.
///
/// The writer stores ``indexText(ofMessage:speaker:time:)`` or ``indexText(of:)`` in a row's
/// `fts_text` (stemmed by `EnglishStemmer`, CJK as unigrams and bigrams, a turn's day and
/// speaker); the generated `search` column splits it with the `engram_terms` configuration,
/// which only folds case and accents. A query passes ``queryTermsJSON(for:)`` to the schema's
/// `engram_tsquery(json)`.
public enum PostgresFullText {
  /// A memory's or summary's indexed terms (SQLite: `engram_fts_text(content)`).
  public static func indexText(of content: String) -> String { FTSText.indexText(content) }

  /// A turn's indexed terms: its UTC day, its speaker's name, its text (SQLite:
  /// `engram_fts_text(coalesce(speaker || ': ', '') || content, created_at)`).
  public static func indexText(ofMessage content: String, speaker: String?, time: Int64) -> String {
    FTSText.indexText(speaker.map { $0 + ": " + content } ?? content, time: time)
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
