import EngramCore
import Foundation

extension PlaceExtractor {
  /// The city a statement says the user lives in ("my home city is Lisbon", "I live in New
  /// York now", 我住在北京, 我家在上海), or nil when it says no such thing.
  ///
  /// A place the table knows is taken as written; otherwise up to four words (English) or
  /// two to eight characters (Chinese) that look like a name ("I live in a small flat" is none).
  public func homeCity(statedIn text: String) -> String? {
    for pattern in Self.homeStatements {
      guard let match = text.firstMatch(of: pattern.regex), let captured = match.output[1].substring else {
        continue
      }
      let rest = Self.withoutTimeWords(String(captured))
      if let city = pattern.chinese ? Self.chineseHome(rest) : Self.englishHome(rest) { return city }
    }
    return nil
  }

  private struct HomePattern: @unchecked Sendable {
    // A Regex is immutable once built; the checker cannot see that.
    let regex: Regex<AnyRegexOutput>
    let chinese: Bool
  }

  private static let homeStatements: [HomePattern] = [
    HomePattern(
      regex: try! Regex(
        #"\b(?:my home ?(?:city|town) is|my city is|i live in|i'm living in|i am living in|i'm based in|i am based in|my home is in|i moved to|i've moved to|i have moved to|(?:the )?user lives in)\s+(.+)"#
      ).ignoresCase(), chinese: false),
    HomePattern(
      regex: try! Regex("(?:我现在住在|我住在|我家住在|我生活在|我家在|我的家在|我搬到了|我搬到|我住)(.+)"), chinese: true),
  ]

  private static let englishEnders = Set(SkillWords.list("home_city.english_enders"))
  private static let englishNonNames = Set(SkillWords.list("home_city.english_non_names"))

  private static func englishHome(_ text: String) -> String? {
    let segment = text.split(whereSeparator: { ",;:!?|()\"“”。，".contains($0) }).first.map(String.init) ?? ""
    let words = segment.split(whereSeparator: \.isWhitespace).map {
      String($0).trimmingCharacters(in: CharacterSet(charactersIn: ".'’"))
    }.filter { !$0.isEmpty }
    for count in stride(from: min(words.count, 5), through: 1, by: -1) {
      let candidate = words[0..<count].joined(separator: " ")
      if let place = PlaceDirectory.lookup(candidate), place.kind != .zone { return candidate }
    }
    var name: [String] = []
    for word in words {
      if englishEnders.contains(word.lowercased()) { break }
      name.append(word)
    }
    guard let first = name.first, (1...4).contains(name.count), !englishNonNames.contains(first.lowercased()),
      name.allSatisfy({ $0.allSatisfy { $0.isLetter || "-'’.".contains($0) } })
    else { return nil }
    return name.joined(separator: " ")
  }

  private static let chineseEnders = SkillWords.list("home_city.chinese_enders")
  private static let chineseNonNames = Set(SkillWords.list("home_city.chinese_non_names"))

  private static func chineseHome(_ text: String) -> String? {
    guard
      var candidate = text.components(
        separatedBy: CharacterSet.punctuationCharacters.union(.whitespaces).union(.symbols)
      )
      .first(where: { !$0.isEmpty })
    else { return nil }
    // 北京朝阳区 is 北京 when the table knows the start.
    if let known = PlaceDirectory.allNames.filter({
      candidate.hasPrefix($0) && $0.unicodeScalars.contains(where: \.isCJKIdeograph)
    })
    .max(by: { $0.count < $1.count }), PlaceDirectory.lookup(known)?.kind != .zone {
      return known
    }
    for ender in chineseEnders {
      if let range = candidate.range(of: ender) { candidate = String(candidate[..<range.lowerBound]) }
    }
    guard (2...8).contains(candidate.count), candidate.allSatisfy(\.isLetter),
      candidate.unicodeScalars.contains(where: \.isCJKIdeograph), !chineseNonNames.contains(candidate),
      !["我", "你", "他", "她", "哪", "什么"].contains(where: candidate.contains)
    else { return nil }
    return candidate
  }
}
