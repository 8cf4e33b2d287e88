import Engram
import Foundation

/// `reminder.cancel` and `calendar.cancel`: deletes a stored reminder or event the request
/// names ("cancel the dentist reminder", "不用提醒我交房租了", "cancel it"), after showing it and
/// asking for confirmation; several candidates are listed and the next line picks one.
public struct AgendaCancelSkill: Skill {
  /// What is cancelled.
  public let kind: AgentItemKind

  /// Creates the skill cancelling `kind` (`.reminder` or `.event`).
  public init(kind: AgentItemKind) { self.kind = kind == .reminder ? .reminder : .event }

  public var id: String { kind == .reminder ? "reminder.cancel" : "calendar.cancel" }
  public var displayName: String { kind == .reminder ? "Cancel reminder" : "Cancel event" }
  public var description: String {
    "Cancels (deletes) one of the user's stored \(kind == .reminder ? "reminders" : "calendar events"), found by title words, its day or time, or 'it' for the one just mentioned; confirms first."
  }
  public var inputSchema: SkillInputSchema { AgendaChange.schema(update: false) }
  public var isDestructive: Bool { true }
  public var category: String { "office" }
  public var tags: Set<String> { ["office", "productivity"] }

  public func extractArguments(from said: String, clock: AgentClock) -> SkillArguments {
    let text = AgendaWords.normalized(said)
    let dates = AgendaWords.dates(in: text, clock: clock)
    return AgendaTarget.extract(
      from: text, clock: clock, identifyingDate: dates.first, removing: dates.map(\.range))
  }

  public func prepare(arguments: SkillArguments, context: SkillContext) async throws -> SkillPreparation {
    try await AgendaChange.prepare(arguments, kind: kind, verb: .cancel, context: context)
  }

  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    let (title, when) = AgendaChange.current(arguments, context: context)
    let noun = AgendaWords.noun(AgendaChange.kind(of: arguments, default: kind), context.language)
    switch context.language {
    case .english: return "Cancel the \(noun) “\(title)” at \(when)?"
    case .chinese: return "取消\(noun)「\(title)」（\(when)）？"
    }
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    guard let id = arguments["id"]?.intValue else { throw SkillError.missingArgument(name: "id") }
    let itemKind = AgendaChange.kind(of: arguments, default: kind)
    let (title, when) = AgendaChange.current(arguments, context: context)
    try await context.agenda.deleteItem(Int64(id))
    let noun = AgendaWords.noun(itemKind, context.language)
    let message =
      context.language == .english
      ? "Cancelled the \(noun) “\(title)” (\(when))." : "已取消\(noun)「\(title)」（\(when)）。"
    return .removed(
      CreatedItem(
        kind: itemKind == .reminder ? .reminder : .event, id: Int64(id), title: title,
        date: arguments["current_when"]?.dateValue), message: message)
  }
}

/// `reminder.update` and `calendar.update`: moves a stored reminder or event to a new time
/// ("make it 4 instead", 把体检挪到周一, "push the standup back an hour"), after showing
/// the change and asking for confirmation. A time alone keeps the item's day; a day alone
/// keeps its time of day; a day and a time before the new one say which item is meant.
public struct AgendaUpdateSkill: Skill {
  /// What is changed.
  public let kind: AgentItemKind

  /// Creates the skill changing `kind` (`.reminder` or `.event`).
  public init(kind: AgentItemKind) { self.kind = kind == .reminder ? .reminder : .event }

  public var id: String { kind == .reminder ? "reminder.update" : "calendar.update" }
  public var displayName: String { kind == .reminder ? "Change reminder" : "Reschedule event" }
  public var description: String {
    "Moves one of the user's stored \(kind == .reminder ? "reminders" : "calendar events") to a new time (or renames it), found by title words, its day or time, or 'it' for the one just mentioned; confirms first."
  }
  public var inputSchema: SkillInputSchema { AgendaChange.schema(update: true) }
  public var category: String { "office" }
  public var tags: Set<String> { ["office", "productivity"] }

