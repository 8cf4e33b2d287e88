import Engram

/// `memory.forget`: deletes one memory by id; given only a description, lists the candidates.
public struct ForgetSkill: Skill {
  /// Forgetting removes a memory and every copy of it: destructive (a higher intent bar).
  public var isDestructive: Bool { true }

  /// Creates the skill.
  public init() {}

  public var id: String { "memory.forget" }
  public var displayName: String { "Forget" }
  public var description: String {
    "Deletes one memory by its id (after confirmation); given only a description, lists matching memories with ids."
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter("id", .int, required: false, description: "the id of the memory to delete"),
      SkillParameter(
        "query", .string, required: false, description: "a description of the memory, to find its id"),
    ])
  }
  public var category: String { "memory" }
  public var tags: Set<String> { ["memory", "personal"] }

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    if let match = text.firstMatch(of: #/(?:#|memory\s+|记忆\s*|第\s*)(\d{1,18})/#), let id = Int(match.1) {
      return ["id": .int(id)]
    }
    let query = TextCues.strip(
      text, removing: nil,
      fillers: SkillWords.list("memory.forget.fillers"))
    return query.isEmpty ? SkillArguments() : ["query": .string(query)]
  }

  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    if let id = arguments["id"]?.intValue {
      // Context also holds turns and summaries, whose ids belong to other tables.
      let text = context.turn.hits.first { $0.id == Int64(id) && $0.kind == .memory }?.text
      switch context.language {
      case .english: return "Delete memory #\(id)\(text.map { ": “\($0)”" } ?? "")? This cannot be undone."
      case .chinese: return "删除记忆 #\(id)\(text.map { "：「\($0)」" } ?? "")？删除后无法恢复。"
      }
    }
    let query = arguments["query"]?.stringValue ?? ""
    switch context.language {
    case .english:
      return "Look for memories about “\(query)” to delete? Nothing is deleted until you pick one."
    case .chinese: return "查找与「\(query)」有关的记忆以便删除？选定之前不会删除任何内容。"
    }
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    if let id = arguments["id"]?.intValue {
      guard try await context.memories.forget(kind: .memory, id: Int64(id)) else {
        throw EngramError.notFound(kind: .memory, id: Int64(id))
      }
      let message = context.language == .english ? "Memory #\(id) is forgotten." : "已删除记忆 #\(id)。"
      return .forgotten(id: Int64(id), message: message)
    }
    guard let query = arguments["query"]?.stringValue else { throw SkillError.missingArgument(name: "id") }
    let hits = try await context.memories.search(query, k: 5)
    let title =
      context.language == .english
      ? (hits.isEmpty ? "No memory matches that." : "Which one should I forget? Tell me its id:")
      : (hits.isEmpty ? "没有找到相关的记忆。" : "要删除哪一条？请告诉我编号：")
    return .list(title: title, items: hits.map { "#\($0.id) \($0.text)" })
  }
}
