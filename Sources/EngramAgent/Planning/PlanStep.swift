import Engram
import Foundation

/// One step of a turn's plan: a skill call with its arguments, perhaps guarded by a
/// condition, perhaps fed by an earlier step's result.
public struct PlanStep: Sendable, Hashable {
  /// The skill id.
  public var skill: String
  /// Its arguments, still to be validated against the skill's schema.
  public var arguments: SkillArguments
  /// The condition that must hold for the step to run, or nil.
  public var condition: StepCondition?
  /// The index (0-based, in the plan) of the earlier step whose result this step needs: it
  /// runs only when that step succeeded, and a date that step found fills a missing `when`.
  public var inputFrom: Int?

  /// Creates a step.
  public init(
    skill: String, arguments: SkillArguments = SkillArguments(), condition: StepCondition? = nil,
    inputFrom: Int? = nil
  ) {
    self.skill = skill
    self.arguments = arguments
    self.condition = condition
    self.inputFrom = inputFrom
  }
}

/// A condition a step runs under: a fact about the weather, the time in a zone, the
/// calendar or the user's memory, as the user said it.
public struct StepCondition: Sendable, Hashable, Codable {
  /// What the condition is about.
  public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
    /// The weather at a moment (rain, snow, freezing, heat, wind).
    case weather
    /// The time of day in a zone ("if it's already evening in Tokyo").
    case time
    /// Whether the calendar is free at a moment.
    case calendar
    /// A fact in the user's memory.
    case memory
  }

  /// What the condition is about.
  public var kind: Kind
  /// What must hold, in a normalized form: a weather condition (`rain`, `snow`, `freeze`,
  /// `heat`, `wind`, `clear`), a time (`after 18:00`, `before 09:00`, `morning`, `evening`,
  /// `night`), `free`, or the words of a memory fact.
  public var about: String
  /// Whether the step runs when the condition does not hold ("unless it rains").
  public var negated: Bool
  /// The moment the condition is about (the forecast's time, the calendar's slot); nil for
  /// the present. A moment after the turn is checked when the step comes due.
  public var when: Date?
  /// The IANA zone of a time condition.
  public var zone: String?
  /// The place of a weather condition, when the user named one.
  public var place: String?
  /// The condition as the user said it.
  public var text: String
  /// The value of `negated` under which the step runs when `text` holds as said: set where the
  /// words are read, kept by the copies a plan makes (an "otherwise" branch toggles `negated`
  /// only). Nil (a condition from elsewhere, or kept before it existed): as said.
  public var negatedAsSaid: Bool?

  /// Whether the step runs when the condition's words hold ("if it rains"), not when they do
  /// not ("unless it rains", the other branch of "if it rains").
  public var runsWhenSaid: Bool { negated == (negatedAsSaid ?? negated) }

  /// The condition as a step's line shows it: "only if it rains" or "unless it rains"
  /// (仅当下雨 / 除非下雨).
  public func phrase(_ language: MessageLanguage) -> String {
    switch (runsWhenSaid, language) {
    case (true, .english): return "only if \(text)"
    case (false, .english): return "unless \(text)"
    case (true, .chinese): return "仅当\(text)"
    case (false, .chinese): return "除非\(text)"
    }
  }

  /// The condition in quotes as a sentence names it: the words, or "unless" and the words.
  public func quoted(_ language: MessageLanguage) -> String {
    runsWhenSaid ? text : (language == .english ? "unless \(text)" : "除非\(text)")
  }

  /// Creates a condition.
  public init(
    kind: Kind, about: String, negated: Bool = false, when: Date? = nil, zone: String? = nil,
    place: String? = nil, text: String
  ) {
    self.kind = kind
    self.about = about
    self.negated = negated
    self.when = when
    self.zone = zone
    self.place = place
    self.text = text
  }

  /// The condition as a reminder keeps it (`agent_items.condition`): a JSON object with
  /// `kind`, `about`, `negated`, `when` (ISO 8601), `zone`, `place` and `text`.
  public var storedText: String {
    // Encoding strings, a flag and a date cannot fail.
    (try? Self.encoder.encode(self)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
  }

  /// Reads a condition a reminder kept (``storedText``); nil when the text is not one.
  public init?(storedText: String) {
    guard let value = try? Self.decoder.decode(Self.self, from: Data(storedText.utf8)) else { return nil }
    self = value
  }

  private static var encoder: JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    return encoder
  }

  private static var decoder: JSONDecoder {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return decoder
  }

  /// Whether the condition is about a moment after `now` (so it is checked then, not now).
  public func isFuture(after now: Date) -> Bool {
    guard let when else { return false }
    return when.timeIntervalSince(now) > 60
  }
}

