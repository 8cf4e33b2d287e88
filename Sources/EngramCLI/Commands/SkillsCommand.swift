import Engram
import EngramAgent
import Foundation

/// `engram skills [enable|disable ID]`: lists the built-in skills and switches them on or off.
public enum SkillsCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "skills", abstract: "List the built-in skills, or enable/disable one.",
    usage: "[enable|disable ID] [--db PATH] [--json]")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Flag(help: ArgumentHelp.json) var json = false
    @Argument(help: "enable, disable or list.") var action: Action?
    @Argument(help: "The skill's id.") var id: String?

    /// The defaults.
    public init() {}
  }

  /// What to do with the skill named.
  enum Action: String, CaseIterable, ExpressibleByArgument {
    case enable, disable, list
  }

  /// Lists, or changes one flag and lists.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let action = options.action ?? .list
    let id = options.id
    let skills = BuiltInSkills.all()
    if action == .list {
      if let id { throw UsageError(.unexpectedArgument(id)) }
    } else {
      guard let id else { throw UsageError(.missingArgument("ID")) }
      guard skills.contains(where: { $0.id == id }) else {
        throw UsageError("unknown skill '\(id)' (known: \(skills.map(\.id).joined(separator: ", ")))")
      }
    }
    let rows = try await EngineAccess.withEngine(context) { engine -> [(String, String, String, Bool)] in
      let registry = SkillRegistry(store: EngineSkillStateStore(engine: engine))
      for skill in skills { try registry.register(skill) }
      if let id, action != .list { try registry.setEnabled(action == .enable, id: id) }
      return skills.map { ($0.id, $0.displayName, $0.category, registry.isEnabled(id: $0.id)) }
    }
    if options.json {
      for row in rows {
        try context.jsonLines.write(
          ["id": .string(row.0), "name": .string(row.1), "category": .string(row.2), "enabled": .bool(row.3)]
            as JSONValue)
      }
      return
    }
    if let id, action != .list { context.output.write("\(action.rawValue)d \(id)\n") }
    var table = Table(columns: [.init("id"), .init("name"), .init("category"), .init("enabled")])
    for row in rows { table.append([row.0, row.1, row.2, row.3 ? "yes" : "no"]) }
    for line in table.render(width: context.terminal.width, styled: context.terminal.colorsOutput) {
      context.output.write(line + "\n")
    }
  }
}
