import Engram
import EngramAgent
import Foundation

/// `engram route TEXT…`: shows where each request would go, without running anything.
public enum RouteCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "route", abstract: "Show which skill a request would go to, and why (runs nothing).",
    discussion: """
      Prints, for each request, the skill it would run (or none), the arguments read from it,
      the stage that decided (rules, intent, semantic) and its confidence. Nothing is run or
      written. With --db the memory's enabled skills and its embedder (for the similarity
      stage) are used; without it, the built-in skills and no similarity stage.

      --now fixes the clock (ISO 8601 with an offset, e.g. 2025-06-11T10:00:00+08:00); its
      offset is the time zone dates are read and printed in. --file reads one request a line
      ('-' reads standard input; a FIFO or a pipe such as <(...) is read too).
      """,
    usage: "route [--db PATH] [--now ISO8601] [--json] (TEXT... | --file FILE)")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Option(valueName: "ISO8601", help: ArgumentHelp.now) var now: String?
    @Option(
      valueName: "FILE", help: "Route each line of FILE ('-': standard input; blank lines are skipped).")
    var file: String?
    @Flag(help: ArgumentHelp.json) var json = false
    @Argument(help: "A request (quote it; each argument is one request).") var text: [String] = []

    /// The defaults.
    public init() {}
  }

  /// Routes the requests and prints one line (or JSON object) each.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let clock = try clock(from: options.now)
    var requests: [String] = []
    if let file = options.file {
      guard options.text.isEmpty else {
        throw UsageError("give either TEXT or --file, not both")
      }
      // `-` is standard input; FIFOs and pipes (`--file <(...)`) are read like files.
      let data: Data
      do {
        data = try InputFile.readAll(file)
      } catch {
        throw CommandFailure(error.description)
      }
      let shown = file == "-" ? "standard input" : file
      guard let text = String(data: data, encoding: .utf8) else {
        throw CommandFailure("\(shown) is not UTF-8 text")
      }
      requests = text.split(whereSeparator: \.isNewline).map(String.init).filter {
        !$0.trimmingCharacters(in: .whitespaces).isEmpty
      }
    } else {
      requests = options.text.filter {
        !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
      }
      guard !requests.isEmpty else { throw UsageError("give the request TEXT or --file FILE") }
    }
    if options.database.db != nil {
      try await EngineAccess.withEngine(context, mode: .readOnly) { engine in
        // The memory's enabled flags, as chat's registry reads them.
        let registry = SkillRegistry(store: try await EngineSkillStateStore(engine: engine))
        try BuiltInSkills.register(in: registry)
        // The memory's routines: a routine's name routes to its steps, as in chat.
        let router = TurnRouter(
          skills: SkillRouter(registry: registry, embedding: EnginePhraseEmbedding(engine)),
          routines: try await engine.agentRecords.routines())
        try await route(
          requests, router: router, registry: registry, clock: clock, json: options.json, context: context)
      }
    } else {
      let registry = SkillRegistry()
      try BuiltInSkills.register(in: registry)
      let router = TurnRouter(skills: SkillRouter(registry: registry))
      try await EngineAccess.mappingErrors {
        try await route(
          requests, router: router, registry: registry, clock: clock, json: options.json, context: context)
      }
    }
  }

  private static func route(
    _ requests: [String], router: TurnRouter, registry: SkillRegistry, clock: AgentClock, json asJSON: Bool,
    context: CommandContext
  ) async throws {
    for text in requests {
      let route = try await router.route(text, clock: clock)
      let object = json(text: text, route: route, registry: registry, clock: clock)
      if asJSON {
        try context.jsonLines.write(object)
      } else {
        context.output.write("\(line(for: object))  ← \(text)\n")
      }
    }
  }

  /// The text line of one routed request: each step's skill, method and confidence (the
  /// first's), arguments and condition, steps joined by `→`.
  static func line(for object: JSONValue) -> String {
    let members = object.objectValue ?? [:]
    let steps = members["steps"]?.arrayValue ?? []
    let method = members["method"]?.stringValue ?? "none"
    let confidence = String(format: "%.2f", members["confidence"]?.doubleValue ?? 0)
    var rendered: [String] = []
    for (index, step) in (steps.isEmpty ? [object] : steps).enumerated() {
      let values = step.objectValue ?? [:]
      var line = values["skill"]?.stringValue ?? "none"
      if index == 0 { line += "  \(method) \(confidence)" }
      if case .object(let arguments)? = values["arguments"], !arguments.isEmpty {
        line +=
          "  "
          + arguments.keys.sorted().map { "\($0)=\(arguments[$0]!.stringValue ?? arguments[$0]!.jsonText)" }
          .joined(separator: " ")
      }
      if let condition = values["condition"]?.objectValue {
        let negated = condition["negated"]?.boolValue == true ? "not " : ""
        line += "  [if \(negated)\(condition["kind"]?.stringValue ?? "")"
        line += ": \(condition["about"]?.stringValue ?? "")]"
      }
      if let input = values["input_from"]?.intValue { line += "  (uses step \(input + 1))" }
      rendered.append(line)
    }
    var line = rendered.joined(separator: "  →  ")
    if let routine = members["routine"]?.stringValue {
      line = "routine \(routine): " + (steps.isEmpty ? "define" : line)
    }
    if case .array(let problems)? = members["problems"], !problems.isEmpty {
      line += "  (" + problems.compactMap(\.stringValue).joined(separator: "; ") + ")"
    }
    return line
  }

  /// The JSON object for one request: text, skill (or null), arguments (dates in ISO 8601
  /// with the clock's offset), method, confidence, the intent model's top labels, the
  /// problems validation would report (a missing or unreadable argument), and `steps`: the
  /// plan, one object per step (`skill`, `arguments`, `condition` where the step runs only
  /// if it holds, `input_from` where it needs an earlier step's result). The top-level
  /// fields describe the first step.
  static func json(text: String, route: TurnRoute, registry: SkillRegistry, clock: AgentClock) -> JSONValue {
    let steps = route.plan.steps
    let first = steps.first
    var object: [String: JSONValue] = [
      "text": .string(text),
      // A first step no skill takes (a question answered in its place) has no skill id.
      "skill": first.flatMap { $0.skill == IntentClassifier.noneLabel ? nil : JSONValue.string($0.skill) }
        ?? .null,
      "method": .string(steps.isEmpty && route.source == .none ? "none" : route.source.rawValue),
      "confidence": .double(route.confidence),
    ]
    var problems: [JSONValue] = []
    var stepObjects: [JSONValue] = []
    for step in steps {
      var stepObject: [String: JSONValue] = [
        "skill": .string(step.skill), "arguments": arguments(step.arguments, clock: clock),
      ]
      if let condition = step.condition { stepObject["condition"] = conditionJSON(condition, clock: clock) }
      if let input = step.inputFrom { stepObject["input_from"] = .int(input) }
      stepObjects.append(.object(stepObject))
      if let skill = registry.skill(id: step.skill), step.inputFrom == nil {
        do {
          _ = try ArgumentValidator.validate(
            step.arguments, against: skill.inputSchema, timeZone: clock.timeZone)
        } catch {
          problems.append(.string(FriendlyMessage.text(for: error, language: MessageLanguage.detect(text))))
        }
      }
    }
    if let intent = route.decision?.intent {
      object["intent"] = .array(
        intent.ranked.prefix(3).map {
          .object(["label": .string($0.label), "probability": .double($0.probability)])
        })
    }
    object["arguments"] = first.map { arguments($0.arguments, clock: clock) } ?? .object([:])
    object["problems"] = .array(problems)
    object["steps"] = .array(stepObjects)
    if let routine = route.routine { object["routine"] = .string(routine) }
    if case .clarify(let question) = route.plan {
      // Unsure between a write and its inverse: the turn asks which, and runs nothing.
      object["clarify"] = .object(["write": .string(question.write), "inverse": .string(question.inverse)])
    }
    if case .defineRoutine(let definition) = route.plan {
      object["defines"] = .object([
        "name": .string(definition.name),
        "steps": .array(
          definition.steps.map {
            .object(["text": .string($0.text), "skill": $0.skill.map { .string($0) } ?? .null])
          }),
        "unreadable": .array(definition.unreadable.map { .string($0) }),
      ])
    }
    return .object(object)
  }

  private static func arguments(_ values: SkillArguments, clock: AgentClock) -> JSONValue {
    var object: [String: JSONValue] = [:]
    for name in values.names {
      guard let value = values[name] else { continue }
      object[name] = jsonValue(value, clock: clock)
    }
    return .object(object)
  }

  /// A condition as `route --json` prints it: kind, about, negated, and when / zone / place
  /// where it has them.
  static func conditionJSON(_ condition: StepCondition, clock: AgentClock) -> JSONValue {
    var object: [String: JSONValue] = [
      "kind": .string(condition.kind.rawValue), "about": .string(condition.about),
      "negated": .bool(condition.negated), "text": .string(condition.text),
    ]
    if let when = condition.when {
      object["when"] = .string(DateParser.iso8601(when, timeZone: clock.timeZone))
    }
    if let zone = condition.zone { object["zone"] = .string(zone) }
    if let place = condition.place { object["place"] = .string(place) }
    return .object(object)
  }

  static func jsonValue(_ value: SkillValue, clock: AgentClock) -> JSONValue {
    switch value {
    case .string(let text): return .string(text)
    case .int(let number): return .int(number)
    case .number(let number): return number.isFinite ? .double(number) : .string(String(number))
    case .bool(let flag): return .bool(flag)
    case .date(let date): return .string(DateParser.iso8601(date, timeZone: clock.timeZone))
    }
  }

  /// The clock fixed at `--now` (its offset is the time zone), or the system clock here.
  /// - Throws: ``UsageError`` for text that is not ISO 8601 with an offset.
  static func clock(from text: String?) throws(UsageError) -> AgentClock {
    guard let text else { return .system() }
    guard let clock = AgentClock.fixed(iso8601: text) else {
      throw UsageError(
        .invalidValue(
          argument: "--now", value: text, expected: "ISO 8601 with an offset, e.g. 2025-06-11T10:00:00+08:00")
      )
    }
    return clock
  }
}
