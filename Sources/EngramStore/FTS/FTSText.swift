import CSQLite

/// The text the FTS indexes hold: `engram_fts_text(text [, time])`, a deterministic SQL
/// function registered on every connection and called by the schema's FTS triggers.
///
/// It returns the normalized terms of the text, separated by spaces, in their order:
/// - an ASCII word lowercased and reduced to its English stem (`EnglishStemmer`): "Walking"
///   and "walked" both become "walk"; a word with digits is only lowercased;
/// - another word as it is (FTS5's `unicode61 remove_diacritics 2` tokenizer folds its case
///   and diacritics);
/// - a run of CJK characters (Han, Hiragana, Katakana, Hangul) as its characters, then its
///   consecutive bigrams, so that `FTSQuery` matches CJK words of any length;
/// - with `time` (milliseconds since the epoch), first the UTC day it falls on ("8 may 2023"),
///   so a turn can be found by when it was said.
///
/// Stopwords are kept, so phrases that hold one still match. `FTSQuery` reads queries with
/// the same tokenizer and stemmer. Example: "Ann's friends went climbing 周末攀岩" ->
/// "ann friend went climb 周 末 攀 岩 周末 末攀 攀岩".
///
/// Changing what this function returns changes the terms of every index, whose contentless
/// deletes must see the very terms inserted: it needs a migration that rebuilds the indexes.
public enum FTSText {
  /// The normalized text of `text` (what the FTS index sees).
  /// - Parameter time: a time in milliseconds since the epoch, indexed as its UTC day.
  public static func indexText(_ text: String, time: Int64? = nil) -> String {
    var text = text
    return text.withUTF8 { input in
      var output: [UInt8] = []
      var stemmer = EnglishStemmer()
      normalize(input, time: time, into: &output, stemmer: &stemmer)
      return String(decoding: output, as: UTF8.self)
    }
  }

  /// Appends the normalized terms of `input` (preceded by the day of `time`) to `output`.
  /// - Complexity: O(n) in the byte count; no allocation beyond `output` once `stemmer`'s
  ///   buffer has grown.
  public static func normalize(
    _ input: UnsafeBufferPointer<UInt8>, time: Int64? = nil, into output: inout [UInt8],
    stemmer: inout EnglishStemmer
  ) {
    output.reserveCapacity(output.count + input.count + 16)
    if let time {
      var day = dayText(milliseconds: time)
      day.withUTF8 { appendTerms(of: $0, to: &output, stemmer: &stemmer) }
    }
    appendTerms(of: input, to: &output, stemmer: &stemmer)
  }

  private static func appendTerms(
    of input: UnsafeBufferPointer<UInt8>, to output: inout [UInt8], stemmer: inout EnglishStemmer
  ) {
    var tokenizer = FTSTokenizer(input)
    while let token = tokenizer.next() {
      switch token {
      case .word(let range, let ascii):
        if !output.isEmpty { output.append(0x20) }
        if ascii {
          appendASCIIWord(UnsafeBufferPointer(rebasing: input[range]), to: &output, stemmer: &stemmer)
        } else {
          output.append(contentsOf: UnsafeBufferPointer(rebasing: input[range]))
        }
      case .cjkRun(let range):
        appendCJKRun(UnsafeBufferPointer(rebasing: input[range]), to: &output)
      }
    }
  }

