import Foundation

/// Reads a condition as the user wrote it ("it hails on Sunday", 大阪已经过了晚上九点,
/// "I'm free friday 2-4pm") into a `StepCondition`: its kind, what must hold, whether it is
/// negated, the moment it is about and, for a time, the zone. The words are data in
/// `skill-words.json` (`plan.weather_*`, `plan.calendar_*`, `plan.time_*`, `plan.negations`).
struct ConditionReader: Sendable {
  let clock: AgentClock

  /// The kind of condition `text` states: the weather, then the calendar, then a time of day
  /// in a place, else a fact in memory.
  static func kind(of text: String, zoneKnown: Bool = false) -> StepCondition.Kind {
    let lower = text.lowercased()
    let namesCalendar =
      containsAny(lower, "plan.calendar_free") || containsAny(lower, "plan.calendar_busy")
      || containsAny(lower, "plan.calendar_not_free") || containsAny(lower, "plan.calendar_names")
    // "if my Friday night is open": the user's own time is the calendar's, whatever
    // the word could say of the sky.
    if namesCalendar, containsAny(lower, "plan.calendar_owner") { return .calendar }
    // "if the 3pm slot is clear": a word the calendar and the sky share ("clear") names
    // the weather only with the weather's words around it.
    let onlySharedWord =
      namesCalendar && !containsAny(lower, "plan.weather_nouns")
      && weatherAbout(removing(["plan.calendar_free"], from: lower)) == nil
    if weatherAbout(lower) != nil, !onlySharedWord { return .weather }
    if namesCalendar { return .calendar }
    guard namesTimeOfDay(lower) else { return .memory }
    // A known place names its zone ("later than 8pm in Lisbon", "after noon Sydney time").
    let namesPlace =
      zoneKnown || containsAny(lower, "plan.time_there")
      || PlaceExtractor(clock: .system()).find(in: text)?.place != nil
    if namesPlace { return .time }
    return .memory
  }

  /// Whether `lower` names a time of day ("past 9", 半夜, "working hours", "yet").
  static func namesTimeOfDay(_ lower: String) -> Bool {
    containsAny(lower, "plan.time_words") || lower.contains(where: \.isNumber)
      || ["working", "off_work", "day", "lunch", "now"].contains { containsAny(lower, "plan.time_\($0)") }
  }

  /// The condition `text` states on its own; `kind`, when given, is what the context says it
  /// is about where its words name no kind ("if it seems pleasant" after a look at the forecast).
  func read(
    _ text: String, negatedByMarker: Bool, zone: String? = nil, zoneKnown: Bool = false,
    kind: StepCondition.Kind? = nil
  )
    -> StepCondition?
  {
    readWords(text, negatedByMarker: negatedByMarker, zone: zone, zoneKnown: zoneKnown, kind: kind)
      .map { Self.said($0, negatedByMarker: negatedByMarker) }
  }

  /// `condition` with what its words say kept (`negatedAsSaid`): each kind's `negated` is its
  /// words' reading, flipped by a marker that negates ("unless").
  static func said(_ condition: StepCondition, negatedByMarker: Bool) -> StepCondition {
    var condition = condition
    condition.negatedAsSaid = condition.negated != negatedByMarker
    return condition
  }

  private func readWords(
    _ text: String, negatedByMarker: Bool, zone: String?, zoneKnown: Bool, kind: StepCondition.Kind?
  )
    -> StepCondition?
  {
    let lower = text.lowercased()
    let place = PlaceExtractor(clock: clock).find(in: text)
    let zone = place?.place?.timeZoneIdentifier ?? zone
    let mentionsThere = Self.containsAny(lower, "plan.time_there")
    switch kind
      ?? Self.kind(
        of: text, zoneKnown: place?.place != nil || (zone != nil && (mentionsThere || zoneKnown)))
    {
    case .weather:
      // Bad weather is clear weather negated; so is a bad anything once the context is the
      // weather ("if the air is awful").
      let about =
        Self.weatherAbout(lower)
        ?? (Self.containsAny(lower, "plan.weather_bad") || Self.containsAny(lower, "plan.weather_good")
          ? "clear" : "rain")
      let calledBad =
        about == "clear"
        && (Self.weatherCalledBad(lower) ?? Self.containsAny(lower, "plan.weather_bad"))
      let negated = (Self.isNegated(lower) != negatedByMarker) != calledBad
      return StepCondition(
        kind: .weather, about: about, negated: negated, when: date(in: text), place: place?.text, text: text)
    case .calendar:
      // Named by the context, an item said to be there ("the 3pm review still on") is a busy slot.
      let busy =
        Self.saysBusy(lower)
        || (kind == .calendar && !Self.containsAny(lower, "plan.calendar_free") && !Self.isNegated(lower))
      return StepCondition(
        kind: .calendar, about: "free", negated: busy != negatedByMarker, when: date(in: text), text: text)
    case .time:
      let (about, negated) = timeAbout(lower, text: text)
      return StepCondition(
        kind: .time, about: about, negated: negated != negatedByMarker, zone: zone, place: place?.text,
        text: text)
    case .memory:
      let negated = Self.isNegated(lower) != negatedByMarker
      return StepCondition(kind: .memory, about: text, negated: negated, text: text)
    }
  }

