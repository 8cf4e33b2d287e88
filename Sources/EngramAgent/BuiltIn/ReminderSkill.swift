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
  public var samplePhrases: [String] {
    ["remind me", "remind me to", "set a reminder", "don't forget to", "提醒我", "提醒", "别忘了", "记得", "叫我"]
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

  static let fillers = [
    "please", "pls", "plz", "can you", "could you", "would you", "will you", "hey", "ok", "okay", "thanks",
    "thank you", "remind me to", "remind me about", "remind me of", "remind me", "ping me to", "ping me",
    "nudge me to", "nudge me", "alert me to", "tell me to", "text me to", "set a reminder for me to",
    "set a reminder to", "set a reminder for", "set a reminder", "add a reminder to", "add a reminder",
    "create a reminder to", "create a reminder", "reminder to", "reminder", "for me to", "for me",
    "don't let me forget to", "dont let me forget to", "don't let me forget", "don't forget to",
    "dont forget to", "do not forget to", "make sure i", "i need to", "i have to", "i must", "to",
    "请", "帮我", "麻烦你", "麻烦", "提醒我一下", "提醒我", "提醒一下", "提醒", "记得要", "记得", "别忘了", "别忘记", "不要忘了", "不要忘记",
    "叫我", "设个提醒", "设置提醒", "设置一个提醒", "一下", "我要", "我得", "要", "吧", "哦", "啊", "呀", "喔", "的时候", "时候", "谢谢",
    "好吗", "好不好", "行吗", "可以吗",
  ]

  static let keywords = [
    "remind", "reminder", "don't forget to", "dont forget to", "do not forget to", "alarm", "提醒", "别忘", "不要忘",
    "叫我", "闹钟",
  ]

  /// Words that make a dated request an event rather than a task.
  static let eventWords = [
    "calendar", "schedule", "appointment", "meeting with", "event", "日程", "日历", "会议", "开会", "预约", "约了", "安排",
  ]

  public func canHandle(_ text: String) -> Bool {
    if TextCues.containsAny(text, Self.keywords) { return true }
    let dated = !DateExpressionParser.findParts(in: text).isEmpty
    // 记得 alone is also how people state facts (你要记得我不吃香菜); with a date it is a task.
    if dated, text.contains("记得"), !TextCues.containsAny(text, ["还记得", "记得吗", "记不记得"]) { return true }
    // A dated instruction that is not a question, a preference or an event: "明天下午三点把会议记录发我".
    guard dated, !TextCues.isQuestion(text), !TextCues.isPreferenceStatement(text),
      !TimeNowSkill().canHandle(text)
    else { return false }
    let eventy =
      TextCues.containsAny(text, Self.eventWords)
      && !TextCues.containsAny(text, ["会议记录", "会议纪要", "meeting notes"])
    return !eventy
  }

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    DatedTitle.extract(from: text, clock: clock, fillers: Self.fillers)
  }

  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    DatedTitle.confirmation(kind: .reminder, arguments: arguments, context: context)
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    let (title, date, note) = try DatedTitle.require(arguments)
    let id = try await context.memory.storeReminder(title: title, date: date, body: note)
    return DatedTitle.created(kind: .reminder, id: id, title: title, date: date, context: context)
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
