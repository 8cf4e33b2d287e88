import Engram
import EngramAgent
import Foundation

/// `engram skills [enable|disable ID]`: lists the built-in skills and the routines, and
/// switches skills on or off; `engram skills routine add NAME STEP... | list | remove NAME |
/// enable NAME | disable NAME` keeps the routines (stored, named plans).
public enum SkillsCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "skills",
    abstract: "List the skills and routines, enable/disable a skill, or keep routines.",
    discussion: """
      A routine is a name for several requests run as one plan: `engram skills routine add
      "evening wrap up" "show today's calendar" "show my reminders" "what's the weather"`
      saves it (each STEP is a request, as you would say it in chat; a step no skill claims
      is refused); saying its name in chat runs the steps, with one confirmation when a step
      changes something. `routine list`, `routine remove NAME`, `routine enable|disable NAME`.
      """,
    usage:
      "[enable|disable ID | routine add NAME STEP... | routine list | routine remove|enable|disable NAME] "
      + "[--db PATH] [--json]")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Flag(help: ArgumentHelp.json) var json = false
    @Argument(help: "enable, disable, list or routine.") var action: Action?
    @Argument(help: "The skill's id; for routine: add NAME STEP..., list, remove|enable|disable NAME.")
    var rest: [String] = []

    /// The defaults.
    public init() {}
  }

  /// What to do with the skill named.
  enum Action: String, CaseIterable, ExpressibleByArgument {
    case enable, disable, list, routine
  }

  /// What to do with a routine.
  enum RoutineAction: String, CaseIterable {
    case add, list, remove, enable, disable
  }

  /// Lists, or changes one flag and lists.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let action = options.action ?? .list
    if action == .routine { return try await runRoutine(options, context: context) }
    let skills = BuiltInSkills.all()
    var id: String?
    if action == .list {
      if let extra = options.rest.first { throw UsageError(.unexpectedArgument(extra)) }
    } else {
      guard let given = options.rest.first else { throw UsageError(.missingArgument("ID")) }
      if options.rest.count > 1 { throw UsageError(.unexpectedArgument(options.rest[1])) }
      guard skills.contains(where: { $0.id == given }) else {
        throw UsageError("unknown skill '\(given)' (known: \(skills.map(\.id).joined(separator: ", ")))")
      }
      id = given
    }
    let (rows, routines) = try await EngineAccess.withEngine(context) {
      engine -> ([(String, String, String, Bool)], [Routine]) in
      let registry = SkillRegistry(store: try await EngineSkillStateStore(engine: engine))
      for skill in skills { try registry.register(skill) }
      if let id { try await registry.setEnabled(action == .enable, id: id) }
      let rows = skills.map { ($0.id, $0.displayName, $0.category, registry.isEnabled(id: $0.id)) }
      return (rows, try await engine.agentRecords.routines())
    }
    if options.json {
      for row in rows {
        try context.jsonLines.write(
          [
            "kind": "skill", "id": .string(row.0), "name": .string(row.1), "category": .string(row.2),
            "enabled": .bool(row.3),
          ] as JSONValue)
      }
      for routine in routines { try context.jsonLines.write(json(routine)) }
      return
    }
    if let id { context.output.write("\(action.rawValue)d \(id)\n") }
    var table = Table(columns: [.init("id"), .init("name"), .init("category"), .init("enabled")])
    for row in rows { table.append([row.0, row.1, row.2, row.3 ? "yes" : "no"]) }
    for routine in routines {
      table.append([routine.name, "\(routine.steps.count) steps", "routine", routine.enabled ? "yes" : "no"])
    }
    for line in table.render(width: context.terminal.width, styled: context.terminal.colorsOutput) {
      context.output.write(line + "\n")
    }
  }

  /// `skills routine add|list|remove|enable|disable`.
  private static func runRoutine(_ options: Options, context: CommandContext) async throws {
    guard let word = options.rest.first else { throw UsageError(.missingArgument("add|list|remove NAME")) }
    guard let action = RoutineAction(rawValue: word) else {
      throw UsageError(
        .invalidValue(argument: "routine", value: word, expected: "add, list, remove, enable or disable"))
    }
    let arguments = Array(options.rest.dropFirst())
    switch action {
    case .list:
      if let extra = arguments.first { throw UsageError(.unexpectedArgument(extra)) }
      let routines = try await EngineAccess.withEngine(context, mode: .readOnly) { engine in
        try await engine.agentRecords.routines()
      }
      if options.json {
        for routine in routines { try context.jsonLines.write(json(routine)) }
        return
      }
      if routines.isEmpty {
        context.output.write("no routines (add one with `engram skills routine add NAME STEP...`)\n")
      }
      for routine in routines {
        context.output.write("\(routine.name)\(routine.enabled ? "" : " (disabled)")\n")
        for (index, step) in routine.steps.enumerated() {
          context.output.write("  \(index + 1). \(step.text)  → \(step.skill ?? "no skill")\n")
        }
      }
    case .add:
      guard let name = arguments.first else { throw UsageError(.missingArgument("NAME")) }
      let texts = arguments.dropFirst().map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
      guard !texts.isEmpty else { throw UsageError(.missingArgument("STEP")) }
      if let blank = texts.firstIndex(where: \.isEmpty) {
        throw UsageError("step \(blank) is empty: each STEP is a request, such as \"show my reminders\"")
      }
      guard !Routine.key(name).isEmpty else {
        throw UsageError("the routine's NAME needs a letter or a digit")
      }
      let routine = try await EngineAccess.withEngine(context) { engine -> Routine in
        let registry = SkillRegistry(store: try await EngineSkillStateStore(engine: engine))
        try BuiltInSkills.register(in: registry)
        let router = TurnRouter(
          skills: SkillRouter(registry: registry, embedding: EnginePhraseEmbedding(engine)))
        let definition = try await router.routineSteps(Array(texts), clock: .system())
        if let unreadable = definition.unreadable.first {
          throw UsageError(
            "no skill claims the step \"\(unreadable)\"; say it as a request (see `engram route \"\(unreadable)\"`)"
          )
        }
        let routine = Routine(name: name, steps: definition.steps, createdAt: Date())
        try await engine.agentRecords.saveRoutine(routine)
        return routine
      }
      if options.json {
        try context.jsonLines.write(json(routine))
      } else {
        context.output.write("added routine \(routine.name): \(routine.steps.count) steps\n")
      }
    case .remove, .enable, .disable:
      guard let name = arguments.first else { throw UsageError(.missingArgument("NAME")) }
      if arguments.count > 1 { throw UsageError(.unexpectedArgument(arguments[1])) }
      try await EngineAccess.withEngine(context) { engine in
        do {
          if action == .remove {
            try await engine.agentRecords.removeRoutine(named: name)
          } else {
            try await engine.agentRecords.setRoutineEnabled(action == .enable, named: name)
          }
        } catch AgentRecordError.routineNotFound {
          throw CommandFailure("no routine is named \"\(name)\" (see `engram skills routine list`)")
        }
      }
      context.output.write("\(action == .remove ? "removed" : "\(action.rawValue)d") routine \(name)\n")
    }
  }

  /// One routine as a JSON line: name, enabled, steps (text and skill).
  static func json(_ routine: Routine) -> JSONValue {
    .object([
      "kind": "routine", "name": .string(routine.name), "enabled": .bool(routine.enabled),
      "steps": .array(
        routine.steps.map {
          .object(["text": .string($0.text), "skill": $0.skill.map { .string($0) } ?? .null])
        }),
    ])
  }
}
