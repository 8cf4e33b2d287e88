import EngramCore
import Foundation

/// A date expression found in text.
public struct DateExpressionMatch: Sendable, Hashable {
  /// The resolved instant.
  public var date: Date
  /// Where the expression sits in the parsed text, so callers can strip it from a title.
  public var range: Range<String.Index>
  /// Whether a time of day was given or implied (a period such as 下午, or a duration);
  /// false when only a day was named and `defaultHour` was used.
  public var hasTime: Bool
  /// The hours of the day a period names when no clock time was given ("Saturday afternoon"
  /// is 12..<18, 今晚 18..<24), for questions about a stretch of time; nil otherwise.
  public var periodHours: Range<Int>?
  /// Whether a day was named (明天, Friday, June 20, in 3 days); false for a time alone.
  public var hasDay: Bool

  /// Creates a match.
  public init(
    date: Date, range: Range<String.Index>, hasTime: Bool, periodHours: Range<Int>? = nil, hasDay: Bool = true
  ) {
    self.date = date
    self.range = range
    self.hasTime = hasTime
    self.periodHours = periodHours
    self.hasDay = hasDay
  }

  /// The stretch of time the expression names, for listing what lies in it: the whole day
  /// when only a day was named, the period's hours for a period, else the instant to the end
  /// of its day.
  public func span(in calendar: Calendar) -> Range<Date> {
    let startOfDay = calendar.startOfDay(for: date)
    let endOfDay = calendar.date(byAdding: .day, value: 1, to: startOfDay) ?? date.addingTimeInterval(86_400)
    if !hasTime { return startOfDay..<endOfDay }
    if let periodHours {
      let start = calendar.date(byAdding: .hour, value: periodHours.lowerBound, to: startOfDay) ?? startOfDay
      let end = calendar.date(byAdding: .hour, value: periodHours.upperBound, to: startOfDay) ?? endOfDay
      return start..<max(end, start)
    }
    return date..<max(endOfDay, date.addingTimeInterval(1))
  }
}

/// What the parser made of the first date expression in a text.
public enum DateReading: Sendable, Hashable {
  /// A readable expression and the instant it names.
  case date(DateExpressionMatch)
  /// Something shaped like a date or time that names none ("the 32nd", "June 31", "25:00",
  /// "13pm", "2月30日"): `text` is the expression as written, `range` where it sits.
  case unreadable(text: String, range: Range<String.Index>)

  /// Where the expression sits in the parsed text.
  public var range: Range<String.Index> {
    switch self {
    case .date(let match): return match.range
    case .unreadable(_, let range): return range
    }
  }
}

/// Finds and resolves English and Chinese date/time expressions relative to a clock.
///
/// The conventions are those of docs/requests.md: a day without a time is `defaultHour` (09:00);
/// periods without a clock time are morning 09:00, noon 12:00, afternoon 15:00, evening 20:00;
/// a clock time without am/pm follows its period word, else on another day 1–5 is afternoon,
/// 6–11 morning and 12 noon, else (no day, or today) it is the next time h:mm or h+12:mm comes.
/// Understands relative days (明天, 后天, tomorrow, tonight), weekdays (周五 and this Friday are
/// the coming one; 下周五 and next Friday are in next week), offsets (三天后, 两小时后, in 30
/// minutes), periods, times (三点一刻, 十点半, 3pm, at 9:30, half past 3) and absolute dates
/// (June 20, 20 June, Jun 20th, 6/20, the 25th, 下个月5号, 10月2日, 2025-10-02; a month and
/// day already past this year mean next year). Calendar arithmetic happens in the clock's
/// time zone, so DST shifts keep wall-clock times.
public struct DateExpressionParser: Sendable {
  /// The reference instant and time zone.
  public var clock: AgentClock
  /// The hour used when only a day is named.
  public var defaultHour: Int

  /// Creates a parser relative to `clock`.
  public init(clock: AgentClock, defaultHour: Int = 9) {
    self.clock = clock
    self.defaultHour = defaultHour
  }

  /// The first readable date expression in `text` (adjacent parts such as 明天 + 下午 + 三点
  /// combine), or nil when there is none or the first one cannot be read (see `read`).
  public func parse(_ text: String) -> DateExpressionMatch? {
    guard case .date(let match) = read(text) else { return nil }
    return match
  }

  /// The first date expression in `text`, readable or not; nil when `text` names no date or time.
  public func read(_ text: String) -> DateReading? {
    read(text, onDay: nil)
  }

  /// Like `read`, but a time named without a day falls on the day of `day` (read as on any
  /// day other than today: 1–5 o'clock is the afternoon, 6–11 the morning): "move it to 3"
  /// keeps the item's own day.
  public func read(_ text: String, onDay day: Date?) -> DateReading? {
    // "3pm Tokyo time", 东京时间下午三点: the time is read without the place, then taken in its zone.
    if let (phrase, zone) = Self.zonePhrase(in: text), zone.identifier != clock.timeZone.identifier,
      let zoned = readInZone(text, phrase: phrase, zone: zone, onDay: day)
    {
      return zoned
    }
    return readHere(text, onDay: day)
  }

