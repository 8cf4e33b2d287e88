import Engram
import Foundation

/// Finds the reminder or event a cancel or change request means, by what was said: title
/// words, the day or time it is at, "it"/"that" (the item last created or shown in this
/// conversation), or, after the agent listed several, a number or id picking one.
struct AgendaTarget {
  /// The kind the skill acts on; the other kind is searched when none of this one fits.
  var kind: AgentItemKind
  /// The skill asking (for its question texts).
  var verb: Verb

  enum Verb { case cancel, update }

  /// The outcome of a search.
  enum Outcome {
    case found(AgentItem)
    case several([AgentItem])
    case none(said: String?)
  }

  /// The arguments the resolver reads: `target` (title words, `it`, or an answer picking one
  /// of `candidates`), `at` (a day or time the item is at, as written), `candidates` (ids the
  /// agent offered, comma separated), `id` (an id given outright).
  func resolve(_ arguments: SkillArguments, context: SkillContext) async throws -> Outcome {
    let agenda = context.agenda
    let clock = context.clock
    // Everything not yet past (from the start of today), and reminders not yet delivered.
    let startOfToday = clock.calendar.startOfDay(for: clock.now)
    func items(_ kind: AgentItemKind) async throws -> [AgentItem] {
      try await agenda.agenda(kind: kind, from: nil, to: nil).filter { item in
        (item.dueAt ?? .distantPast) >= startOfToday || (item.kind == .reminder && item.deliveredAt == nil)
      }
    }
    let own = try await items(kind)
    let other = try await items(kind == .reminder ? .event : .reminder)
    let everything = own + other
    if let id = arguments["id"]?.intValue {
      guard let item = everything.first(where: { $0.id == Int64(id) }) else { return .none(said: "#\(id)") }
      return .found(item)
    }
    let target = arguments["target"]?.stringValue
    if let offered = arguments["candidates"]?.stringValue {
      let ids = offered.split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
      let candidates = ids.compactMap { id in everything.first { $0.id == id } }
      if let target, let picked = Self.pick(target, among: candidates) { return picked }
    }
    let at = arguments["at"]?.stringValue.flatMap { DateExpressionParser(clock: clock).parse($0) }
    let words = target.flatMap {
      AgendaWords.refersBack($0) && AgendaWords.contentWords(of: $0, removing: []) == nil ? nil : $0
    }
    let refersBack = target.map(AgendaWords.refersBack) ?? false

    // "it", "that": the item last created or shown.
    if words == nil, at == nil, refersBack || target == nil {
      let recent = context.recentItems.compactMap { id in everything.first { $0.id == id } }
      let recentOwn = recent.filter { $0.kind == kind }
      let focus = recentOwn.isEmpty ? recent : recentOwn
      if focus.count == 1 { return .found(focus[0]) }
      if focus.count > 1 { return .several(focus) }
      if refersBack { return .none(said: nil) }
    }
    for (index, pool) in [own, other].enumerated() {
      // The other kind is searched only for an item named by words or time.
      if index == 1, words == nil, at == nil { break }
      var matches = pool
      if let words {
        let scored = pool.map { ($0, AgendaWords.score(words, title: $0.title)) }
        let best = scored.map(\.1).max() ?? 0
        // Words naming nothing stored ("the 2pm meeting" for "project review") leave the
        // day or time to decide, when one was said.
        matches = best > 0 ? scored.filter { $0.1 == best }.map(\.0) : (at == nil ? [] : pool)
      }
      if let at, !matches.isEmpty {
        matches = Self.narrow(matches, to: at, calendar: clock.calendar)
      }
      if words == nil, at == nil, pool.count > 1 { return .several(pool) }
      if matches.count == 1 { return .found(matches[0]) }
      if matches.count > 1 { return .several(matches) }
    }
    return .none(said: [target, arguments["at"]?.stringValue].compactMap { $0 }.joined(separator: " "))
  }

  /// The items at the time `at` names (to the minute, when it has a time and some are), else
  /// on its day.
  static func narrow(_ items: [AgentItem], to at: DateExpressionMatch, calendar: Calendar)
    -> [AgentItem]
  {
    guard at.hasDay else {
      // A time alone ("the 3pm one"): the items at that time of day, whatever the day.
      guard at.hasTime, at.periodHours == nil else { return items }
      let wanted = calendar.dateComponents([.hour, .minute], from: at.date)
      return items.filter { item in
        item.dueAt.map { calendar.dateComponents([.hour, .minute], from: $0) == wanted } ?? false
      }
    }
    let sameDay = items.filter { $0.dueAt.map { calendar.isDate($0, inSameDayAs: at.date) } ?? false }
    guard at.hasTime else { return sameDay }
    if let hours = at.periodHours {
      // "Saturday afternoon": the items of that day within the period.
      let inPeriod = sameDay.filter { item in
        item.dueAt.map { hours.contains(calendar.component(.hour, from: $0)) } ?? false
      }
      return inPeriod.isEmpty ? sameDay : inPeriod
    }
    let sameTime = sameDay.filter { abs(($0.dueAt ?? .distantPast).timeIntervalSince(at.date)) < 60 }
    return sameTime.isEmpty ? sameDay : sameTime
  }