  public func extractArguments(from said: String, clock: AgentClock) -> SkillArguments {
    let text = Self.markingBareTimes(AgendaWords.normalized(said))
    let shift = AgendaWords.shift(in: text)
    var dates = AgendaWords.dates(in: text, clock: clock)
    if let shift { dates.removeAll { $0.range.overlaps(shift.range) } }
    var removing = dates.map(\.range)
    if let shift { removing.append(shift.range) }
    // Two dates: the first says which item, the last the new time. One: the new time.
    let identifying = (shift != nil ? dates.first : (dates.count >= 2 ? dates.first : nil))
    var arguments = AgendaTarget.extract(
      from: text, clock: clock, identifyingDate: identifying, removing: removing)
    if let shift {
      arguments["shift_minutes"] = .int(shift.seconds / 60)
    } else if let last = dates.last {
      arguments["to"] = .string(String(text[last.range]))
    }
    return arguments
  }

  public func prepare(arguments: SkillArguments, context: SkillContext) async throws -> SkillPreparation {
    let prepared = try await AgendaChange.prepare(arguments, kind: kind, verb: .update, context: context)
    guard case .ready(var ready) = prepared else { return prepared }
    if ready["when"] == nil, let current = ready["current_when"]?.dateValue {
      if let minutes = ready["shift_minutes"]?.intValue {
        ready["when"] = .date(current.addingTimeInterval(TimeInterval(minutes * 60)))
      } else if let written = ready["to"]?.stringValue,
        let new = Self.newTime(written, from: current, clock: context.clock)
      {
        ready["when"] = .date(new)
      }
    }
    guard ready["when"] != nil || ready["title"] != nil else {
      let question =
        context.language == .english
        ? "To when should I move “\(ready["current_title"]?.stringValue ?? "")”?"
        : "要把「\(ready["current_title"]?.stringValue ?? "")」改到什么时候？"
      ready["to"] = nil
      return .ask(parameter: "to", question: question, arguments: ready)
    }
    return .ready(ready)
  }

  /// `text` with a bare hour after "to"/"for"/"until"/"make it" read as a time: "move it to
  /// 10" is "move it to at 10" (the date parser needs "at 10" or "10am" to see a time).
  static func markingBareTimes(_ text: String) -> String {
    text.replacing(
      /(?i)\b(to|for|until|till|make it|make that)\s+(\d{1,2}(?::\d{2})?)(?=\s*(?:$|[.,!?;]|instead|please|pls|then|tomorrow|today|on\b))/
    ) { match in "\(match.output.1) at \(match.output.2)" }
  }

  /// The new time `written` names for an item now at `current`: a time alone on the item's
  /// day, a day alone at the item's time of day.
  static func newTime(_ written: String, from current: Date, clock: AgentClock) -> Date? {
    guard
      let match = DateExpressionParser(clock: clock).read(written, onDay: current).flatMap({ reading in
        if case .date(let match) = reading { return match }
        return nil
      })
    else { return nil }
    if match.hasTime { return match.date }
    // A day alone: the item's own time of day on it.
    let calendar = clock.calendar
    let time = calendar.dateComponents([.hour, .minute], from: current)
    return calendar.date(
      bySettingHour: time.hour ?? 9, minute: time.minute ?? 0, second: 0, of: match.date)
  }

  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    let (title, when) = AgendaChange.current(arguments, context: context)
    let noun = AgendaWords.noun(AgendaChange.kind(of: arguments, default: kind), context.language)
    let new = arguments["when"]?.dateValue.map {
      TextCues.render($0, clock: context.clock, language: context.language)
    }
    let newTitle = arguments["title"]?.stringValue
    switch context.language {
    case .english:
      var text = "Move the \(noun) “\(title)” from \(when)"
      if let new { text += " to \(new)" }
      if let newTitle { text += new == nil ? ", renaming it “\(newTitle)”" : " and rename it “\(newTitle)”" }
      return text + "?"
    case .chinese:
      var text = "把\(noun)「\(title)」从 \(when)"
      if let new { text += " 改到 \(new)" }
      if let newTitle { text += "，并改名为「\(newTitle)」" }
      return text + "？"
    }
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    guard let id = arguments["id"]?.intValue else { throw SkillError.missingArgument(name: "id") }
    let updated = try await context.agenda.updateItem(
      Int64(id), title: arguments["title"]?.stringValue, due: arguments["when"]?.dateValue)
    let when =
      updated.dueAt.map { TextCues.render($0, clock: context.clock, language: context.language) } ?? ""
    let noun = AgendaWords.noun(updated.kind, context.language)
    let message =
      context.language == .english
      ? "Done: the \(noun) “\(updated.title)” is now at \(when)." : "好的：\(noun)「\(updated.title)」已改到 \(when)。"
    return .changed(
      CreatedItem(
        kind: updated.kind == .reminder ? .reminder : .event, id: updated.id ?? 0, title: updated.title,
        date: updated.dueAt),
      message: message)
  }
}

