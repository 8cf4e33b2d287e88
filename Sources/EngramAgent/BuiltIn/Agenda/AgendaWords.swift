import Engram
import EngramCore
import Foundation

/// How requests about stored reminders and events are read: which words name the item, which
/// stretch of time a listing covers, how far a change shifts it. Shared by the list, cancel
/// and update skills of reminders and events.
enum AgendaWords {
  /// Words that never name an item: the verbs of listing, cancelling and moving, the nouns
  /// of the kinds, pronouns and politeness. Longest first when stripped.
  static let stopPhrases: [String] = SkillWords.list("agenda.stop_phrases")

  /// `text` as the date parser reads it best: a day's possessive is the day ("tomorrow's
  /// review" is "tomorrow review"), "next week Tuesday" is "next Tuesday".
  static func normalized(_ text: String) -> String {
    text.replacing(
      /(?i)\bnext week(?:\s+on)?\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun)\b/
    ) { match in "next \(match.output.1)" }.replacing(
      /(?i)\b(today|tomorrow|tonight|yesterday|monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|weekend)['’]s\b/
    ) { match in String(match.output.1) }
  }

  /// Words that point at the item last created or shown: "cancel it", "move that to 10", 把它改到.
  static let referenceWords = SkillWords.list("agenda.reference_words")

  /// The content words of `text` once `removing` (date spans) and every stop phrase are gone;
  /// nil when nothing that could name an item is left.
  static func contentWords(of text: String, removing ranges: [Range<String.Index>]) -> String? {
    var working = text
    for range in ranges.sorted(by: { $0.lowerBound > $1.lowerBound }) {
      working.replaceSubrange(range, with: " ")
    }
    // Words separated by single spaces and padded, so English phrases match whole words.
    working =
      " "
      + working.lowercased().map { character -> String in
        character.isLetter || character.isNumber || character == "'" ? String(character) : " "
      }.joined().split(separator: " ").joined(separator: " ") + " "
    // Chinese stop phrases are cut wherever they are; English ones only as whole words.
    for phrase in stopPhrases.sorted(by: { $0.count > $1.count }) {
      let cjk = phrase.unicodeScalars.first?.isCJKIdeograph == true
      let pattern = cjk ? phrase : " \(phrase) "
      while working.contains(pattern) {
        working = working.replacingOccurrences(of: pattern, with: " ")
      }
    }
    // A lone ideograph left over is a particle more often than a name.
    let words = working.split(separator: " ").filter { chunk in
      !(chunk.count == 1 && chunk.unicodeScalars.first?.isCJKIdeograph == true)
    }
    return words.isEmpty ? nil : words.joined(separator: " ")
  }

  /// Whether `text` refers to something already in the conversation ("it", "that one", 那个).
  static func refersBack(_ text: String) -> Bool {
    let tokens = Set(Tokenizer.routing.terms(text))
    return referenceWords.contains { word in
      word.unicodeScalars.first?.isCJKIdeograph == true ? text.contains(word) : tokens.contains(word)
    }
  }

  /// How well `words` name an item titled `title`: the number of the words' tokens found in
  /// the title (an English word matches a title word it starts, so "bill" finds "bills").
  static func score(_ words: String, title: String) -> Int {
    let titleTokens = Tokenizer.routing.terms(title)
    return Set(Tokenizer.routing.terms(words)).reduce(0) { total, token in
      let found = titleTokens.contains { titleToken in
        titleToken == token
          || (token.count >= 3 && token.allSatisfy(\.isASCII)
            && (titleToken.hasPrefix(token) || token.hasPrefix(titleToken) && titleToken.count >= 3))
      }
      return total + (found ? 1 : 0)
    }
  }