  /// The candidate an answer picks: its number in the list (`2`, `the second`, 第二个), its
  /// id (`#12`), or title words only one of them has.
  static func pick(_ answer: String, among candidates: [AgentItem]) -> Outcome? {
    guard !candidates.isEmpty else { return nil }
    let trimmed = answer.lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
    if trimmed.hasPrefix("#"), let id = Int64(trimmed.dropFirst()) {
      return candidates.first { $0.id == id }.map(Outcome.found)
    }
    let lower = trimmed.trimmingCharacters(in: .punctuationCharacters)
    if let number = Int(lower) {
      if (1...candidates.count).contains(number) { return .found(candidates[number - 1]) }
      return candidates.first { $0.id == Int64(number) }.map(Outcome.found)
    }
    let ordinals: [(words: [String], index: Int)] = [
      (["first", "the first", "first one", "the first one", "第一个", "第一", "一"], 0),
      (["second", "the second", "second one", "the second one", "第二个", "第二", "二"], 1),
      (["third", "the third", "third one", "the third one", "第三个", "第三", "三"], 2),
      (["fourth", "the fourth", "第四个", "第四", "四"], 3),
      (["fifth", "the fifth", "第五个", "第五", "五"], 4),
      (["last", "the last", "last one", "the last one", "最后一个", "最后那个"], candidates.count - 1),
    ]
    for ordinal in ordinals where ordinal.words.contains(lower) {
      return candidates.indices.contains(ordinal.index) ? .found(candidates[ordinal.index]) : nil
    }
    if ["all", "both", "all of them", "都", "全部", "都要"].contains(lower) { return nil }
    guard let words = AgendaWords.contentWords(of: answer, removing: []) else { return nil }
    let scored = candidates.map { ($0, AgendaWords.score(words, title: $0.title)) }
    let best = scored.map(\.1).max() ?? 0
    let top = scored.filter { $0.1 == best && best > 0 }.map(\.0)
    return top.count == 1 ? .found(top[0]) : nil
  }

  /// The arguments `extractArguments` reads from a request: title words or `it` as
  /// `target`, and the first day or time as `at` (for a change with two, the first says which
  /// item, the last the new time: see `AgendaUpdateSkill`).
  static func extract(
    from text: String, clock: AgentClock, identifyingDate: DateExpressionMatch?,
    removing: [Range<String.Index>]
  )
    -> SkillArguments
  {
    var arguments = SkillArguments()
    if let words = AgendaWords.contentWords(of: text, removing: removing) {
      arguments["target"] = .string(words)
    } else if AgendaWords.refersBack(text) {
      arguments["target"] = .string("it")
    }
    if let identifyingDate { arguments["at"] = .string(String(text[identifyingDate.range])) }
    return arguments
  }

  // MARK: - Texts

  func noneText(said: String?, language: MessageLanguage) -> String {
    let noun = AgendaWords.noun(kind, language)
    switch language {
    case .english:
      if let said, !said.isEmpty {
        return
          "I couldn't find \(kind == .event ? "an" : "a") \(noun) matching “\(said)”. Nothing was changed."
      }
      return "I couldn't tell which \(noun) you mean, and you have none coming up. Nothing was changed."
    case .chinese:
      if let said, !said.isEmpty { return "没有找到和「\(said)」相符的\(noun)，没有做任何改动。" }
      return "不确定你指的是哪个\(noun)，你接下来也没有\(noun)。没有做任何改动。"
    }
  }

  func whichQuestion(_ items: [AgentItem], clock: AgentClock, language: MessageLanguage) -> String {
    let lines = items.prefix(10).enumerated().map { offset, item in
      AgendaWords.line(item, clock: clock, language: language, number: offset + 1)
    }
    let ask: String
    switch (verb, language) {
    case (.cancel, .english): ask = "Which one should I cancel? Answer with its number or id."
    case (.update, .english): ask = "Which one should I change? Answer with its number or id."
    case (.cancel, .chinese): ask = "要取消哪一个？回复编号或 id。"
    case (.update, .chinese): ask = "要修改哪一个？回复编号或 id。"
    }
    let intro = language == .english ? "Several match:" : "有几个相符："
    return ([intro] + lines + [ask]).joined(separator: "\n")
  }
}
