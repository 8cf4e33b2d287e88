import CSQLite
import EngramCore

/// The text the FTS indexes hold: `engram_fts_text(text [, time])`, a deterministic SQL
/// function registered on every connection and called by the schema's FTS triggers. It
/// returns `Tokenizer.indexText(_:time:)`: ASCII words lowercased and stemmed, other words as
/// they are, CJK runs as their characters then their bigrams, and with a time first its UTC
/// day ("8 may 2023").
///
/// Changing what this function returns changes the terms of every index, whose contentless
/// deletes must see the very terms inserted: it needs a migration that rebuilds the indexes.
public enum FTSText {
  /// The normalized text of `text` (what the FTS index sees): `Tokenizer.indexText`.
  /// - Parameter time: a time in milliseconds since the epoch, indexed as its UTC day.
  public static func indexText(_ text: String, time: Int64? = nil) -> String {
    Tokenizer.indexText(text, time: time)
  }

  /// Registers `engram_fts_text(text)` and `engram_fts_text(text, time)` on `db`
  /// (deterministic and innocuous, so the schema's triggers may call them under any trust
  /// setting). A NULL text gives NULL; a NULL time indexes no day.
  ///
  /// The FTS triggers call it for every row written, so each registration keeps its buffers
  /// (`Scratch`) for the life of the connection, which calls its functions one at a time.
  static func register(on db: OpaquePointer) throws {
    let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
    for argumentCount: Int32 in [1, 2] {
      // Released by SQLite (the destructor below) when the connection closes, or at once
      // when the registration fails.
      let scratch = Unmanaged.passRetained(Scratch()).toOpaque()
      let code = sqlite3_create_function_v2(
        db, "engram_fts_text", argumentCount, flags, scratch,
        { context, count, arguments in
          guard let context, let arguments, let argument = arguments[0],
            let pointer = sqlite3_user_data(context)
          else { return }
          if sqlite3_value_type(argument) == SQLITE_NULL {
            sqlite3_result_null(context)
            return
          }
          var time: Int64?
          if count == 2, let timeArgument = arguments[1], sqlite3_value_type(timeArgument) != SQLITE_NULL {
            time = sqlite3_value_int64(timeArgument)
          }
          let text = sqlite3_value_text(argument)
          let byteCount = Int(sqlite3_value_bytes(argument))
          let input = UnsafeBufferPointer(start: text, count: text == nil ? 0 : byteCount)
          let scratch = Unmanaged<Scratch>.fromOpaque(pointer).takeUnretainedValue()
          scratch.normalize(input, time: time)
          let length = Int32(scratch.output.count)
          if scratch.output.isEmpty { scratch.output.append(0) }  // a valid pointer for the empty text
          scratch.output.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
              engram_sqlite3_result_text_transient(context, $0, length)
            }
          }
        },
        nil, nil,
        { pointer in
          if let pointer { Unmanaged<Scratch>.fromOpaque(pointer).release() }
        })
      guard code == SQLITE_OK else {
        throw SQLiteError.from(db, resultCode: code, sql: "engram_fts_text")
      }
    }
    // The keyword rank the searches order by (see `FTSRank`).
    try FTSRank.register(on: db)
  }
}

extension FTSText {
  /// The buffers one `engram_fts_text` registration reuses from row to row: the stemmer, the
  /// output, and the terms of the last day indexed (rows written together mostly share one).
  /// What it returns is `Tokenizer.normalize(_:time:into:stemmer:)`'s, byte for byte.
  final class Scratch {
    var stemmer = EnglishStemmer()
    var output: [UInt8] = []
    private var day: Int64?
    private var dayTerms: [UInt8] = []

    /// Sets `output` to the normalized terms of `input`, preceded by the day of `time`.
    func normalize(_ input: UnsafeBufferPointer<UInt8>, time: Int64?) {
      output.removeAll(keepingCapacity: true)
      if let time {
        let day = time >= 0 ? time / 86_400_000 : (time + 1) / 86_400_000 - 1
        if day != self.day {
          dayTerms.removeAll(keepingCapacity: true)
          Tokenizer.normalize(
            UnsafeBufferPointer(start: nil, count: 0), time: time, into: &dayTerms, stemmer: &stemmer)
          self.day = day
        }
        output.append(contentsOf: dayTerms)
      }
      Tokenizer.normalize(input, into: &output, stemmer: &stemmer)
    }
  }
}
