/// Reads Arabic and Chinese numerals (`12`, `十二`, `两`, `二十五`, `三百零五`, `二〇二七`).
public enum ChineseNumeral {
  /// The value of `text`, or nil when it is not a whole numeral below ten thousand.
  public static func value(of text: some StringProtocol) -> Int? {
    guard !text.isEmpty else { return nil }
    if text.allSatisfy(\.isASCII), let number = Int(text) { return number }
    let digits: [Character: Int] = [
      "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
    ]
    let units: [Character: Int] = ["十": 10, "百": 100, "千": 1000]
    // Positional form (二〇二七): only digits, more than one of them.
    if text.count > 1, text.allSatisfy({ digits[$0] != nil }) {
      return text.reduce(0) { $0 * 10 + digits[$1]! }
    }
    var total = 0
    var pending: Int?
    var lastUnit = Int.max
    for character in text {
      if let digit = digits[character] {
        guard pending == nil || pending == 0 || digit == 0 else { return nil }
        pending = digit
      } else if let unit = units[character] {
        guard unit < lastUnit else { return nil }
        // A bare 十 means one ten (十二 = 12).
        total += (pending ?? 1) * unit
        pending = nil
        lastUnit = unit
      } else {
        return nil
      }
    }
    return total + (pending ?? 0)
  }
}