  /// Every readable date expression in `text`, in order, with its range in `text`.
  static func dates(in text: String, clock: AgentClock) -> [DateExpressionMatch] {
    var matches: [DateExpressionMatch] = []
    var start = text.startIndex
    let parser = DateExpressionParser(clock: clock)
    while start < text.endIndex {
      let rest = String(text[start...])
      guard let reading = parser.read(rest) else { break }
      let offset = text.distance(from: text.startIndex, to: start)
      let lower = text.index(
        text.startIndex, offsetBy: offset + rest.distance(from: rest.startIndex, to: reading.range.lowerBound)
      )
      let upper = text.index(
        text.startIndex, offsetBy: offset + rest.distance(from: rest.startIndex, to: reading.range.upperBound)
      )
      if case .date(var match) = reading {
        match.range = lower..<upper
        matches.append(match)
      }
      guard upper > start else { break }
      start = upper
    }
    return matches
  }

  // MARK: - Stretches of time

  /// The stretch of time a listing request names: a week, a weekend, a month or a date
  /// expression (a day, a period of a day, from a time to the end of its day); nil when it
  /// names none (then everything upcoming is listed). `range` is where it was written.
  static func span(in text: String, clock: AgentClock) -> (span: Range<Date>, range: Range<String.Index>?)? {
    let calendar = clock.calendar
    let now = clock.now
    let today = calendar.startOfDay(for: now)
    // Monday = 0 ... Sunday = 6.
    let weekdayIndex = (calendar.component(.weekday, from: now) + 5) % 7
    func day(_ offset: Int) -> Date { calendar.date(byAdding: .day, value: offset, to: today)! }
    let weeks: [(words: [String], span: () -> Range<Date>)] = [
      (
        ["next week", "下周", "下个星期", "下星期", "下个礼拜", "下礼拜"], { day(7 - weekdayIndex)..<day(14 - weekdayIndex) }
      ),
      (
        ["this weekend", "the weekend", "weekend", "这个周末", "这周末", "周末"],
        {
          weekdayIndex == 6 ? now..<day(1) : max(now, day(5 - weekdayIndex))..<day(7 - weekdayIndex)
        }
      ),
      (
        ["this week", "the week", "rest of the week", "这周", "本周", "这个星期", "这星期", "这个礼拜", "这礼拜"],
        {
          now..<day(7 - weekdayIndex)
        }
      ),
      (["next few days", "coming days", "few days", "这几天", "最近几天", "未来几天"], { now..<day(4) }),
      (
        ["this month", "这个月", "本月"],
        {
          let start = calendar.date(from: calendar.dateComponents([.year, .month], from: now))!
          return now..<calendar.date(byAdding: .month, value: 1, to: start)!
        }
      ),
      (
        ["next month", "下个月", "下月"],
        {
          let start = calendar.date(from: calendar.dateComponents([.year, .month], from: now))!
          let next = calendar.date(byAdding: .month, value: 1, to: start)!
          return next..<calendar.date(byAdding: .month, value: 1, to: next)!
        }
      ),
    ]
    let lower = text.lowercased()
    for week in weeks {
      for word in week.words {
        if let found = lower.range(of: word) {
          let start = text.index(
            text.startIndex, offsetBy: lower.distance(from: lower.startIndex, to: found.lowerBound))
          let end = text.index(start, offsetBy: word.count)
          return (week.span(), start..<end)
        }
      }
    }
    guard let match = DateExpressionParser(clock: clock).parse(text) else { return nil }
    return (match.span(in: calendar), match.range)
  }

  // MARK: - Shifts

