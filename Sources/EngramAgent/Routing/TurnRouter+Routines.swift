import Engram
import Foundation

/// A routine the user defined in a sentence ("when I say evening wrap up, show today's
/// calendar, my reminders and the weather"): its name, the requests it stands for (each with
/// the skill it routes to now), and the requests no skill claims (then nothing is saved).
public struct RoutineDefinition: Sendable, Hashable {
  /// The name as the user wrote it.
  public var name: String
  /// The requests, in order, each with the skill it routed to.
  public var steps: [Routine.Step]
  /// The requests no skill claims; a definition with any is refused.
  public var unreadable: [String]

  /// Creates a definition.
  public init(name: String, steps: [Routine.Step], unreadable: [String] = []) {
    self.name = name
    self.steps = steps
    self.unreadable = unreadable
  }
}

/// A request about the routines themselves, said in chat: list them, or remove one.
public enum RoutineRequest: Sendable, Hashable {
  /// "list my routines", 我的例程.
  case list
  /// "remove the routine NAME", 删除例程NAME.
  case remove(String)
}

/// The routine stages of the turn router: a sentence that defines a routine, and a line that
/// names one (exactly, or nearly: "run evening wrap up", "evening wrap upp", 早安！), whose
/// requests are each routed and run as one plan.
extension TurnRouter {
  /// The enabled routine `text` names, exactly or nearly, or nil. Filler words around the
  /// name (`routine.run_fillers`: "run", "please", 执行) are dropped first; a near name is
  /// one within an edit or two of a name of at least four (eight) characters.
  public func routine(namedBy text: String) -> Routine? {
    let said = Self.strippedName(text)
    guard !said.isEmpty else { return nil }
    var best: (routine: Routine, distance: Int)?
    for routine in routines where routine.enabled {
      let key = routine.key
      let distance = key == said ? 0 : Self.editDistance(said, key, limit: Self.allowedEdits(key))
      guard let distance else { continue }
      if best == nil || distance < best!.distance { best = (routine, distance) }
    }
    return best?.routine
  }

  /// The plan of `routine`: each request routed (without the routine stages or a language
  /// model), the steps in order, one plan. A request whose saved skill is disabled becomes
  /// that skill's step, which the orchestrator leaves out with a sentence saying so.
  /// - Throws: the router's errors.
  public func plan(of routine: Routine, clock: AgentClock, scenario: SkillScenario = .all) async throws
    -> TurnRoute
  {
    let inner = TurnRouter(skills: skills)
    var steps: [PlanStep] = []
    for saved in routine.steps {
      if let skill = saved.skill, skills.isDisabled(id: skill) {
        steps.append(PlanStep(skill: skill))
        continue
      }
      let found = try await inner.route(saved.text, clock: clock, scenario: scenario).plan.steps
      if found.isEmpty, let skill = saved.skill {
        // No skill claims it now (a skill was removed): its saved skill says why it is left out.
        steps.append(PlanStep(skill: skill))
        continue
      }
      let base = steps.count
      steps += found.map { step in
        var step = step
        step.inputFrom = step.inputFrom.map { $0 + base }
        return step
      }
    }
    var route = TurnRoute(plan: .skills(steps), source: .routine, confidence: 1)
    route.routine = routine.name
    return route
  }

  /// The routine `text` defines ("when I say NAME, REQUESTS", 以后我说“NAME”就REQUESTS), or nil.
  /// - Throws: the router's errors.
  public func routineDefinition(_ text: String, clock: AgentClock, scenario: SkillScenario = .all)
    async throws -> RoutineDefinition?
  {
    guard let (name, body) = Self.definitionParts(text) else { return nil }
    let texts = Self.stepTexts(body)
    guard !texts.isEmpty else { return nil }
    var definition = try await routineSteps(texts, clock: clock, scenario: scenario)
    definition.name = name
    return definition
  }

  /// The requests `texts` as routine steps, each with the skill it routes to surely; a request
  /// no skill claims surely is tried again with the first request's verb ("show today's calendar, my
  /// reminders": "show my reminders"), else listed in `unreadable`.
  /// - Throws: the router's errors.
  public func routineSteps(_ texts: [String], clock: AgentClock, scenario: SkillScenario = .all) async throws
    -> RoutineDefinition
  {
    let inner = TurnRouter(skills: skills)
    let verb = texts.first.flatMap { first in
      SkillWords.list("routine.carry_verbs").first { RequestPlanner.startsWith(first, $0) }
    }
    var definition = RoutineDefinition(name: "", steps: [])
    for text in texts {
      var candidates = [text]
      if let verb, !RequestPlanner.startsWith(text, verb) {
        candidates.append(verb.unicodeScalars.first!.isASCII ? "\(verb) \(text)" : verb + text)
      }
      var found: Routine.Step?
      for candidate in candidates {
        let route = try await inner.route(candidate, clock: clock, scenario: scenario)
        // Only a sure decision is saved: a guess (a low intent score) would run the wrong skill.
        if let first = route.plan.steps.first, route.decision?.isConfident ?? true {
          found = Routine.Step(text: candidate, skill: first.skill)
          break
        }
      }
      if let found { definition.steps.append(found) } else { definition.unreadable.append(text) }
    }
    return definition
  }