  /// `text` read with the zone phrase at `phrase` blanked out, its time taken on the wall clock
  /// of `zone` (the same day and hour there); the match's range covers the phrase when they
  /// touch. Nil when the rest names no time of day.
  private func readInZone(_ text: String, phrase: Range<String.Index>, zone: TimeZone, onDay day: Date?)
    -> DateReading?
  {
    var blanked = text
    blanked.replaceSubrange(phrase, with: String(repeating: " ", count: text[phrase].count))
    guard case .date(var match)? = readHere(blanked, onDay: day), match.hasTime else { return nil }
    // The blanked text has the same characters in the same places: offsets carry over.
    func index(_ at: String.Index) -> String.Index {
      text.index(text.startIndex, offsetBy: blanked.distance(from: blanked.startIndex, to: at))
    }
    var range = index(match.range.lowerBound)..<index(match.range.upperBound)
    if phrase.lowerBound >= range.upperBound,
      text[range.upperBound..<phrase.lowerBound].allSatisfy(\.isWhitespace)
    {
      range = range.lowerBound..<phrase.upperBound
    } else if phrase.upperBound <= range.lowerBound,
      text[phrase.upperBound..<range.lowerBound].allSatisfy(\.isWhitespace)
    {
      range = phrase.lowerBound..<range.upperBound
    } else if phrase.lowerBound < range.lowerBound || phrase.upperBound > range.upperBound {
      return nil
    }
    var there = Calendar(identifier: .gregorian)
    there.timeZone = zone
    let wall = clock.calendar.dateComponents(
      [.year, .month, .day, .hour, .minute, .second], from: match.date)
    guard var date = there.date(from: wall) else { return nil }
    // A time with no day is the next one there, as here: "9am London time" may still be today.
    while !match.hasDay, date.addingTimeInterval(-86_400) > clock.now { date.addTimeInterval(-86_400) }
    while !match.hasDay, date <= clock.now { date.addTimeInterval(86_400) }
    match.date = date
    match.range = range
    return .date(match)
  }

  /// The first "<place> time" (English: up to three words before "time") or "<place>时间" whose
  /// place has a known zone, and that zone.
  static func zonePhrase(in text: String) -> (Range<String.Index>, TimeZone)? {
    var searchFrom = text.startIndex
    while let marker = text.range(
      of: #"(\s+time\b|时间)"#, options: [.regularExpression, .caseInsensitive],
      range: searchFrom..<text.endIndex)
    {
      searchFrom = marker.upperBound
      let before = text[..<marker.lowerBound]
      let isHan = text[marker].contains("时")
      var candidates: [Substring.Index] = []
      if isHan {
        var start = before.endIndex
        while start > before.startIndex, candidates.count < 6 {
          let previous = before.index(before: start)
          guard before[previous].unicodeScalars.first?.properties.isIdeographic == true else { break }
          start = previous
          candidates.append(start)
        }
      } else {
        var start = before.endIndex
        while candidates.count < 3 {
          guard let space = before[..<start].lastIndex(where: { $0 == " " || $0 == "," || $0 == "，" }) else {
            if start != before.startIndex { candidates.append(before.startIndex) }
            break
          }
          let wordStart = before.index(after: space)
          guard wordStart < start else { break }
          candidates.append(wordStart)
          start = space
        }
      }
      for start in candidates.reversed() {
        let name = String(before[start...])
        guard name.count >= 2, let place = PlaceDirectory.lookup(name), let zone = place.timeZone else {
          continue
        }
        return (start..<marker.upperBound, zone)
      }
    }
    return nil
  }

  private func readHere(_ text: String, onDay day: Date?) -> DateReading? {
    let found = Self.findParts(in: text)
    guard let first = found.first else { return nil }
    var cluster = [first]
    for next in found.dropFirst() {
      let gap = text[cluster.last!.range.upperBound..<next.range.lowerBound]
      guard Self.isConnector(gap), !conflicts(cluster, next) else { break }
      cluster.append(next)
    }
    let range = cluster.first!.range.lowerBound..<cluster.last!.range.upperBound
    let assumed = day.map { clock.calendar.dateComponents([.year, .month, .day, .weekday], from: $0) }
    guard let date = resolve(cluster.flatMap(\.parts), assumedDay: assumed) else {
      var written = text[range]
      for connector in ["on ", "at ", "by "] where written.lowercased().hasPrefix(connector) {
        written = written.dropFirst(connector.count)
      }
      return .unreadable(text: written.trimmingCharacters(in: .whitespaces), range: range)
    }
    return .date(
      DateExpressionMatch(
        date: date.date, range: range, hasTime: date.hasTime, periodHours: date.periodHours,
        hasDay: date.hasDay))
  }

  // MARK: - Parts

  enum Period: Sendable {
    case earlyMorning, morning, noon, afternoon, evening, lateNight

    /// The hours of the day the period covers.
    var hours: Range<Int> {
      switch self {
      case .earlyMorning: return 0..<6
      case .morning: return 5..<12
      case .noon: return 11..<14
      case .afternoon: return 12..<18
      case .evening: return 18..<24
      case .lateNight: return 21..<24
      }
    }

    var defaultHour: Int {
      switch self {
      case .lateNight: return 23
      case .earlyMorning: return 6
      case .morning: return 9
      case .noon: return 12
      case .afternoon: return 15
      case .evening: return 20
      }
    }
  }

  enum Meridiem: Sendable { case am, pm, unspecified, exact }

  enum WeekMode: Sendable { case upcoming, nextWeek }

  enum Part: Sendable {
    case absolute(year: Int?, month: Int, day: Int)
    /// The next such day of the month from today ("the 25th", "5号").
    case monthDay(Int)
    /// A day of the month `months` from this one ("下个月5号").
    case relativeMonthDay(months: Int, day: Int)
    case dayOffset(Int)
    case monthOffset(Int)
    case weekday(Int, WeekMode)
    case period(Period)
    case time(hour: Int, minute: Int, Meridiem)
    case duration(seconds: Int)
    /// Shaped like a day but naming none (星期八).
    case invalid

    /// Parts of one category cannot combine (two days, two times).
    var category: Int {
      switch self {
      case .absolute, .monthDay, .relativeMonthDay, .dayOffset, .monthOffset, .weekday, .invalid: return 0
      case .period: return 1
      case .time: return 2
      case .duration: return 3
      }
    }
  }

  struct Found {
    var range: Range<String.Index>
    var parts: [Part]
  }

