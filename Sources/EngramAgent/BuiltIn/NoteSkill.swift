/// `note.create`: stores a free-form note, after confirmation.
public struct NoteSkill: Skill {
  /// Creates the skill.
  public init() {}

  public var id: String { "note.create" }
  public var displayName: String { "Create note" }
  public var description: String {
    "Writes down a free-form note (ideas, lists, snippets) dated now; returns the stored note."
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter("content", .string, description: "the note's text"),
      SkillParameter(
        "title", .string, required: false, description: "a short title (default: the first words)"),
    ])
  }
  public var category: String { "office" }
  public var tags: Set<String> { ["office", "productivity"] }

  static let fillers = SkillWords.list("note.create.fillers")

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    let content = TextCues.strip(text, removing: nil, fillers: Self.fillers)
    return content.isEmpty ? SkillArguments() : ["content": .string(content)]
  }

  /// The first line of `content`, at most 30 characters.
  static func defaultTitle(_ content: String) -> String {
    let firstLine = content.split(whereSeparator: \.isNewline).first.map(String.init) ?? content
    return firstLine.count > 30 ? String(firstLine.prefix(30)) + "…" : firstLine
  }

  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    let content = arguments["content"]?.stringValue ?? ""
    let title = arguments["title"]?.stringValue ?? Self.defaultTitle(content)
    switch context.language {
    case .english: return "Save note “\(title)”: “\(content)”?"
    case .chinese: return "保存笔记「\(title)」：「\(content)」？"
    }
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    guard let content = arguments["content"]?.stringValue else {
      throw SkillError.missingArgument(name: "content")
    }
    let title = arguments["title"]?.stringValue ?? Self.defaultTitle(content)
    let now = context.clock.now
    let id = try await context.agenda.addItem(kind: .note, title: title, body: content, due: now, at: now)
    let message = context.language == .english ? "Note saved: “\(title)”." : "笔记已保存：「\(title)」。"
    return .created(CreatedItem(kind: .note, id: id, title: title, date: now), message: message)
  }
}
