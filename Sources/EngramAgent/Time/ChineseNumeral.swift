import EngramCore

/// Reads Arabic and Chinese numerals (`12`, `十二`, `两`, `二十五`, `三百零五`, `二〇二七`, `一千二`,
/// and with `number(of:)` also `两万五`, `十二万`, `三点五`).
public enum ChineseNumeral {
  static let digits = Lexicon.chineseDigits
  static let units = Lexicon.chineseUnits

  /// The value of `text`, or nil when it is not a whole numeral below ten thousand.
  ///
  /// A digit right after 百 or 千 counts in the next lower unit, as people say it: 一千二 is
  /// 1200 and 三百四 is 340 (一千零二 is 1002).
  public static func value(of text: some StringProtocol) -> Int? {
    guard !text.isEmpty else { return nil }
    if text.allSatisfy(\.isASCII), let number = Int(text) { return number }
    // Positional form (二〇二七): only digits, more than one of them.
    if text.count > 1, text.allSatisfy({ digits[$0] != nil }) {
      guard text.count <= 18 else { return nil }  // beyond Int's range
      return text.reduce(0) { $0 * 10 + digits[$1]! }
    }
    var total = 0
    var pending: Int?
    var lastUnit = Int.max
    var zeroSinceUnit = false
    for character in text {
      if let digit = digits[character] {
        guard pending == nil || pending == 0 || digit == 0 else { return nil }
        if digit == 0 { zeroSinceUnit = true }
        pending = digit
      } else if let unit = units[character] {
        guard unit < lastUnit else { return nil }
        // A bare 十 means one ten (十二 = 12).
        total += (pending ?? 1) * unit
        pending = nil
        lastUnit = unit
        zeroSinceUnit = false
      } else {
        return nil
      }
    }
    guard let pending else { return total }
    if lastUnit >= 100, lastUnit != Int.max, !zeroSinceUnit { return total + pending * lastUnit / 10 }
    return total + pending
  }

  /// The value of `text` as a number: whole numerals with 万 and 亿 (两万五 = 25000, 十二万 =
  /// 120000, 一亿二 = 120000000) and decimals with 点 (三点五 = 3.5); nil when it is not one.
  public static func number(of text: some StringProtocol) -> Double? {
    let text = String(text)
    guard !text.isEmpty else { return nil }
    if let point = text.firstIndex(of: "点") {
      let fraction = text[text.index(after: point)...]
      guard !fraction.isEmpty, fraction.allSatisfy({ digits[$0] != nil || $0.isASCII && $0.isNumber }),
        let whole = number(of: text[..<point])
      else { return nil }
      let decimals = fraction.map { digits[$0].map(String.init) ?? String($0) }.joined()
      return Double("\(Int(whole)).\(decimals)")
    }
    return whole(text).map(Double.init)
  }

  /// Whole numerals with 万 and 亿; a lone digit after them counts in the next lower unit.
  private static func whole(_ text: String) -> Int? {
    for (unitCharacter, unit) in [("亿", 100_000_000), ("万", 10_000)] {
      guard let index = text.firstIndex(of: Character(unitCharacter)) else { continue }
      let head = text[..<index]
      let tail = String(text[text.index(after: index)...])
      let headValue = head.isEmpty ? 1 : whole(String(head))
      guard let headValue, headValue > 0 else { return nil }
      if tail.isEmpty { return headValue * unit }
      if tail.count == 1, let digit = digits[tail.first!], digit != 0 {
        return headValue * unit + digit * unit / 10
      }
      let rest = tail.hasPrefix("零") || tail.hasPrefix("〇") ? String(tail.dropFirst()) : tail
      guard let restValue = whole(rest), restValue < unit else { return nil }
      return headValue * unit + restValue
    }
    return value(of: text)
  }
}