  /// Appends `word` lowercased, then stemmed when it is all letters.
  static func appendASCIIWord(
    _ word: UnsafeBufferPointer<UInt8>, to output: inout [UInt8], stemmer: inout EnglishStemmer
  ) {
    let stemmed: Void? = stemmer.stem(word, lowercasing: true) { output.append(contentsOf: $0) }
    if stemmed == nil {
      for byte in word { output.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) }
    }
  }

  /// Appends a CJK run's characters, then its bigrams, each preceded by a space unless first.
  static func appendCJKRun(_ run: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
    var starts: [Int] = []
    starts.reserveCapacity(run.count / 3 + 1)
    var index = 0
    while index < run.count {
      starts.append(index)
      index += decode(run, at: index).length
    }
    let count = starts.count
    for position in 0..<count {
      if !output.isEmpty { output.append(0x20) }
      let stop = position + 1 < count ? starts[position + 1] : run.count
      output.append(contentsOf: UnsafeBufferPointer(rebasing: run[starts[position]..<stop]))
    }
    guard count >= 2 else { return }
    for position in 0..<(count - 1) {
      output.append(0x20)
      let stop = position + 2 < count ? starts[position + 2] : run.count
      output.append(contentsOf: UnsafeBufferPointer(rebasing: run[starts[position]..<stop]))
    }
  }

  /// The UTC day of a time in milliseconds since the epoch, as "8 May 2023" (the day of
  /// the proleptic Gregorian calendar, computed without Foundation).
  public static func dayText(milliseconds: Int64) -> String {
    // Howard Hinnant's civil_from_days.
    let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds + 1) / 86_400_000 - 1
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return "\(day) \(monthNames[Int(month) - 1]) \(year)"
  }

  private static let monthNames = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
  ]

  /// Whether `scalar` belongs to the scripts indexed as unigrams and bigrams.
  @inline(__always)
  public static func isCJK(_ scalar: UInt32) -> Bool {
    switch scalar {
    case 0x1100...0x11FF,  // Hangul Jamo
      0x3005...0x3007,  // 々 〆 〇
      0x3040...0x30FF,  // Hiragana, Katakana
      0x3130...0x318F,  // Hangul compatibility Jamo
      0x31F0...0x31FF,  // Katakana phonetic extensions
      0x3400...0x4DBF,  // CJK extension A
      0x4E00...0x9FFF,  // CJK unified ideographs
      0xA960...0xA97F,  // Hangul Jamo extended A
      0xAC00...0xD7AF,  // Hangul syllables
      0xF900...0xFAFF,  // CJK compatibility ideographs
      0xFF66...0xFF9F,  // half-width Katakana
      0x20000...0x323AF:  // CJK extensions B-H
      return true
    default:
      return false
    }
  }

  /// Decodes the scalar starting at `index` of well-formed UTF-8; malformed bytes read as
  /// one non-CJK byte, so the function never fails on bad input.
  @inline(__always)
  static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (scalar: UInt32, length: Int) {
    let lead = bytes[index]
    let remaining = bytes.count - index
    @inline(__always) func continuation(_ offset: Int) -> UInt32? {
      let byte = bytes[index + offset]
      return byte & 0xC0 == 0x80 ? UInt32(byte & 0x3F) : nil
    }
    if lead < 0x80 { return (UInt32(lead), 1) }
    if lead & 0xE0 == 0xC0, remaining >= 2, let b1 = continuation(1) {
      return (UInt32(lead & 0x1F) << 6 | b1, 2)
    }
    if lead & 0xF0 == 0xE0, remaining >= 3, let b1 = continuation(1), let b2 = continuation(2) {
      return (UInt32(lead & 0x0F) << 12 | b1 << 6 | b2, 3)
    }
    if lead & 0xF8 == 0xF0, remaining >= 4, let b1 = continuation(1), let b2 = continuation(2),
      let b3 = continuation(3)
    {
      return (UInt32(lead & 0x07) << 18 | b1 << 12 | b2 << 6 | b3, 4)
    }
    return (0xFFFD, 1)
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
  /// What it returns is `normalize(_:time:into:stemmer:)`'s, byte for byte.
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
          FTSText.normalize(
            UnsafeBufferPointer(start: nil, count: 0), time: time, into: &dayTerms, stemmer: &stemmer)
          self.day = day
        }
        output.append(contentsOf: dayTerms)
      }
      FTSText.normalize(input, into: &output, stemmer: &stemmer)
    }
  }
}