  /// A relative change named in `text` ("push it back an hour", "30 minutes earlier",
  /// 推迟两个小时, 提前半小时): the signed seconds and where it was written; nil when none.
  static func shift(in text: String) -> (seconds: Int, range: Range<String.Index>)? {
    let lower = text.lowercased()
    // "to next week", 推到下周 (no weekday named): the same weekday and time a week later.
    if let match = lower.firstMatch(
      of:
        /next week(?!\s*(?:on\s+)?(?:mon|tue|wed|thu|fri|sat|sun|end))|(?:下周|下个星期|下星期|下礼拜)(?![一二三四五六日天末1-7])/)
    {
      return (7 * 86_400, rangeIn(text, lower, match.range))
    }
    let english =
      /(?<amount>an?|one|two|three|four|five|six|half an?|\d+(?:\.\d+)?)\s*(?<unit>hours?|hrs?|minutes?|mins?|days?|weeks?)/
    if let match = lower.firstMatch(of: english) {
      let earlier = ["earlier", "forward", "move up", "moved up", "sooner", "before"].contains {
        lower.contains($0)
      }
      let later = ["later", "back", "postpone", "delay", "push", "after"].contains { lower.contains($0) }
      guard earlier || later else { return nil }
      let amounts: [String: Double] = [
        "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "half a": 0.5,
        "half an": 0.5,
      ]
      guard let amount = amounts[String(match.output.amount)] ?? Double(match.output.amount) else {
        return nil
      }
      let seconds = amount * unitSeconds(String(match.output.unit))
      return (Int(earlier && !later ? -seconds : seconds), rangeIn(text, lower, match.range))
    }
    let chinese =
      /(?<verb>推迟|延后|往后推|推后|晚|提前|早)(?<amount>半|一|两|二|三|四|五|六|\d+)?(?:个)?(?<half>半)?(?<unit>小时|钟头|分钟|天|周|星期|礼拜)/
    if let match = lower.firstMatch(of: chinese) {
      let numbers: [String: Double] = ["半": 0.5, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6]
      var amount = match.output.amount.map { numbers[String($0)] ?? Double($0) ?? 1 } ?? 1
      if match.output.half != nil { amount += 0.5 }
      let unit: Double
      switch match.output.unit {
      case "小时", "钟头": unit = 3600
      case "分钟": unit = 60
      case "天": unit = 86_400
      default: unit = 604_800
      }
      let earlier = ["提前", "早"].contains(String(match.output.verb))
      let seconds = amount * unit
      return (Int(earlier ? -seconds : seconds), rangeIn(text, lower, match.range))
    }
    return nil
  }

  private static func unitSeconds(_ unit: String) -> Double {
    if unit.hasPrefix("h") { return 3600 }
    if unit.hasPrefix("m") { return 60 }
    if unit.hasPrefix("d") { return 86_400 }
    return 604_800
  }

  /// `range` of `lower` (text lowercased, same characters) as a range of `text`.
  private static func rangeIn(_ text: String, _ lower: String, _ range: Range<String.Index>) -> Range<
    String.Index
  > {
    let start = lower.distance(from: lower.startIndex, to: range.lowerBound)
    let length = lower.distance(from: range.lowerBound, to: range.upperBound)
    let from = text.index(text.startIndex, offsetBy: min(start, text.count))
    return from..<text.index(from, offsetBy: min(length, text.distance(from: from, to: text.endIndex)))
  }

  // MARK: - Rendering

  /// One line of a listing: `“call the dentist” 2025-06-17 09:00 (Tue) #12`.
  static func line(
    _ item: AgentItem, clock: AgentClock, language: MessageLanguage, number: Int? = nil,
    marksReminders: Bool = false
  ) -> String {
    let when = item.dueAt.map { TextCues.render($0, clock: clock, language: language) } ?? ""
    let prefix = number.map { "\($0). " } ?? ""
    let id = item.id.map(String.init) ?? "-"
    switch language {
    case .english:
      let kind = marksReminders && item.kind == .reminder ? " (reminder)" : ""
      return "\(prefix)“\(item.title)” \(when)\(kind) #\(id)"
    case .chinese:
      let kind = marksReminders && item.kind == .reminder ? "（提醒）" : ""
      return "\(prefix)「\(item.title)」\(when)\(kind) #\(id)"
    }
  }

  /// The noun of a kind.
  static func noun(_ kind: AgentItemKind, _ language: MessageLanguage) -> String {
    switch (kind, language) {
    case (.reminder, .english): return "reminder"
    case (.reminder, .chinese): return "提醒"
    case (_, .english): return "event"
    case (_, .chinese): return "日程"
    }
  }
}
