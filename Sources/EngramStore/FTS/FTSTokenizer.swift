/// Splits UTF-8 text into the units the keyword index is built from: words and CJK runs.
///
/// A word is a run of ASCII letters and digits or of other alphabetic or numeric scalars; a
/// possessive `'s` (or `’s`) ending a word is dropped with its apostrophe, so "Ann's" is the
/// word "Ann" and leaves no stray "s". A CJK run is a run of `FTSText.isCJK` scalars.
/// Everything else separates. `FTSText` (the index side) and `FTSQuery` (the query side)
/// both read text through this type, so both see the same words.
struct FTSTokenizer {
  /// One unit of text: a byte range of the input.
  enum Token: Equatable {
    /// A word; `ascii` when every byte is ASCII (such a word is lowercased and stemmed).
    case word(Range<Int>, ascii: Bool)
    /// A run of CJK characters.
    case cjkRun(Range<Int>)
  }

  private let input: UnsafeBufferPointer<UInt8>
  private var index = 0

  init(_ input: UnsafeBufferPointer<UInt8>) { self.input = input }

  /// The next token, or nil at the end of the input.
  /// - Complexity: O(n) in the bytes read.
  mutating func next() -> Token? {
    while index < input.count {
      let byte = input[index]
      if byte < 0x80 {
        if Self.isASCIIWordByte(byte) { return word() }
        index += 1
        continue
      }
      let (scalar, length) = FTSText.decode(input, at: index)
      if FTSText.isCJK(scalar) { return cjkRun() }
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
      let (scalar, length) = FTSText.decode(input, at: index)
      if scalar == 0x2019, let end = possessiveEnd(after: index + length) {
        defer { index = end }
        return .word(start..<index, ascii: ascii)
      }
      if FTSText.isCJK(scalar) || !Self.isWordScalar(scalar) { break }
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
      let (scalar, _) = FTSText.decode(input, at: next)
      if FTSText.isCJK(scalar) || Self.isWordScalar(scalar) { return nil }
    }
    return next
  }

  private mutating func cjkRun() -> Token {
    let start = index
    while index < input.count, input[index] >= 0x80 {
      let (scalar, length) = FTSText.decode(input, at: index)
      guard FTSText.isCJK(scalar) else { break }
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
