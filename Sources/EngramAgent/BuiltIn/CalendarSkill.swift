/// `calendar.create`: stores a calendar event with a title and a start time, after confirmation.
public struct CalendarSkill: Skill {
  /// Creates the skill.
  public init() {}

  public var id: String { "calendar.create" }
  public var displayName: String { "Create calendar event" }
  public var description: String {
    "Adds an event (meeting, appointment) with a title and start date/time to the calendar; returns the stored event."
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

  static let fillers = SkillWords.list("calendar.create.fillers")

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    DatedTitle.extract(from: text, clock: clock, fillers: Self.fillers)
  }

  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    DatedTitle.confirmation(kind: .event, arguments: arguments, context: context)
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    let (title, date, note) = try DatedTitle.require(arguments)
    let id = try await context.agenda.addItem(
      kind: .event, title: title, body: note, due: date, at: context.clock.now)
    return DatedTitle.created(kind: .event, id: id, title: title, date: date, context: context)
  }
}
