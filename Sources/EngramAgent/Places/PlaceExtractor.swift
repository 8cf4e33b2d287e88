import EngramCore
import Foundation

/// A place a request names.
public struct PlaceMention: Sendable, Hashable {
  /// The place as the request wrote it ("Lisbon", "纽约", "Asia/Tokyo", "Atlantis").
  public var text: String
  /// The table's place, nil when the table does not know it.
  public var place: KnownPlace?

  /// Creates a mention.
  public init(text: String, place: KnownPlace?) {
    self.text = text
    self.place = place
  }
}

/// Finds the place named in an English or Chinese request ("weather in Lisbon tomorrow",
/// "London time", "纽约现在几点", "北京明天会下雨吗", "time in Asia/Tokyo").
///
/// Date and time words are never part of a place: the spans `DateExpressionParser` finds,
/// and words such as "now" and 现在, are cut out first. A place the table knows
/// (`PlaceDirectory`) is preferred wherever it stands; otherwise the words after "in", "at"
/// or "for" (or before 天气, 几点... in Chinese) name an unknown place when they look like a
/// name, not "the office", "my area" or 外面.
public struct PlaceExtractor: Sendable {
  /// The clock date expressions resolve against (only their position matters here).
  public var clock: AgentClock

  /// Creates an extractor.
  public init(clock: AgentClock) { self.clock = clock }

  /// The place named in `text`, or nil when it names none.
  public func find(in text: String) -> PlaceMention? {
    let cut = Self.withoutTimeWords(text)
    let chineseFirst = MessageLanguage.detect(text) == .chinese
    let knownFinders: [(String) -> PlaceMention?] =
      chineseFirst
      ? [Self.knownChinese, Self.knownAfterPreposition, Self.knownEnglish]
      : [Self.knownAfterPreposition, Self.knownEnglish, Self.knownChinese]
    let unknown =
      chineseFirst
      ? Self.unknownChinese(cut) ?? Self.unknownAfterPreposition(cut)
      : Self.unknownAfterPreposition(cut) ?? Self.unknownChinese(cut)
    for finder in knownFinders {
      guard let found = finder(cut) else { continue }
      // "Nova Lima" is a place of its own, not Lima: a capitalized name around a known one wins.
      if let unknown, unknown.text != found.text, unknown.text.contains(found.text),
        Self.words(in: unknown.text).allSatisfy({ $0.first?.isUppercase ?? false })
      {
        return unknown
      }
      return found
    }
    return unknown
  }

  // MARK: - Cutting out time words

  /// Marks where a cut-out span was; no place crosses it.
  static let gap = "|"

  /// `text` with every date expression and time word replaced by `gap`.
  static func withoutTimeWords(_ text: String) -> String {
    var result = text
    for found in DateExpressionParser.findParts(in: text).reversed() {
      result.replaceSubrange(found.range, with: " \(gap) ")
    }
    return result.replacing(timeWords, with: " \(gap) ")
  }

  // A constant, valid pattern; the regex is only read after it is built.
  nonisolated(unsafe) private static let timeWords = try! Regex(
    "\\b(?:right now|now|currently|at the moment|at present|these days|this weekend|this week|next week|over the weekend|later)\\b|现在|此刻|目前|当前|这会儿|这周末|周末|本周|这周|下周|最近|这几天|未来几天|接下来几天"
  ).ignoresCase()

  // MARK: - Known places

  nonisolated(unsafe) private static let preposition = try! Regex(
    "\\b(?:in|at|for|around|near)\\s+([^,;:!?|，。；：！？()\"“”]+)"
  ).ignoresCase()

  /// The longest run of words right after a preposition that the table knows (the last
  /// preposition with one wins: "weather for tomorrow in Lisbon").
  private static func knownAfterPreposition(_ text: String) -> PlaceMention? {
    var found: PlaceMention?
    for match in text.matches(of: preposition) {
      guard let captured = match.output[1].substring else { continue }
      let source = String(captured)
      let words = wordRanges(in: source)
      for count in stride(from: min(words.count, 5), through: 1, by: -1) {
        let candidate = words[0..<count].map(\.word).joined(separator: " ")
        if let place = lookup(candidate, requireUppercaseWhenShort: false) {
          found = PlaceMention(text: written(words[0..<count], in: source), place: place)
          break
        }
      }
    }
    return found
  }

  /// The earliest, then longest, run of words anywhere that the table knows. Names of three
  /// letters or fewer ("LA", "PST", "UK") count only when written in capitals.
  private static func knownEnglish(_ text: String) -> PlaceMention? {
    for segment in text.split(separator: Character(gap)) {
      let source = String(segment)
      let words = wordRanges(in: source)
      for start in words.indices {
        for count in stride(from: min(5, words.count - start), through: 1, by: -1) {
          let candidate = words[start..<(start + count)].map(\.word).joined(separator: " ")
          if let place = lookup(candidate, requireUppercaseWhenShort: true) {
            return PlaceMention(text: written(words[start..<(start + count)], in: source), place: place)
          }
        }
      }
    }
    return nil
  }

  /// The table's Chinese names, longest first.
  private static let chineseNames: [String] = PlaceDirectory.allNames.filter {
    $0.unicodeScalars.contains(where: \.isCJKIdeograph)
  }.sorted { $0.count > $1.count }

  /// The earliest, then longest, Chinese name of the table in `text`.
  private static func knownChinese(_ text: String) -> PlaceMention? {
    var best: (range: Range<String.Index>, name: String)?
    for name in chineseNames {
      guard let range = text.range(of: name) else { continue }
      if let current = best, current.range.lowerBound <= range.lowerBound { continue }
      best = (range, name)
    }
    guard let best, let place = PlaceDirectory.lookup(best.name) else { return nil }
    return PlaceMention(text: best.name, place: place)
  }