  /// The condition of "if not" / "if so" after `question` (routed to `skill`); `rest` is
  /// what follows the marker ("如果还没到晚上十点": 到晚上十点), read first when it says more.
  func read(
    answering question: String, skill: String, arguments: SkillArguments, rest: String, negatedByMarker: Bool
  ) -> StepCondition? {
    readAnswer(
      answering: question, skill: skill, arguments: arguments, rest: rest, negatedByMarker: negatedByMarker
    )
    .map { Self.said($0, negatedByMarker: negatedByMarker) }
  }

  private func readAnswer(
    answering question: String, skill: String, arguments: SkillArguments, rest: String, negatedByMarker: Bool
  ) -> StepCondition? {
    let zone = arguments["zone"]?.stringValue
    let restLower = rest.lowercased()
    switch skill {
    case "time.now":
      if !rest.isEmpty, Self.containsAny(restLower, "plan.time_words") || rest.contains(where: \.isNumber) {
        let (about, negated) = timeAbout(restLower, text: rest)
        return StepCondition(
          kind: .time, about: about, negated: negated != negatedByMarker, zone: zone,
          text: "\(question) \(rest)")
      }
      let (about, negated) = timeAbout(question.lowercased(), text: question)
      return StepCondition(
        kind: .time, about: about, negated: negated != negatedByMarker, zone: zone, text: question)
    case "weather.current":
      let lower = question.lowercased()
      return StepCondition(
        kind: .weather, about: Self.weatherAbout(lower) ?? "rain", negated: negatedByMarker,
        when: date(in: question),
        place: arguments["city"]?.stringValue, text: question)
    case "calendar.list":
      // "anything on Thursday? if not, ..." asks whether it is busy; "am I free? if not" whether free.
      let lower = question.lowercased()
      // "is my evening open?" asks whether it is free, as "is it free?" does.
      let asksFree =
        (Self.containsAny(lower, "plan.calendar_free") || Self.containsAny(lower, "plan.calendar_free_asked"))
        && !Self.containsAny(lower, "plan.calendar_busy")
      return StepCondition(
        kind: .calendar, about: "free", negated: asksFree ? negatedByMarker : !negatedByMarker,
        when: date(in: question), text: question)
    default:
      return StepCondition(kind: .memory, about: question, negated: negatedByMarker, text: question)
    }
  }

  /// The moment a condition names, or nil (the present).
  private func date(in text: String) -> Date? {
    DateExpressionParser(clock: clock).parse(text)?.date
  }