/// What the cancel and update skills share: their schema and the search for the item.
enum AgendaChange {
  static func schema(update: Bool) -> SkillInputSchema {
    var parameters = [
      SkillParameter(
        "target", .string, required: false,
        description: "which item: words of its title, or 'it' for the one just mentioned"),
      SkillParameter("at", .string, required: false, description: "the day or time the item is at, as said"),
      SkillParameter("id", .int, required: false, description: "the item's id, when known"),
      SkillParameter(
        "candidates", .string, required: false, description: "ids offered to choose from", isInternal: true),
      SkillParameter(
        "current_title", .string, required: false, description: "the item's title (filled in)",
        isInternal: true),
      SkillParameter(
        "current_when", .date, required: false, description: "the item's time (filled in)", isInternal: true),
      SkillParameter(
        "kind", .string, required: false, description: "reminder or event (filled in)", isInternal: true),
    ]
    if update {
      parameters += [
        SkillParameter(
          "to", .string, required: false, description: "the new time, as said: 10, Friday, Thursday at 3"),
        SkillParameter(
          "shift_minutes", .int, required: false, description: "move by this many minutes (negative: earlier)"
        ),
        SkillParameter("when", .date, required: false, description: "the new time"),
        SkillParameter("title", .string, required: false, description: "a new title"),
      ]
    }
    return SkillInputSchema(parameters)
  }

  static func kind(of arguments: SkillArguments, default kind: AgentItemKind) -> AgentItemKind {
    arguments["kind"]?.stringValue.flatMap(AgentItemKind.init(rawValue:)) ?? kind
  }

  static func current(_ arguments: SkillArguments, context: SkillContext) -> (title: String, when: String) {
    let title = arguments["current_title"]?.stringValue ?? "#\(arguments["id"]?.intValue ?? 0)"
    let when =
      arguments["current_when"]?.dateValue.map {
        TextCues.render($0, clock: context.clock, language: context.language)
      }
      ?? ""
    return (title, when)
  }

  /// Finds the item and fills `id`, `kind`, `current_title` and `current_when`; asks which
  /// one when several fit, or replies that none does.
  static func prepare(
    _ arguments: SkillArguments, kind: AgentItemKind, verb: AgendaTarget.Verb, context: SkillContext
  ) async throws -> SkillPreparation {
    let finder = AgendaTarget(kind: kind, verb: verb)
    switch try await finder.resolve(arguments, context: context) {
    case .found(let item):
      var ready = arguments
      ready["id"] = .int(Int(item.id ?? 0))
      ready["kind"] = .string(item.kind.rawValue)
      ready["current_title"] = .string(item.title)
      if let due = item.dueAt { ready["current_when"] = .date(due) }
      ready["candidates"] = nil
      return .ready(ready)
    case .several(let items):
      var asking = arguments
      asking["candidates"] = .string(
        items.prefix(10).compactMap(\.id).map(String.init).joined(separator: ","))
      asking["target"] = nil
      asking["at"] = nil
      return .ask(
        parameter: "target",
        question: finder.whichQuestion(items, clock: context.clock, language: context.language),
        arguments: asking)
    case .none(let said):
      return .reply(.text(finder.noneText(said: said, language: context.language)))
    }
  }
}