  private static func lookup(_ candidate: String, requireUppercaseWhenShort: Bool) -> KnownPlace? {
    let name = trimmed(candidate)
    let letters = name.filter(\.isLetter)
    if requireUppercaseWhenShort, letters.count <= 3, letters != letters.uppercased() { return nil }
    return PlaceDirectory.lookup(name)
  }

  // MARK: - Unknown places

  /// The words after the last "in"/"at"/"for" that look like a place name, though the table
  /// does not know them ("weather in Atlantis").
  private static func unknownAfterPreposition(_ text: String) -> PlaceMention? {
    var found: PlaceMention?
    for match in text.matches(of: preposition) {
      guard let captured = match.output[1].substring else { continue }
      var words = words(in: captured)
      if let stop = words.firstIndex(where: { connectors.contains($0.lowercased()) }) {
        words = Array(words[..<stop])
      }
      while let last = words.last, trailingFillers.contains(PlaceDirectory.normalized(last)) {
        words.removeLast()
      }
      guard let first = words.first, words.count <= 4,
        !leadingStopWords.contains(first.lowercased()),
        !words.contains(where: { word in
          word.contains(where: \.isNumber) || timeUnits.contains(word.lowercased())
        })
      else { continue }
      let candidate = trimmed(words.joined(separator: " "))
      guard candidate.contains(where: \.isLetter) else { continue }
      found = PlaceMention(text: candidate, place: nil)
    }
    return found
  }

  /// Words that end a place name in the words after a preposition.
  private static let connectors = Set(SkillWords.list("place.english_connectors"))
  /// Words dropped from the end of an unknown place.
  private static let trailingFillers = Set(SkillWords.list("place.english_trailing_fillers"))
  /// An unknown place never starts with these ("in the office", "at home", "for my trip").
  private static let leadingStopWords = Set(SkillWords.list("place.english_leading_stop_words"))
  private static let timeUnits = Set(SkillWords.list("place.english_time_units"))

  /// Words before which a Chinese request names its place (纽约几点, 北京天气).
  private static let chineseCues = SkillWords.list("place.chinese_cues")
  private static let chineseLeadingFillers = SkillWords.list("place.chinese_leading_fillers").sorted {
    $0.count > $1.count
  }
  private static let chineseTrailingFillers = SkillWords.list("place.chinese_trailing_fillers").sorted {
    $0.count > $1.count
  }
  /// Words that are never an unknown Chinese place (外面多少度, 我们这边下雨吗).
  private static let chineseStopWords = Set(SkillWords.list("place.chinese_stop_words"))
  private static let chineseForbidden = SkillWords.list("place.chinese_forbidden")

  /// The words before the first Chinese cue when they look like a place name.
  private static func unknownChinese(_ text: String) -> PlaceMention? {
    guard
      let cue = chineseCues.compactMap({ text.range(of: $0) }).min(by: { $0.lowerBound < $1.lowerBound })
    else { return nil }
    var before = String(text[..<cue.lowerBound])
    var changed = true
    while changed {
      changed = false
      before = before.trimmingCharacters(in: separators)
      for filler in chineseTrailingFillers where before.hasSuffix(filler) {
        before.removeLast(filler.count)
        changed = true
        break
      }
    }
    guard var candidate = before.components(separatedBy: separators).last(where: { !$0.isEmpty }) else {
      return nil
    }
    changed = true
    while changed {
      changed = false
      for filler in chineseLeadingFillers where candidate.hasPrefix(filler) && candidate.count > filler.count
      {
        candidate.removeFirst(filler.count)
        changed = true
        break
      }
    }
    guard (2...8).contains(candidate.count),
      candidate.unicodeScalars.contains(where: \.isCJKIdeograph),
      candidate.allSatisfy({ $0.isLetter }),
      !chineseStopWords.contains(candidate),
      !chineseForbidden.contains(where: candidate.contains)
    else { return nil }
    return PlaceMention(text: candidate, place: nil)
  }

  // MARK: - Words

  private static let separators = CharacterSet.whitespacesAndNewlines.union(.punctuationCharacters)
    .union(.symbols).union(CharacterSet(charactersIn: gap)).subtracting(CharacterSet(charactersIn: "/'’._-"))

  nonisolated(unsafe) private static let word = try! Regex("[\\p{L}\\p{M}\\p{N}'’._/-]+")

  /// The words of `text` (letters, digits and the marks inside names: Xi'an, St., Asia/Tokyo).
  private static func words(in text: some StringProtocol) -> [String] {
    wordRanges(in: String(text)).map(\.word)
  }

  /// The words of `text` with where each sits, edge marks trimmed ("Lisbon." is Lisbon).
  private static func wordRanges(in text: String) -> [(word: String, range: Range<String.Index>)] {
    text.matches(of: word).compactMap { match in
      let trimmed = String(text[match.range]).trimmingCharacters(in: CharacterSet(charactersIn: "'’._-"))
      return trimmed.isEmpty ? nil : (trimmed, match.range)
    }
  }

  /// The text from the first to the last of `words`, as written ("St. Petersburg").
  private static func written(
    _ words: ArraySlice<(word: String, range: Range<String.Index>)>, in text: String
  )
    -> String
  {
    guard let first = words.first, let last = words.last else { return "" }
    return trimmed(String(text[first.range.lowerBound..<last.range.upperBound]))
  }

  private static func trimmed(_ text: String) -> String {
    text.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: ".,'’")))
  }
}