  private func conflicts(_ cluster: [Found], _ next: Found) -> Bool {
    let used = Set(cluster.flatMap(\.parts).map(\.category))
    let incoming = next.parts.map(\.category)
    if used.contains(3) || incoming.contains(3) { return true }
    return incoming.contains(where: used.contains)
  }

  private static func isConnector(_ gap: Substring) -> Bool {
    let trimmed = gap.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: ",，")))
      .lowercased()
    return ["", "at", "on", "的", "in the", "around", "about", "by"].contains(trimmed)
  }

  // MARK: - Patterns

  private struct Pattern: @unchecked Sendable {
    // Regex<AnyRegexOutput> is immutable after construction; the checker cannot see that.
    let regex: Regex<AnyRegexOutput>
    /// Whether the match must not touch a digit, slash, dot or arithmetic sign on its left
    /// (6/20 is a date; 36/20 and 1.6/20 are not).
    let standalone: Bool
    let build: @Sendable ([Substring?]) -> [Part]?
  }

  private static let num = "(?:\\d{1,4}|[零〇一二两三四五六七八九十百]+)"
  private static let englishNumber =
    "(?:\\d+(?:\\.\\d+)?|a couple(?: of)?|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|forty-five|fifty|half an?)"
  /// Words people put before an amount of time ("in like 20 min", "in about an hour").
  private static let hedge = "(?:(?:like|about|around|roughly|approximately|maybe|just|another)\\s+)?"
  /// A clock time in a range: hour, optional minutes, optional am/pm.
  private static let rangeTime = "(\\d{1,2})(?:[:：](\\d{2}))?\\s*(a\\.?m\\.?|p\\.?m\\.?)?"
  private static let clockWord =
    "(?:\\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
  /// A month's name (`Lexicon.months`) or abbreviation (`month_abbreviations.en` of
  /// `date-words.json`), longest first where one begins another: "september", "sept", "sep".
  private static let monthName =
    "(\(alternatives(Lexicon.lowercasedMonths + WordTable.dates.list("month_abbreviations.en").map(\.word))))"
  /// An hour before 点: 0-29 in Chinese or Arabic digits, so 周一六点 is 周一 + 六点 (not 16).
  private static let chineseHour =
    "(?:二十[一二三四五六七八九]?|十[一二三四五六七八九]?|[零〇两一二三四五六七八九]|\\d{1,2})"
  /// Chinese minutes after 点: 半, 一刻, 三刻, a number with 分, or a two-digit number (十五, 零五).
  private static let chineseMinute =
    "(?:(半)|(一刻)|(三刻)|(\(num))\\s*分|(零[一二三四五六七八九]|[一二三四五]?十[一二三四五六七八九]?|\\d{2}))?"

  private static func englishValue(_ text: Substring) -> Double? {
    let lower = text.lowercased()
    if lower.hasPrefix("half") { return 0.5 }
    if lower.hasPrefix("a couple") { return 2 }
    if lower == "a few" { return 3 }
    if lower == "a" || lower == "an" { return 1 }
    if lower == "forty-five" { return 45 }
    return Lexicon.englishNumbers[lower].map(Double.init) ?? Double(lower)
  }

  private static let monthNumbers = Dictionary(
    uniqueKeysWithValues: Lexicon.lowercasedMonths.enumerated().map { ($0.element, $0.offset + 1) }
  ).merging(numbers("month_abbreviations.en")) { name, _ in name }

  private static func monthNumber(_ text: Substring) -> Int? {
    monthNumbers[text.lowercased()]
  }

  private static func year(_ text: Substring?) -> Int? {
    guard let text, let value = Int(text) else { return nil }
    return text.count == 2 ? 2000 + value : value
  }

  /// Weekday numbers (Monday 1 ... Sunday 7) of the words after 周, 星期, 礼拜 and of English
  /// weekday names (`weekdays.zh`, `weekdays.en` of `date-words.json`).
  private static let weekdayNumbers = numbers("weekdays.zh").merging(numbers("weekdays.en")) { _, english in
    english
  }

  /// Relative days said in one word: 明天, 今晚, "tomorrow", "tonight" (`relative_days.zh`,
  /// `relative_days.en` of `date-words.json`: a day offset, and a period when the word names one).
  private static let chineseRelativeDays = relativeDays("relative_days.zh")
  private static let englishRelativeDays = relativeDays("relative_days.en")

  /// A list of `date-words.json` as a map from word to number.
  private static func numbers(_ list: String) -> [String: Int] {
    WordTable.dates.map(list).mapValues { value in
      guard let number = Int(value) else { preconditionFailure("date-words.json: \(list): \(value)") }
      return number
    }
  }

  /// A list of relative days (value: a day offset, then `morning` or `evening` when the word
  /// names the part of the day) as a map from word to parts.
  private static func relativeDays(_ list: String) -> [String: [Part]] {
    WordTable.dates.map(list).mapValues { value in
      let fields = value.split(separator: " ")
      guard let offset = fields.first.flatMap({ Int($0) }), fields.count <= 2 else {
        preconditionFailure("date-words.json: \(list): \(value)")
      }
      switch fields.count == 2 ? fields[1] : "" {
      case "": return [.dayOffset(offset)]
      case "morning": return [.dayOffset(offset), .period(.morning)]
      case "evening": return [.dayOffset(offset), .period(.evening)]
      default: preconditionFailure("date-words.json: \(list): \(value)")
      }
    }
  }

  /// Words as alternatives of a regular expression, in their order, each matched literally.
  private static func alternatives(_ words: [String]) -> String {
    words.map { word in
      word.map { "\\^$.|?*+()[]{}".contains($0) ? "\\\($0)" : String($0) }.joined()
    }.joined(separator: "|")
  }

  /// The English relative-day words as alternatives, each a whole word; a word of several words
  /// may follow "the" ("the day after tomorrow").
  private static let englishRelativeDayPattern = WordTable.dates.list("relative_days.en").map { entry in
    "\\b" + (entry.word.contains(" ") ? "(?:the\\s+)?" : "") + alternatives([entry.word]) + "\\b"
  }.joined(separator: "|")

  private static func pattern(
    _ source: String, standalone: Bool = false, _ build: @escaping @Sendable ([Substring?]) -> [Part]?
  ) -> Pattern {
    // \d alone also matches 四 and other scripts' digits (Character.wholeNumberValue).
    Pattern(regex: try! Regex(source).ignoresCase().asciiOnlyDigits(), standalone: standalone, build: build)
  }

  /// A lead before another moment ("an hour before", "30 minutes ahead", 提前半小时, 开始前两天):
  /// its length in seconds and the words that say it; nil when `text` names none. Amounts are
  /// read as those of "in 20 minutes" and 两小时后 are.
  static func leadTime(in text: String) -> (seconds: TimeInterval, words: String)? {
    let units: [String: TimeInterval] = [
      "minute": 60, "min": 60, "hour": 3600, "hr": 3600, "day": 86400, "week": 604_800, "分钟": 60, "分": 60,
      "小时": 3600, "钟头": 3600, "天": 86400, "周": 604_800, "星期": 604_800, "礼拜": 604_800,
    ]
    if let match = text.firstMatch(of: englishLead.regex), let amount = match.output[1].substring,
      let unit = match.output[2].substring, let count = englishValue(amount),
      let each = units[unit.lowercased()]
    {
      return (count * each, String(match.output[0].substring!))
    }
    if let match = text.firstMatch(of: chineseLead.regex), let unit = match.output[4].substring,
      let each = units[String(unit)]
    {
      let whole = match.output[1].substring.flatMap { ChineseNumeral.value(of: $0) } ?? 0
      let half = match.output[2].substring != nil || match.output[3].substring != nil ? 0.5 : 0
      let count = Double(whole) + half
      return count > 0 ? (count * each, String(match.output[0].substring!)) : nil
    }
    return nil
  }

  private static let englishLead = pattern(
    "\\b(\(englishNumber))\\s*(minute|min|hour|hr|day|week)s?\\s+(?:before|ahead|earlier|in advance|prior)(?:\\s+(?:it|that|then|of time))?\\b"
  ) { _ in nil }
  private static let chineseLead = pattern(
    "(?:提前|前)\\s*(?:(\(num))\\s*个?\\s*(半)?|(半)\\s*个?)\\s*(分钟|分|小时|钟头|天|周|星期|礼拜)"
  ) { _ in nil }

  private static func chineseMinutes(_ g: [Substring?], from index: Int) -> Int? {
    if g[index] != nil { return 30 }
    if g[index + 1] != nil { return 15 }
    if g[index + 2] != nil { return 45 }
    if let text = g[index + 3] ?? g[index + 4] { return ChineseNumeral.value(of: text) }
    return 0
  }

  private static let patterns: [Pattern] = [
    // 2027-01-05 14:00, 2027-01-05T14:00
    pattern("(\\d{4})-(\\d{1,2})-(\\d{1,2})(?:[T ](\\d{1,2}):(\\d{2}))?") { g in
      guard let year = Int(g[1]!), let month = Int(g[2]!), let day = Int(g[3]!) else { return nil }
      var parts: [Part] = [.absolute(year: year, month: month, day: day)]
      if let hour = g[4].flatMap({ Int($0) }), let minute = g[5].flatMap({ Int($0) }) {
        parts.append(.time(hour: hour, minute: minute, .exact))
      }
      return parts
    },
    // 2027年1月5日, 1月5号, 10月2日
    pattern("(?:(\\d{4}|[零〇一二三四五六七八九]{4})年)?(\(num))月(\(num))[日号]") { g in
      guard let month = ChineseNumeral.value(of: g[2]!), let day = ChineseNumeral.value(of: g[3]!) else {
        return nil
      }
      return [.absolute(year: g[1].flatMap { ChineseNumeral.value(of: $0) }, month: month, day: day)]
    },
    // 下个月5号, 这个月20日, 本月底 is not a day
    pattern("(下下个?|下个?|这个?|本)月(\(num))[日号]") { g in
      guard let day = ChineseNumeral.value(of: g[2]!) else { return nil }
      let prefix = g[1]!
      let months = prefix.hasPrefix("下下") ? 2 : prefix.hasPrefix("下") ? 1 : 0
      return [.relativeMonthDay(months: months, day: day)]
    },
    // 5号, 二十五日 (the next such day); not 5号楼, 3号线
    pattern("(\(num))[号日](?![楼线床房门馆厅口位机车])") { g in
      guard let day = ChineseNumeral.value(of: g[1]!) else { return nil }
      return [.monthDay(day)]
    },
    // 6/20, 6/20/2025 (month/day), only between non-arithmetic neighbours
    pattern(
      "\\b(1[0-2]|0?[1-9])/(3[01]|[12]\\d|0?[1-9])(?:/(\\d{4}|\\d{2}))?\\b(?![/\\d.]|\\s*[-+*×÷/])",
      standalone: true
    ) { g in
      guard let month = Int(g[1]!), let day = Int(g[2]!) else { return nil }
      return [.absolute(year: year(g[3]), month: month, day: day)]
    },
    // June 20, Jun 20th, June 20, 2026, on June 20
    pattern(
      "\\b(?:on\\s+)?\(monthName)\\.?\\s+(?:the\\s+)?(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4})\\b)?"
    ) {
      g in
      guard let month = monthNumber(g[1]!), let day = Int(g[2]!) else { return nil }
      return [.absolute(year: year(g[3]), month: month, day: day)]
    },
    // 20 June, the 20th of June, on 20 June 2026
    pattern(
      "\\b(?:on\\s+)?(?:the\\s+)?(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?\(monthName)\\b(?:,?\\s+(\\d{4})\\b)?"
    ) { g in
      guard let month = monthNumber(g[2]!), let day = Int(g[1]!) else { return nil }
      return [.absolute(year: year(g[3]), month: month, day: day)]
    },
    // the 25th, on the 25th, on 25th (the next such day)
    pattern("\\b(?:on\\s+)?the\\s+(\\d{1,2})(?:st|nd|rd|th)\\b|\\bon\\s+(\\d{1,2})(?:st|nd|rd|th)\\b") { g in
      guard let day = Int((g[1] ?? g[2])!) else { return nil }
      return [.monthDay(day)]
    },
    // 两小时后, 一个半小时后, 半小时以后, 30分钟后
    pattern("(?:(\(num))\\s*个?\\s*(半)?|(半)\\s*个?)\\s*(小时|钟头|分钟)\\s*(?:后|以后|之后)") { g in
      let whole = g[1].flatMap { ChineseNumeral.value(of: $0) } ?? 0
      let half = (g[2] != nil || g[3] != nil) ? 0.5 : 0
      let unit = g[4]! == "分钟" ? 60.0 : 3600.0
      let seconds = Int((Double(whole) + half) * unit)
      return seconds > 0 ? [.duration(seconds: seconds)] : nil
    },
    // 三天后, 两周后, 一个月后
    pattern("(\(num))\\s*个?\\s*(天|日|周|星期|礼拜|月)\\s*(?:后|以后|之后)") { g in
      guard let count = ChineseNumeral.value(of: g[1]!) else { return nil }
      switch g[2]! {
      case "天", "日": return [.dayOffset(count)]
      case "月": return [.monthOffset(count)]
      default: return [.dayOffset(count * 7)]
      }
    },
    // 明天, 后天, 今晚, 明早
    pattern(alternatives(WordTable.dates.list("relative_days.zh").map(\.word))) { g in
      chineseRelativeDays[String(g[0]!)]
    },
    // 周六, 下周一, 这个星期五, 礼拜天
    pattern("(下个?|这个?|本)?(?:周|星期|礼拜)(\(alternatives(WordTable.dates.list("weekdays.zh").map(\.word))))") {
      g in
      guard let day = weekdayNumbers[String(g[2]!)] else { return nil }
      let next = g[1].map { $0.hasPrefix("下") } ?? false
      return [.weekday(day, next ? .nextWeek : .upcoming)]
    },
    // 星期八: a weekday that does not exist
    pattern("(?:周|星期|礼拜)(?:[八九十]|[089])") { _ in [.invalid] },
    // 上午, 下午, 晚上
    pattern("(凌晨|清晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|夜间|半夜|深夜)(好)?") { g in
      guard g[2] == nil else { return nil }  // 早上好 is a greeting
      switch g[1]! {
      case "凌晨", "清晨": return [.period(.earlyMorning)]
      case "半夜", "深夜": return [.period(.lateNight)]
      case "早上", "早晨", "上午": return [.period(.morning)]
      case "中午": return [.period(.noon)]
      case "下午": return [.period(.afternoon)]
      default: return [.period(.evening)]
      }
    },
    // 三点, 十点半, 三点一刻, 3点45分, 八点钟, 三点十五; not the number 三点五
    pattern("(\(chineseHour))\\s*[点點时]\\s*(?:钟)?\(chineseMinute)(?![零〇一二两三四五六七八九十\\d])") { g in
      guard let hour = ChineseNumeral.value(of: g[1]!), let minute = chineseMinutes(g, from: 2) else {
        return nil
      }
      return [.time(hour: hour, minute: minute, .unspecified)]
    },
    // 9:30, at 9:30, 14:00, 9:30pm
    pattern("(?:\\bat\\s+)?(\\d{1,2})[:：](\\d{2})(?:\\s*(a\\.?m\\.?|p\\.?m\\.?)(?![a-z]))?") { g in
      guard let hour = Int(g[1]!), let minute = Int(g[2]!) else { return nil }
      return [.time(hour: hour, minute: minute, meridiem(g[3]))]
    },
    // 3pm, at 3 pm, at 8
    pattern(
      "(?:\\bat\\s+)?\\b(\\d{1,2})\\s*(a\\.?m\\.?|p\\.?m\\.?)(?![a-z])|(?:\\bat\\s+|@\\s*)(\\d{1,2})\\b(?![:：\\d]|\\.\\d|\\s*%)"
    ) {
      g in
      guard let hour = Int((g[1] ?? g[3])!) else { return nil }
      return [.time(hour: hour, minute: 0, meridiem(g[2]))]
    },
    // at 7.30, at 7.30pm
    pattern("(?:\\bat\\s+|@\\s*)(\\d{1,2})\\.(\\d{2})(?:\\s*(a\\.?m\\.?|p\\.?m\\.?)(?![a-z]))?(?![\\d%])") {
      g in
      guard let hour = Int(g[1]!), let minute = Int(g[2]!) else { return nil }
      return [.time(hour: hour, minute: minute, meridiem(g[3]))]
    },
    // at seven, at six thirty, at nine pm (not "at one point")
    pattern(
      "(?:\\bat\\s+|@\\s*)(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
        + "(?:[\\s-]+(fifteen|thirty|forty-five))?\\b(?:\\s*(a\\.?m\\.?|p\\.?m\\.?)(?![a-z]))?"
        + "(?!\\s+(?:point|of|another|time|stage|end|go|once)\\b)"
    ) { g in
      guard let hour = englishValue(g[1]!) else { return nil }
      let minute = g[2].flatMap(englishValue) ?? 0
      return [.time(hour: Int(hour), minute: Int(minute), meridiem(g[3]))]
    },
    // from 3 to 5, between 1 and 3, 2-4pm, 2 to 4 this afternoon: the range starts at its first time
    pattern(
      "\\b(?:(?:from|between)\\s+)\(rangeTime)\\s*(?:to|-|–|and|until|till)\\s*\(rangeTime)(?![\\d:])"
        + "|\\b\(rangeTime)\\s*(?:to|-|–|until|till)\\s*(\\d{1,2})(?:[:：](\\d{2}))?\\s*(a\\.?m\\.?|p\\.?m\\.?)(?![a-z])"
    ) { g in rangeStart(Array(g[1...6])) ?? rangeStart(Array(g[7...12])) },
    pattern(
      "\\b\(rangeTime)\\s*(?:to|-|–|until|till)\\s*\(rangeTime)"
        + "(?=\\s+(?:this|tomorrow|today|tonight|on|next|in the)\\b)"
    ) { g in rangeStart(Array(g[1...6])) },
    // a trailing "for 4": a clock time when nothing follows it
    pattern("\\bfor\\s+(\\d{1,2})(?:[:：](\\d{2}))?(?=\\s*(?:[,.!?;]|$|\\s+(?:today|tomorrow|tonight)\\b))") {
      g in
      guard let hour = Int(g[1]!), let minute = g[2].map({ Int($0) }) ?? 0 else { return nil }
      return [.time(hour: hour, minute: minute, .unspecified)]
    },
    // on 6/20, and on 14/40 (a date, if an impossible one)
    pattern("\\bon\\s+(\\d{1,2})/(\\d{1,2})(?:/(\\d{4}|\\d{2}))?\\b(?![/\\d.])") { g in
      guard let month = Int(g[1]!), let day = Int(g[2]!) else { return nil }
      return [.absolute(year: year(g[3]), month: month, day: day)]
    },
    // 3 o'clock, at seven o'clock
    pattern("(?:\\bat\\s+)?\\b(\(clockWord))\\s*o['’]?\\s?clock\\b") { g in
      guard let hour = englishValue(g[1]!) else { return nil }
      return [.time(hour: Int(hour), minute: 0, .unspecified)]
    },
    // half past 3, a quarter to 5, quarter past seven
    pattern("(?:\\bat\\s+)?\\b(half|(?:a\\s+)?quarter)\\s+(past|to)\\s+(\(clockWord))\\b") { g in
      guard let hour = englishValue(g[3]!) else { return nil }
      let half = g[1]!.lowercased() == "half"
      if g[2]!.lowercased() == "past" {
        return [.time(hour: Int(hour), minute: half ? 30 : 15, .unspecified)]
      }
      guard !half else { return nil }
      return [.time(hour: Int(hour) - 1, minute: 45, .unspecified)]
    },
    // 9 tonight, 6:15 tomorrow: a bare clock time right before a day or period word
    pattern(
      "\\b(\\d{1,2})(?:[:：](\\d{2}))?(?=\\s+(?:tonight|today|tomorrow|this\\s+(?:morning|afternoon|evening)|in\\s+the\\s+(?:morning|afternoon|evening)|at\\s+night)\\b)"
    ) { g in
      guard let hour = Int(g[1]!), let minute = g[2].map({ Int($0) }) ?? 0 else { return nil }
      return [.time(hour: hour, minute: minute, .unspecified)]
    },
    pattern("\\b(?:at\\s+)?noon\\b|\\bmidday\\b") { _ in [.time(hour: 12, minute: 0, .exact)] },
    pattern("\\b(?:at\\s+)?midnight\\b|午夜") { _ in [.time(hour: 24, minute: 0, .exact)] },
    // tomorrow, tonight, day after tomorrow, this morning
    pattern(englishRelativeDayPattern) { g in
      var word = g[0]!.lowercased()[...]
      if word.hasPrefix("the"), word.dropFirst(3).first?.isWhitespace == true {
        word = word.dropFirst(3).drop(while: \.isWhitespace)
      }
      return englishRelativeDays[String(word)]
    },
    pattern("\\bthis\\s+(morning|afternoon|evening)\\b") { g in
      [.dayOffset(0), .period(englishPeriod(g[1]!))]
    },
    pattern("\\b(good\\s+)?(?:in the\\s+)?(morning|afternoon|evening)\\b|\\bat night\\b") { g in
      guard g[1] == nil else { return nil }  // "good morning" is a greeting
      return [.period(g[2].map(englishPeriod) ?? .evening)]
    },
    // next Friday, on Monday, this Sunday, Fri
    pattern(
      "\\b(?:(next|this|on|coming|this coming)\\s+)?(\(alternatives(WordTable.dates.list("weekdays.en").map(\.word))))\\b(\\s+night\\b)?"
    ) {
      g in
      guard let day = weekdayNumbers[g[2]!.lowercased()] else { return nil }
      let weekday = Part.weekday(day, g[1]?.lowercased() == "next" ? .nextWeek : .upcoming)
      return g[3] == nil ? [weekday] : [weekday, .period(.evening)]
    },
    pattern("\\b(?:tomorrow|tmrw?)\\s+night\\b") { _ in [.dayOffset(1), .period(.evening)] },
    // in 2 hours, in half an hour, in 3 days, in 2 weeks
    pattern("\\bin\\s+\(hedge)(\(englishNumber))\\s+(hours?|hrs?|minutes?|mins?|days?|weeks?|months?)\\b") {
      g in
      guard let amount = englishValue(g[1]!) else { return nil }
      return englishOffset(amount, unit: g[2]!)
    },
    // in an hour and a half, in 1 hour and 30 minutes, in 2 hours 15 minutes
    pattern(
      "\\bin\\s+\(hedge)(\(englishNumber))\\s+(?:hours?|hrs?)\\s+(?:and\\s+)?(?:(a\\s+half)|(\\d+|fifteen|twenty|thirty|forty-five)\\s+(?:minutes?|mins?))\\b"
    ) { g in
      guard let hours = englishValue(g[1]!) else { return nil }
      let minutes = g[2] != nil ? 30 : g[3].flatMap(englishValue) ?? 0
      return englishOffset(hours * 60 + minutes, unit: "minutes")
    },
    // 2 hours from now, 10 minutes later
    pattern("\\b(\(englishNumber))\\s+(hours?|hrs?|minutes?|mins?|days?|weeks?)\\s+(?:from now|later)\\b") {
      g in
      guard let amount = englishValue(g[1]!) else { return nil }
      return englishOffset(amount, unit: g[2]!)
    },
  ]

  /// The first time of a range; without its own am/pm it takes the second's when that keeps
  /// the range in order (2-4pm is 14:00, 11-1pm is 11:00).
  private static func rangeStart(_ g: [Substring?]) -> [Part]? {
    guard let start = g[0].flatMap({ Int($0) }), let end = g[3].flatMap({ Int($0) }) else { return nil }
    let minute = g[1].flatMap { Int($0) } ?? 0
    var kind = meridiem(g[2])
    if kind == .unspecified, g[5] != nil, start <= 12, end <= 12 {
      let endKind = meridiem(g[5])
      kind = start % 12 <= end % 12 ? endKind : (endKind == .pm ? .am : .pm)
    }
    return [.time(hour: start, minute: minute, kind)]
  }

  private static func meridiem(_ text: Substring?) -> Meridiem {
    guard let first = text?.lowercased().first else { return .unspecified }
    return first == "a" ? .am : .pm
  }

  private static func englishPeriod(_ text: Substring) -> Period {
    switch text.lowercased() {
    case "morning": return .morning
    case "afternoon": return .afternoon
    default: return .evening
    }
  }

  private static func englishOffset(_ amount: Double, unit: Substring) -> [Part]? {
    guard amount > 0, amount.isFinite, amount < 100_000 else { return nil }
    let lower = unit.lowercased()
    if lower.hasPrefix("h") { return [.duration(seconds: Int(amount * 3600))] }
    guard !lower.hasPrefix("mo") else {
      return amount == amount.rounded() ? [.monthOffset(Int(amount))] : nil
    }
    if lower.hasPrefix("m") { return [.duration(seconds: Int(amount * 60))] }
    guard amount == amount.rounded() else { return nil }
    return [.dayOffset(Int(amount) * (lower.hasPrefix("w") ? 7 : 1))]
  }

  private static func touchesArithmetic(_ text: String, before index: String.Index) -> Bool {
    guard index > text.startIndex else { return false }
    let previous = text[text.index(before: index)]
    return previous.isNumber || "/.+-*×÷=".contains(previous)
      || (previous == " " && index > text.index(after: text.startIndex)
        && "+-*×÷=/".contains(text[text.index(index, offsetBy: -2)]))
  }

  static func findParts(in text: String) -> [Found] {
    var all: [Found] = []
    for pattern in patterns {
      for match in text.matches(of: pattern.regex) {
        if pattern.standalone, touchesArithmetic(text, before: match.range.lowerBound) { continue }
        let groups = match.output.map(\.substring)
        guard let parts = pattern.build(groups) else { continue }
        all.append(Found(range: match.range, parts: parts))
      }
    }
    all.sort { lhs, rhs in
      lhs.range.lowerBound != rhs.range.lowerBound
        ? lhs.range.lowerBound < rhs.range.lowerBound
        : text.distance(from: lhs.range.lowerBound, to: lhs.range.upperBound)
          > text.distance(from: rhs.range.lowerBound, to: rhs.range.upperBound)
    }
    var accepted: [Found] = []
    for candidate in all
    where accepted.last.map({ candidate.range.lowerBound >= $0.range.upperBound }) ?? true {
      accepted.append(candidate)
    }
    return accepted
  }

  // MARK: - Resolution

  private func resolve(_ parts: [Part], assumedDay: DateComponents? = nil) -> (
    date: Date, hasTime: Bool, periodHours: Range<Int>?, hasDay: Bool
  )? {
    let calendar = clock.calendar
    let now = clock.now
    let today = calendar.dateComponents([.year, .month, .day, .weekday], from: now)
    var dayExplicit = false
    var day = today
    var absoluteWithoutYear = false
    var period: Period?
    var time: (hour: Int, minute: Int, meridiem: Meridiem)?

    for part in parts {
      switch part {
      case .duration(let seconds):
        return (now.addingTimeInterval(TimeInterval(seconds)), true, nil, true)
      case .invalid:
        return nil
      case .absolute(let year, let month, let dayOfMonth):
        guard (1...12).contains(month), (1...31).contains(dayOfMonth) else { return nil }
        day.year = year ?? day.year
        day.month = month
        day.day = dayOfMonth
        absoluteWithoutYear = year == nil
        dayExplicit = true
      case .monthDay(let dayOfMonth):
        guard let next = nextMonthDay(dayOfMonth, from: today) else { return nil }
        day = next
        dayExplicit = true
      case .relativeMonthDay(let months, let dayOfMonth):
        guard (1...31).contains(dayOfMonth),
          var month = shift(firstOfMonth(today), by: months, component: .month)
        else {
          return nil
        }
        month.day = dayOfMonth
        guard makeDate(month, hour: 12, minute: 0) != nil else { return nil }
        day = month
        dayExplicit = true
      case .dayOffset(let offset):
        guard let shifted = shift(day, by: offset, component: .day) else { return nil }
        day = shifted
        dayExplicit = true
      case .monthOffset(let offset):
        guard let shifted = shift(day, by: offset, component: .month) else { return nil }
        day = shifted
        dayExplicit = true
      case .weekday(let target, let mode):
        // Calendar weekday: 1 = Sunday; convert to Monday = 1 ... Sunday = 7.
        let todayNumber = (today.weekday! + 5) % 7 + 1
        let delta: Int
        switch mode {
        case .upcoming:
          // The next such day after today: said on a Friday, "Friday" is a week away.
          delta = (target - todayNumber + 6) % 7 + 1
        case .nextWeek: delta = 7 - todayNumber + target
        }
        guard let shifted = shift(today, by: delta, component: .day) else { return nil }
        day = shifted
        dayExplicit = true
      case .period(let value):
        period = value
      case .time(let hour, let minute, let meridiem):
        guard (0...23).contains(hour) || (hour == 24 && minute == 0), (0...59).contains(minute) else {
          return nil
        }
        time = (hour, minute, meridiem)
      }
    }

    let named = dayExplicit
    if !dayExplicit, let assumedDay {
      day = assumedDay
      dayExplicit = true
    }
    let isToday =
      assumedDay == nil
      && (!dayExplicit || (day.year == today.year && day.month == today.month && day.day == today.day))
    let hasTime = time != nil || period != nil
    var hour = defaultHour
    var minute = 0
    var extraDay = 0
    var nextOccurrence = false
    if let time {
      hour = time.hour
      minute = time.minute
      switch (time.meridiem, period) {
      case (.exact, _):
        break
      case (.am, _):
        guard (1...12).contains(hour) else { return nil }
        if hour == 12 { hour = 0 }
      case (.pm, _):
        guard (1...12).contains(hour) else { return nil }
        if hour < 12 { hour += 12 }
      case (.unspecified, .some(.afternoon)), (.unspecified, .some(.evening)):
        if hour < 12 { hour += 12 } else if hour == 12 && period == .evening { (hour, extraDay) = (0, 1) }
      case (.unspecified, .some(.noon)):
        if hour < 11 { hour += 12 }
      case (.unspecified, .some(.morning)), (.unspecified, .some(.earlyMorning)):
        if hour == 12 { hour = 0 }
      case (.unspecified, .some(.lateNight)):
        // 半夜十二点 is midnight; 深夜十一点 23:00; 半夜三点 03:00.
        if hour == 12 { (hour, extraDay) = (0, 1) } else if hour >= 6 && hour < 12 { hour += 12 }
      case (.unspecified, .none):
        if hour == 0 || hour >= 13 {
          break  // a 24-hour clock time
        } else if !isToday {
          // On another day: 1-5 o'clock is the afternoon, 6-11 the morning, 12 noon.
          if hour <= 5 { hour += 12 }
        } else {
          nextOccurrence = true
        }
      }
      if hour == 24 { (hour, extraDay) = (0, 1) }
      guard (0...23).contains(hour) else { return nil }
    } else if let period {
      hour = period.defaultHour
    }

    if extraDay != 0, let shifted = shift(day, by: extraDay, component: .day) { day = shifted }

    if nextOccurrence {
      // Today (or no day): the next time h:mm or h+12:mm comes.
      let base = hour % 12
      var candidates = [
        makeDate(day, hour: base, minute: minute), makeDate(day, hour: base + 12, minute: minute),
      ]
      if !dayExplicit, let tomorrow = shift(day, by: 1, component: .day) {
        candidates.append(makeDate(tomorrow, hour: base, minute: minute))
      }
      let dates = candidates.compactMap { $0 }
      guard let last = dates.last else { return nil }
      return (dates.first { $0 > now } ?? last, true, nil, named)
    }

    guard var date = makeDate(day, hour: hour, minute: minute) else { return nil }

    if !dayExplicit, date <= now {
      // A time or period with no day that has passed today means tomorrow (早上七点 at 10:00).
      guard let tomorrow = shift(day, by: 1, component: .day),
        let next = makeDate(tomorrow, hour: hour, minute: minute)
      else { return nil }
      date = next
    } else if absoluteWithoutYear,
      let startOfToday = makeDate(today, hour: 0, minute: 0),
      date < startOfToday
    {
      day.year = (day.year ?? 0) + 1
      guard let next = makeDate(day, hour: hour, minute: minute) else { return nil }
      date = next
    }
    return (date, hasTime, time == nil ? period?.hours : nil, named)
  }

  /// The next day numbered `dayOfMonth` from `today` (today included), skipping months too short.
  private func nextMonthDay(_ dayOfMonth: Int, from today: DateComponents) -> DateComponents? {
    guard (1...31).contains(dayOfMonth) else { return nil }
    var month = today
    if dayOfMonth < today.day! {
      guard let next = shift(firstOfMonth(today), by: 1, component: .month) else { return nil }
      month = next
    }
    for _ in 0..<12 {
      var candidate = month
      candidate.day = dayOfMonth
      if makeDate(candidate, hour: 12, minute: 0) != nil { return candidate }
      guard let next = shift(firstOfMonth(month), by: 1, component: .month) else { return nil }
      month = next
    }
    return nil
  }

  private func firstOfMonth(_ day: DateComponents) -> DateComponents {
    var first = day
    first.day = 1
    return first
  }

  private func shift(_ day: DateComponents, by amount: Int, component: Calendar.Component) -> DateComponents?
  {
    let calendar = clock.calendar
    // Noon keeps day arithmetic clear of DST transitions, which happen at night.
    guard let noon = makeDate(day, hour: 12, minute: 0),
      let shifted = calendar.date(byAdding: component, value: amount, to: noon)
    else { return nil }
    return calendar.dateComponents([.year, .month, .day, .weekday], from: shifted)
  }

  private func makeDate(_ day: DateComponents, hour: Int, minute: Int) -> Date? {
    var components = DateComponents()
    components.year = day.year
    components.month = day.month
    components.day = day.day
    components.hour = hour
    components.minute = minute
    components.second = 0
    let calendar = clock.calendar
    guard let date = calendar.date(from: components) else { return nil }
    // Reject rolled-over dates such as 2月30日 rather than silently moving them.
    guard calendar.component(.day, from: date) == day.day else { return nil }
    return date
  }
}
