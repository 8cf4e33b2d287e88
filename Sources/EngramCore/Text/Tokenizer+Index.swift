/// The keyword index's reading of text (`FTSText` in EngramStore registers it as the SQL
/// function `engram_fts_text(text [, time])`, which the schema's FTS triggers call).
///
/// `indexText` returns the normalized terms of the text, separated by spaces, in their order:
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
/// the same scanner and stemmer. Example: "Ann's friends went climbing 周末攀岩" ->
/// "ann friend went climb 周 末 攀 岩 周末 末攀 攀岩".
///
/// Changing what these functions return changes the terms of every index, whose contentless
/// deletes must see the very terms inserted: it needs a migration that rebuilds the indexes.
extension Tokenizer {
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

  /// The distinct terms of `text` as the keyword index holds them (`indexText` split at its
  /// spaces); with `droppingStopwords`, without the stems of `Lexicon.stopwords`.
  public static func indexTerms(_ text: String, droppingStopwords: Bool = false) -> Set<String> {
    var terms = Set(indexText(text).split(separator: " ").map(String.init))
    if droppingStopwords { terms.subtract(stemmedStopwords) }
    return terms
  }

  /// `Lexicon.stopwords` as the index holds them.
  static let stemmedStopwords = Set(Lexicon.stopwords.map { indexText($0) })

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
    var scanner = IndexScanner(input)
    while let token = scanner.next() {
      switch token {
      case .word(let range, let ascii):
        if !output.isEmpty { output.append(0x20) }
        if ascii {
          appendIndexWord(UnsafeBufferPointer(rebasing: input[range]), to: &output, stemmer: &stemmer)
        } else {
          output.append(contentsOf: UnsafeBufferPointer(rebasing: input[range]))
        }
      case .cjkRun(let range):
        appendCJKRun(UnsafeBufferPointer(rebasing: input[range]), to: &output)
      }
    }
  }

  /// Appends an ASCII `word` lowercased, then stemmed when it is all letters.
  package static func appendIndexWord(
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
      index += decodeUTF8(run, at: index).length
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
    let (year, month, day) = CivilCalendar.civil(days: CivilCalendar.floorDivision(milliseconds, 86_400_000))
    return "\(day) \(Lexicon.months[Int(month) - 1]) \(year)"
  }

  /// Whether `scalar` belongs to the scripts the index reads as unigrams and bigrams (Han,
  /// Hiragana, Katakana, Hangul).
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
  package static func decodeUTF8(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (
    scalar: UInt32, length: Int
  ) {
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
}

extension Tokenizer {
  /// Splits UTF-8 text into the units the keyword index is built from: words and CJK runs.
  ///
  /// A word is a run of ASCII letters and digits or of other alphabetic or numeric scalars; a
  /// possessive `'s` (or `’s`) ending a word is dropped with its apostrophe, so "Ann's" is the
  /// word "Ann" and leaves no stray "s". A CJK run is a run of `Tokenizer.isCJK` scalars.
  /// Everything else separates. The index side (`indexText`) and the query side (`FTSQuery`)
  /// both read text through this type, so both see the same words.
  package struct IndexScanner {
    /// One unit of text: a byte range of the input.
    package enum Token: Equatable {
      /// A word; `ascii` when every byte is ASCII (such a word is lowercased and stemmed).
      case word(Range<Int>, ascii: Bool)
      /// A run of CJK characters.
      case cjkRun(Range<Int>)
    }

    private let input: UnsafeBufferPointer<UInt8>
    private var index = 0

    package init(_ input: UnsafeBufferPointer<UInt8>) { self.input = input }
    /// The next token, or nil at the end of the input.
    /// - Complexity: O(n) in the bytes read.
    package mutating func next() -> Token? {
      while index < input.count {
        let byte = input[index]
        if byte < 0x80 {
          if Self.isASCIIWordByte(byte) { return word() }
          index += 1
          continue
        }
        let (scalar, length) = Tokenizer.decodeUTF8(input, at: index)
        if Tokenizer.isCJK(scalar) { return cjkRun() }
        if Self.isWordScalar(scalar) { return word() }
        index += length
      }
      return nil
    }

    private mutating func word() -> Token {
      let start = index
      var ascii = true
      while index < input.count {
        let byte = input[index]
        if byte < 0x80 {
          if Self.isASCIIWordByte(byte) {
            index += 1
            continue
          }
          if byte == UInt8(ascii: "'"), let end = possessiveEnd(after: index + 1) {
            defer { index = end }
            return .word(start..<index, ascii: ascii)
          }
          break
        }
        let (scalar, length) = Tokenizer.decodeUTF8(input, at: index)
        if scalar == 0x2019, let end = possessiveEnd(after: index + length) {
          defer { index = end }
          return .word(start..<index, ascii: ascii)
        }
        if Tokenizer.isCJK(scalar) || !Self.isWordScalar(scalar) { break }
        ascii = false
        index += length
      }
      return .word(start..<index, ascii: ascii)
    }

    /// When `input[position...]` starts with an `s` that ends a word, the position after it.
    private func possessiveEnd(after position: Int) -> Int? {
      guard position < input.count, input[position] | 0x20 == UInt8(ascii: "s") else { return nil }
      let next = position + 1
      if next < input.count, input[next] < 0x80, Self.isASCIIWordByte(input[next]) { return nil }
      if next < input.count, input[next] >= 0x80 {
        let (scalar, _) = Tokenizer.decodeUTF8(input, at: next)
        if Tokenizer.isCJK(scalar) || Self.isWordScalar(scalar) { return nil }
      }
      return next
    }

    private mutating func cjkRun() -> Token {
      let start = index
      while index < input.count, input[index] >= 0x80 {
        let (scalar, length) = Tokenizer.decodeUTF8(input, at: index)
        guard Tokenizer.isCJK(scalar) else { break }
        index += length
      }
      return .cjkRun(start..<index)
    }

    @inline(__always)
    static func isASCIIWordByte(_ byte: UInt8) -> Bool {
      switch byte {
      case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
      default: false
      }
    }

    static func isWordScalar(_ value: UInt32) -> Bool {
      guard let scalar = Unicode.Scalar(value), value != 0xFFFD else { return false }
      return scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }
  }
}