  /// The request about routines `text` makes ("list my routines", "remove the routine
  /// NAME", 删除例程NAME), or nil.
  public static func routineRequest(_ text: String) -> RoutineRequest? {
    let key = Routine.key(text)
    if SkillWords.list("routine.list_phrases").contains(where: { Routine.key($0) == key }) { return .list }
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    for head in SkillWords.list("routine.remove_heads").sorted(by: { $0.count > $1.count })
    where RequestPlanner.startsWith(trimmed, head) {
      let name = String(trimmed.dropFirst(head.count)).trimmingCharacters(
        in: RequestPlanner.edge.union(.punctuationCharacters).union(CharacterSet(charactersIn: "“”「」")))
      return Routine.key(name).isEmpty ? nil : .remove(name)
    }
    return nil
  }

  // MARK: - Reading the words

  /// The name and the requests of a definition, or nil when `text` defines none.
  static func definitionParts(_ text: String) -> (String, String)? {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard
      let head = SkillWords.list("routine.define_heads").first(where: {
        RequestPlanner.startsWith(trimmed, $0)
      })
    else { return nil }
    let rest = String(trimmed.dropFirst(head.count)).trimmingCharacters(in: .whitespaces)
    let name: String
    var body: Substring
    if let open = rest.first, let close = quoteCloser[open], let end = rest.dropFirst().firstIndex(of: close)
    {
      name = String(rest[rest.index(after: rest.startIndex)..<end])
      body = rest[rest.index(after: end)...]
    } else {
      let ends = SkillWords.list("routine.define_name_ends").compactMap { rest.range(of: $0) }
      guard let end = ends.min(by: { $0.lowerBound < $1.lowerBound }) else { return nil }
      name = String(rest[..<end.lowerBound])
      body = rest[end.upperBound...]
    }
    var request = String(body).trimmingCharacters(in: RequestPlanner.edge)
    // "when I say the cabin, I mean ...", 以后我说“老地方”就是指…: what a word means is a fact to
    // remember, not a routine.
    let meaning = SkillWords.list("routine.meaning_markers")
    func definesMeaning(_ text: String) -> Bool { meaning.contains { RequestPlanner.startsWith(text, $0) } }
    if definesMeaning(request) { return nil }
    for _ in 0..<3 {
      let stripped = RequestPlanner.stripLeading(request, SkillWords.list("routine.body_openers"))
        .trimmingCharacters(in: RequestPlanner.edge)
      if stripped == request { break }
      request = stripped
    }
    if definesMeaning(request) { return nil }
    let cleanName = name.trimmingCharacters(in: RequestPlanner.edge.union(.punctuationCharacters))
    guard !Routine.key(cleanName).isEmpty, !request.isEmpty else { return nil }
    return (cleanName, request)
  }

  /// The requests of a definition's body, split as a compound request is, and at 、 和.
  static func stepTexts(_ body: String) -> [String] {
    let sentences = RequestPlanner.sentences(body).map(\.text)
    var pieces = sentences.flatMap { RequestPlanner.split($0) }
    for join in SkillWords.list("routine.step_joins") {
      pieces = pieces.flatMap { $0.components(separatedBy: join) }
    }
    return pieces.map { $0.trimmingCharacters(in: RequestPlanner.edge) }.filter { !$0.isEmpty }
  }

  private static let quoteCloser: [Character: Character] = [
    "\"": "\"", "“": "”", "'": "'", "‘": "’", "「": "」", "『": "』",
  ]

  /// `text` folded as a routine's key, without the filler words around a name.
  static func strippedName(_ text: String) -> String {
    var said = Routine.key(text)
    let fillers = SkillWords.list("routine.run_fillers").map { Routine.key($0) }.filter { !$0.isEmpty }
    var changed = true
    while changed {
      changed = false
      for filler in fillers {
        let latin = filler.unicodeScalars.allSatisfy(\.isASCII)
        if said.hasPrefix(filler + (latin ? " " : "")), said.count > filler.count {
          said = String(said.dropFirst(filler.count)).trimmingCharacters(in: .whitespaces)
          changed = true
        }
        if said.hasSuffix((latin ? " " : "") + filler), said.count > filler.count {
          said = String(said.dropLast(filler.count)).trimmingCharacters(in: .whitespaces)
          changed = true
        }
      }
    }
    return said
  }

  /// How many edits still name `key`: none below four characters, one below eight, else two.
  static func allowedEdits(_ key: String) -> Int {
    key.count >= 8 ? 2 : key.count >= 4 ? 1 : 0
  }

  /// The edit distance of `a` and `b` when at most `limit`, else nil.
  /// - Complexity: O(a·b) characters.
  static func editDistance(_ a: String, _ b: String, limit: Int) -> Int? {
    let a = Array(a)
    let b = Array(b)
    guard abs(a.count - b.count) <= limit else { return nil }
    var previous = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
      var current = [i] + Array(repeating: 0, count: b.count)
      for j in stride(from: 1, through: b.count, by: 1) {
        current[j] = min(
          previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      previous = current
    }
    let distance = a.isEmpty ? b.count : previous[b.count]
    return distance <= limit ? distance : nil
  }
}