  /// What a time condition asks and whether it is negated: `after 18:00` ("already past
  /// 6pm", 过了六点), `before 07:00`, or a part of the day (`evening`, `working hours`,
  /// `lunch`, `day`, `off hours`: "closed", 下班); "not yet" and 还没 ask for the opposite
  /// of `after`.
  private func timeAbout(_ lower: String, text: String) -> (String, Bool) {
    let negated = Self.isNegated(lower)
    var about: String?
    if let match = DateExpressionParser(clock: clock).parse(text), match.hasTime {
      var calendar = Calendar(identifier: .gregorian)
      calendar.timeZone = clock.timeZone
      let parts = calendar.dateComponents([.hour, .minute], from: match.date)
      let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
      // "not yet 10pm", 还没到十点: not after 10pm (the negation is the phrase's own, not
      // another one on top of "before").
      if Self.containsAny(lower, "plan.time_not_yet") {
        let other = Self.isNegated(Self.removing(["plan.time_not_yet"], from: lower))
        return ("after \(time)", !other)
      }
      about = Self.containsAny(lower, "plan.time_before") ? "before \(time)" : "after \(time)"
    }
    if about == nil,
      let match = lower.firstMatch(
        of: /\b(past|after|before)\s+(\d{1,2})\b(?!\s*(?:[:.]\d|%|am|pm|a\.m|p\.m))/),
      let hour = Int(match.output.2), hour < 24
    {
      // "past 9 in Tokyo": a bare hour, on the clock as said.
      about = (match.output.1 == "before" ? "before " : "after ") + String(format: "%02d:00", hour)
    }
    if let time = about, negated, time.hasPrefix("after ") {
      // "not yet past 9am", 还没过九点: before 9am, said plainly.
      return ("before " + time.dropFirst("after ".count), false)
    }
    if about == nil, Self.containsAny(lower, "plan.time_off_work") {
      // "already closed there", 下班了: outside working hours.
      return ("off hours", negated)
    }
    if about == nil {
      for period in ["working", "lunch", "day", "night", "evening", "afternoon", "morning"]
      where Self.containsAny(lower, "plan.time_\(period)") {
        about = period == "working" ? "working hours" : period
        break
      }
    }
    return (about ?? "after 00:00", negated)
  }

  /// The weather a text names (`rain`, `snow`, `freeze`, `heat`, `wind`, `storm`, `clear`), or nil;
  /// the weather called good or bad ("should the weather be fine", 天气差的话) is `clear`.
  static func weatherAbout(_ lower: String) -> String? {
    for about in ["storm", "snow", "freeze", "rain", "cold", "heat", "wind", "cloudy", "clear"]
    where containsAny(lower, "plan.weather_\(about)") {
      return about
    }
    return weatherCalledBad(lower) != nil ? "clear" : nil
  }

  /// Whether a text calls the weather bad (true) or good (false) without naming one kind of
  /// it; nil when it does neither.
  static func weatherCalledBad(_ lower: String) -> Bool? {
    guard containsAny(lower, "plan.weather_nouns") else { return nil }
    if containsAny(lower, "plan.weather_bad") { return true }
    return containsAny(lower, "plan.weather_good") ? false : nil
  }

  /// `lower` without the phrases of `lists` (so their own "no" and 没 are not read as negation).
  static func removing(_ lists: [String], from lower: String) -> String {
    var rest = lower
    for word in lists.flatMap(SkillWords.list).sorted(by: { $0.count > $1.count }) {
      rest = rest.replacingOccurrences(of: word, with: " ")
    }
    return rest
  }

  static func isNegated(_ lower: String) -> Bool {
    containsAny(lower.replacingOccurrences(of: "’", with: "'"), "plan.negations")
  }

  /// Whether `lower` holds a word of `list`: a Latin word with letters on neither side
  /// ("rain" in "raining?" no, in "rain tomorrow" yes), any other as written.
  /// Whether a condition on the calendar asks whether something is on it ("if I have a
  /// meeting", "if there's one with the bank", 有的话) rather than whether it is free.
  static func saysBusy(_ lower: String) -> Bool {
    if containsAny(lower, "plan.calendar_not_free") { return true }
    return (containsAny(lower, "plan.calendar_busy") || containsAny(lower, "plan.calendar_exists"))
      && !containsAny(lower, "plan.calendar_free")
  }

  static func containsAny(_ lower: String, _ list: String) -> Bool {
    SkillWords.list(list).contains { word in
      guard word.unicodeScalars.contains(where: { $0.isASCII && CharacterSet.letters.contains($0) }) else {
        return lower.contains(word)
      }
      var searchFrom = lower.startIndex
      while let range = lower.range(of: word, range: searchFrom..<lower.endIndex) {
        let before = range.lowerBound == lower.startIndex ? nil : lower[lower.index(before: range.lowerBound)]
        let after = range.upperBound == lower.endIndex ? nil : lower[range.upperBound]
        let startsWithLetter = word.first?.isLetter ?? false
        let endsWithLetter = word.last?.isLetter ?? false
        if !(startsWithLetter && (before?.isASCII ?? false) && (before?.isLetter ?? false))
          && !(endsWithLetter && (after?.isASCII ?? false) && (after?.isLetter ?? false))
        {
          return true
        }
        searchFrom = range.upperBound
      }
      return false
    }
  }
}
