/// `calendar.create`: stores a calendar event with a title and a start time, after confirmation.
public struct CalendarSkill: Skill {
  /// Creates the skill.
  public init() {}

  public var id: String { "calendar.create" }
  public var displayName: String { "Create calendar event" }
  public var description: String {
    "Adds an event (meeting, appointment) with a title and start date/time to the calendar; returns the stored event."
  }
  public var samplePhrases: [String] {
    [
      "add to my calendar", "schedule a meeting", "schedule", "appointment", "calendar", "添加日程", "日程", "安排",
      "开会",
      "预约", "会议",
    ]
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter("title", .string, description: "the event's name, without the date"),
      SkillParameter("when", .date, description: "when the event starts"),
      SkillParameter("note", .string, required: false, description: "place or other details"),
    ])
  }
  public var category: String { "office" }
  public var tags: Set<String> { ["office", "productivity"] }

  static let fillers = [
    "please", "pls", "can you", "could you", "would you", "hey", "ok", "okay", "add to my calendar",
    "add to calendar", "to my calendar", "to the calendar", "on my calendar", "in my calendar",
    "on the calendar",
    "in the calendar", "onto my calendar", "my calendar", "put on my calendar", "add an event", "add event",
    "create an event", "new event", "an event", "event", "schedule a", "schedule an", "schedule", "book a",
    "book an", "book", "set up a", "set up an", "set up", "add a", "add an", "add", "put a", "put an", "put",
    "i've got the", "i have the", "i got the", "i've got a", "i've got an", "i've got", "ive got",
    "i have got", "i got a", "i got", "we've got",
    "i have a", "i have an", "i have", "we have", "there is a", "there's a", "i'm having", "for me", "thanks",
    "thank you", "请", "帮我", "麻烦", "在日历上加", "在日历里加", "在日历上", "在日历里", "加进日历里", "加进日历", "加进", "加到日历里",
    "加到日历", "加到日程", "放进日历", "到日历", "日历里", "日历上", "日历", "添加日程", "添加一个日程", "添加", "加个日程", "日程", "安排一个",
    "安排", "创建", "新建", "预约", "我有", "有个", "有一个", "一个", "个", "吧", "的", "一下", "谢谢",
  ]

  public func canHandle(_ text: String) -> Bool {
    TextCues.containsAny(
      text,
      [
        "calendar", "schedule", "appointment", "meeting", "event", "book a", "conference call", "日程", "日历",
        "会议",
        "开会", "预约", "约了", "安排", "面试", "聚会", "约会",
      ])
      && !TextCues.containsAny(text, ["会议记录", "会议纪要", "meeting notes", "remind"])
      && !TextCues.isQuestion(text)
      && !TextCues.isPreferenceStatement(text) && !TextCues.isNoteCommand(text)
  }

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    DatedTitle.extract(from: text, clock: clock, fillers: Self.fillers)
  }

  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    DatedTitle.confirmation(kind: .event, arguments: arguments, context: context)
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    let (title, date, note) = try DatedTitle.require(arguments)
    let id = try await context.memory.storeEvent(title: title, date: date, body: note)
    return DatedTitle.created(kind: .event, id: id, title: title, date: date, context: context)
  }
}
