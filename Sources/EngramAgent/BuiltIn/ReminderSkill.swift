import Foundation

/// `reminder.create`: stores a reminder with a title and a due time, after confirmation.
public struct ReminderSkill: Skill {
  /// Creates the skill.
  public init() {}

  public var id: String { "reminder.create" }
  public var displayName: String { "Create reminder" }
  public var description: String {
    "Creates a reminder with a title and a due date/time; returns the stored reminder."
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter("title", .string, description: "what to be reminded of, without the date"),
      SkillParameter("when", .date, description: "when the reminder is due"),
      SkillParameter("note", .string, required: false, description: "extra details"),
    ])
  }
  public var category: String { "office" }
  public var tags: Set<String> { ["office", "productivity", "personal"] }

  static let fillers = SkillWords.list("reminder.create.fillers")

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    DatedTitle.extract(from: text, clock: clock, fillers: Self.fillers)
  }

  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    DatedTitle.confirmation(kind: .reminder, arguments: arguments, context: context)
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    let (title, date, note) = try DatedTitle.require(arguments)
    let condition = context.laterCondition
    let id = try await context.agenda.addItem(
      kind: .reminder, title: title, body: note, due: date, at: context.clock.now,
      condition: condition?.storedText)
    let created = DatedTitle.created(kind: .reminder, id: id, title: title, date: date, context: context)
    guard let condition, case .created(let item, let message) = created else { return created }
    return .created(item, message: message + " " + Self.conditionNote(condition, language: context.language))
  }

  /// The sentence a reminder kept with a condition adds: when it fires.
  static func conditionNote(_ condition: StepCondition, language: MessageLanguage) -> String {
    language == .english
      ? "\(condition.runsWhenSaid ? "Only if" : "Unless") \(condition.text) (checked when it comes due)."
      : "\(condition.phrase(.chinese))时提醒（到时再检查）。"
  }
}

/// The shared title/date handling of reminders and events.
enum DatedTitle {
  /// `title` without the date and filler; `when` as a date, as the raw text when the date
  /// cannot be read (validation then reports it as unreadable), absent when none is named.
  static func extract(from text: String, clock: AgentClock, fillers: [String]) -> SkillArguments {
    let reading = DateExpressionParser(clock: clock).read(text)
    var arguments = SkillArguments()
    switch reading {
    case .date(let match): arguments["when"] = .date(match.date)
    case .unreadable(let written, _): arguments["when"] = .string(written)
    case nil: break
    }
    let title = TextCues.strip(text, removing: reading?.range, fillers: fillers)
    if !title.isEmpty { arguments["title"] = .string(title) }
    return arguments
  }

  static func require(_ arguments: SkillArguments) throws -> (String, Date, String?) {
    guard let title = arguments["title"]?.stringValue else { throw SkillError.missingArgument(name: "title") }
    if case .string(let written) = arguments["when"] {
      throw SkillError.unreadableDate(name: "when", text: written)
    }
    guard let date = arguments["when"]?.dateValue else { throw SkillError.missingArgument(name: "when") }
    return (title, date, arguments["note"]?.stringValue)
  }

  static func confirmation(kind: CreatedItem.Kind, arguments: SkillArguments, context: SkillContext) -> String
  {
    let title = arguments["title"]?.stringValue ?? ""
    let when = arguments["when"]?.dateValue.map {
      TextCues.render($0, clock: context.clock, language: context.language)
    }
    let note = arguments["note"]?.stringValue
    switch context.language {
    case .english:
      let noun = kind == .reminder ? "reminder" : "calendar event"
      var text = "Create \(noun) “\(title)”"
      if let when { text += " at \(when)" }
      if let note { text += ", note: “\(note)”" }
      return text + "?"
    case .chinese:
      let noun = kind == .reminder ? "提醒" : "日程"
      var text = "创建\(noun)「\(title)」"
      if let when { text += "，时间 \(when)" }
      if let note { text += "，备注「\(note)」" }
      return text + "？"
    }
  }

  static func created(kind: CreatedItem.Kind, id: Int64, title: String, date: Date, context: SkillContext)
    -> SkillOutput
  {
    let when = TextCues.render(date, clock: context.clock, language: context.language)
    let message: String
    switch (kind, context.language) {
    case (.reminder, .english): message = "Reminder set: “\(title)” at \(when)."
    case (.reminder, .chinese): message = "已设置提醒：「\(title)」，\(when)。"
    case (_, .english): message = "Added to your calendar: “\(title)” at \(when)."
    case (_, .chinese): message = "已加入日程：「\(title)」，\(when)。"
    }
    return .created(CreatedItem(kind: kind, id: id, title: title, date: date), message: message)
  }
}
