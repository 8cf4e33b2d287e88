import CSQLite

/// The text the FTS indexes hold: `engram_fts_text(text)`, a deterministic SQL function
/// registered on every connection and called by the schema's FTS triggers.
///
/// It returns the text unchanged, followed by, for every run of CJK characters (Han,
/// Hiragana, Katakana, Hangul), the run's characters as space-separated unigrams and then
/// its bigrams. FTS5's `unicode61` tokenizer keeps a CJK run as one token; the appended
/// unigrams and (consecutive) bigrams let `FTSQuery` match CJK words of any length.
/// Example: "我周末去攀岩了" -> "我周末去攀岩了 我 周 末 去 攀 岩 了 我周 周末 末去 去攀 攀岩 岩了".
public enum FTSText {
  /// The expansion of `text` (what the FTS index sees).
  public static func indexText(_ text: String) -> String {
    var text = text
    return text.withUTF8 { input in
      var output: [UInt8] = []
      guard expand(input, into: &output) else { return String(decoding: input, as: UTF8.self) }
      return String(decoding: output, as: UTF8.self)
    }
  }

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

  /// Writes the expansion of `input` into `output`; returns false (leaving `output`
  /// untouched) when `input` has no CJK character, in which case the text is its own
  /// expansion.
  /// - Complexity: O(n) in the byte count; no allocation beyond `output`.
  public static func expand(_ input: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) -> Bool {
    // Every CJK scalar is encoded with a lead byte >= 0xE1; plain text skips all work.
    guard hasCJKLeadByte(input) else { return false }
    var found = false
    var index = 0
    // Byte ranges of the characters of the current run: start offsets, plus the end.
    var runStarts: [Int] = []
    runStarts.reserveCapacity(64)

    func flushRun(end: Int) {
      guard !runStarts.isEmpty else { return }
      if !found {
        output.reserveCapacity(input.count * 4 + 16)
        output.append(contentsOf: input)
        found = true
      }
      let count = runStarts.count
      for i in 0..<count {
        output.append(0x20)
        let stop = i + 1 < count ? runStarts[i + 1] : end
        output.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStarts[i]..<stop]))
      }
      if count >= 2 {
        for i in 0..<(count - 1) {
          output.append(0x20)
          let stop = i + 2 < count ? runStarts[i + 2] : end
          output.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStarts[i]..<stop]))
        }
      }
      runStarts.removeAll(keepingCapacity: true)
    }

    while index < input.count {
      if input[index] < 0x80 {
        if !runStarts.isEmpty { flushRun(end: index) }
        index += 1
        continue
      }
      let (scalar, length) = decode(input, at: index)
      if isCJK(scalar) {
        runStarts.append(index)
      } else if !runStarts.isEmpty {
        flushRun(end: index)
      }
      index += length
    }
    flushRun(end: input.count)
    return found
  }

  /// Whether `input` has a byte >= 0xE1. ASCII text (the common case, checked by every FTS
  /// trigger on every insert) is read eight bytes at a time.
  @inline(__always)
  static func hasCJKLeadByte(_ input: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = input.baseAddress else { return false }
    let raw = UnsafeRawPointer(base)
    let count = input.count
    var index = 0
    while index + 8 <= count {
      let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
      if word & 0x8080_8080_8080_8080 != 0 {
        for offset in index..<(index + 8) where input[offset] >= 0xE1 { return true }
      }
      index += 8
    }
    while index < count {
      if input[index] >= 0xE1 { return true }
      index += 1
    }
    return false
  }

  /// Registers `engram_fts_text` on `db` (deterministic and innocuous, so the schema's
  /// triggers may call it under any trust setting).
  static func register(on db: OpaquePointer) throws {
    let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
    let code = sqlite3_create_function_v2(
      db, "engram_fts_text", 1, flags, nil,
      { context, _, arguments in
        guard let context, let argument = arguments?[0] else { return }
        if sqlite3_value_type(argument) == SQLITE_NULL {
          sqlite3_result_null(context)
          return
        }
        let pointer = sqlite3_value_text(argument)
        let count = Int(sqlite3_value_bytes(argument))
        let input = UnsafeBufferPointer(start: pointer, count: pointer == nil ? 0 : count)
        var output: [UInt8] = []
        guard FTSText.expand(input, into: &output) else {
          sqlite3_result_value(context, argument)
          return
        }
        output.withUnsafeBufferPointer { buffer in
          buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
            engram_sqlite3_result_text_transient(context, $0, Int32(buffer.count))
          }
        }
      }, nil, nil, nil)
    guard code == SQLITE_OK else {
      throw SQLiteError.from(db, resultCode: code, sql: "engram_fts_text")
    }
  }
}