/// What a turn does: the skills to run in order, or a reply without a skill.
public enum TurnPlan: Sendable, Equatable {
  /// Run these steps in order (none: the planner planned nothing).
  case skills([PlanStep])
  /// No skill: answer from the retrieved memories (or say what the agent can do).
  case answerFromMemory
  /// No skill: small talk or a retraction the intent model recognised, answered in kind.
  case converse(ConversationIntent)
  /// The planner's final answer, said as it is.
  case final(String)
  /// A question for memory with a language model on hand: the model composes the answer
  /// from the retrieved memories, citing their ids.
  case answerWithModel
  /// The rules leave the turn to the language model's planner (a model is on hand).
  case askLanguageModel
  /// Save a routine the user defined (refused when a request of it is unreadable).
  case defineRoutine(RoutineDefinition)
  /// List the routines, or remove one.
  case manageRoutine(RoutineRequest)
  /// The request reads both as a write and as its inverse (forget, cancel, recall): ask which
  /// is meant, and do nothing yet.
  case clarify(Clarification)

  /// The steps to run (none unless `.skills`).
  public var steps: [PlanStep] {
    if case .skills(let steps) = self { return steps }
    return []
  }

  /// The routing trace's result: `rules: reminder.create`, `intent: no skill`, `planner: final`.
  func summary(source: RouteSource) -> String {
    switch self {
    case .skills(let steps): return "\(source.rawValue): " + steps.map(\.skill).joined(separator: " -> ")
    case .answerFromMemory: return "\(source.rawValue): no skill"
    case .converse(let conversation): return "\(source.rawValue): \(conversation.rawValue)"
    case .final: return "\(source.rawValue): final"
    case .answerWithModel: return "\(source.rawValue): memory.recall (language model)"
    case .askLanguageModel: return "\(source.rawValue): language model"
    case .defineRoutine(let definition): return "\(source.rawValue): define \(definition.name)"
    case .manageRoutine(.list): return "\(source.rawValue): list routines"
    case .manageRoutine(.remove(let name)): return "\(source.rawValue): remove \(name)"
    case .clarify(let question): return "\(source.rawValue): ask \(question.write) or \(question.inverse)"
    }
  }
}

/// A question back when one request reads two opposite ways: a write (remember, create) and
/// its inverse (forget, cancel, recall). Nothing runs until the user says which.
public struct Clarification: Sendable, Equatable {
  /// The write the router chose.
  public var write: String
  /// The inverse the request's words point to.
  public var inverse: String

  /// Creates the question between `write` and `inverse`.
  public init(write: String, inverse: String) {
    self.write = write
    self.inverse = inverse
  }

  /// The question, in the user's language.
  public func question(_ language: MessageLanguage) -> String {
    let english = language != .chinese
    switch inverse {
    case "memory.recall":
      return english
        ? "Are you asking what I remember, or asking me to save something new? Say \"what ...?\" to ask, or \"remember ...\" or \"remind me ...\" to save."
        : "你是想问我记得什么，还是要我记下新的内容？问的话请说“……是什么？”，要记下请说“记住……”或“提醒我……”。"
    case "reminder.cancel":
      return english
        ? "Should I cancel a reminder, or set a new one? Say \"cancel the reminder ...\" or \"remind me to ...\"."
        : "你是要取消一个提醒，还是新建一个？请说“取消……的提醒”或“提醒我……”。"
    case "calendar.cancel":
      return english
        ? "Should I cancel an event, or add one? Say \"cancel ...\" or \"add ... to my calendar\"."
        : "你是要取消一个日程，还是新加一个？请说“取消……”或“把……加到日程”。"
    default:
      return english
        ? "Should I forget something, or remember it? Say \"forget ...\" or \"remember ...\"."
        : "你是要我忘掉一件事，还是记住它？请说“忘掉……”或“记住……”。"
    }
  }
}
