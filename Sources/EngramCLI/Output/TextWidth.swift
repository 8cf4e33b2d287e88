/// Display width of text in terminal columns, roughly following Unicode East Asian Width.
///
/// Wide and fullwidth characters (CJK, Hangul, fullwidth forms, emoji) take two columns,
/// combining marks and zero-width characters none, everything else one.
public enum TextWidth {
  /// Code point ranges of East Asian Wide (W) and Fullwidth (F) characters, sorted.
  static let wideRanges: [ClosedRange<UInt32>] = [
    0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0,
    0x23F3...0x23F3, 0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F...0x267F,
    0x2693...0x2693, 0x26A1...0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5,
    0x26CE...0x26CE, 0x26D4...0x26D4, 0x26EA...0x26EA, 0x26F2...0x26F3, 0x26F5...0x26F5,
    0x26FA...0x26FA, 0x26FD...0x26FD, 0x2705...0x2705, 0x270A...0x270B, 0x2728...0x2728,
    0x274C...0x274C, 0x274E...0x274E, 0x2753...0x2755, 0x2757...0x2757, 0x2795...0x2797,
    0x27B0...0x27B0, 0x27BF...0x27BF, 0x2B1B...0x2B1C, 0x2B50...0x2B50, 0x2B55...0x2B55,
    0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
    0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
    0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18AFF, 0x1B000...0x1B2FF,
    0x1F004...0x1F004, 0x1F0CF...0x1F0CF, 0x1F18E...0x1F18E, 0x1F191...0x1F19A,
    0x1F200...0x1F251, 0x1F300...0x1F64F, 0x1F680...0x1F6FF, 0x1F7E0...0x1F7EB,
    0x1F90C...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
  ]

  /// Columns one Unicode scalar takes: 0, 1 or 2.
  public static func width(of scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    if value == 0 || value == 0x200B || (0x200C...0x200F).contains(value) || value == 0xFEFF { return 0 }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    if value < 0x1100 { return 1 }
    // Binary search over the sorted ranges.
    var low = 0
    var high = wideRanges.count - 1
    while low <= high {
      let middle = (low + high) / 2
      let range = wideRanges[middle]
      if value < range.lowerBound {
        high = middle - 1
      } else if value > range.upperBound {
        low = middle + 1
      } else {
        return 2
      }
    }
    return 1
  }

  /// Columns one grapheme takes: the widest of its scalars, 2 when it asks for emoji presentation.
  public static func width(of character: Character) -> Int {
    var widest = 0
    for scalar in character.unicodeScalars {
      if scalar.value == 0xFE0F { return 2 }
      widest = max(widest, width(of: scalar))
    }
    return widest
  }

  /// Columns `text` takes.
  /// - Complexity: O(n) in the number of characters.
  public static func width(of text: some StringProtocol) -> Int {
    text.reduce(0) { $0 + width(of: $1) }
  }

  /// Columns `text` takes when that is at most `limit`, else a number above `limit` (the
  /// count stops there).
  /// - Complexity: O(characters that fill `limit` + 1 columns), whatever the text's length.
  public static func width(of text: some StringProtocol, upTo limit: Int) -> Int {
    var total = 0
    for character in text {
      total += width(of: character)
      if total > limit { return total }
    }
    return total
  }

  /// `text` cut to at most `columns` columns, ending in `…` when something was cut.
  /// - Complexity: O(characters that fill `columns` columns), whatever the text's length.
  public static func truncate(_ text: String, toWidth columns: Int) -> String {
    guard columns > 0 else { return "" }
    if width(of: text, upTo: columns) <= columns { return text }
    var result = ""
    var used = 0
    for character in text {
      let characterWidth = width(of: character)
      if used + characterWidth > columns - 1 { break }
      result.append(character)
      used += characterWidth
    }
    return result + "…"
  }

  /// `text` padded with spaces to `columns` columns, on the right (left-aligned) or the left.
  public static func pad(_ text: String, toWidth columns: Int, alignRight: Bool = false) -> String {
    let padding = String(repeating: " ", count: max(0, columns - width(of: text)))
    return alignRight ? padding + text : text + padding
  }
}
