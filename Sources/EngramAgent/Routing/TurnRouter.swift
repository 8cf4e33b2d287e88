import Engram
import Foundation

/// Where one turn goes, as data: the plan, the stage that decided, and its confidence.
public struct TurnRoute: Sendable, Equatable {
  /// What the turn does: steps to run, an answer from memory, a conversational reply, ...
  public var plan: TurnPlan
  /// The stage that decided (for a plan of several steps, the stage that chose the first).
  public var source: RouteSource
  /// The deciding stage's score: 1 for a pattern, a rule score, a probability or a cosine.
  public var confidence: Double
  /// The skill router's decision for the whole request (or its first part), when one ran:
  /// the intent model's top labels and the rule candidates, for inspectors.
  public var decision: RouteDecision?
  /// The routine the plan runs (or defines), by name; nil otherwise.
  public var routine: String?

  /// Creates a route.
  public init(plan: TurnPlan, source: RouteSource, confidence: Double, decision: RouteDecision? = nil) {
    self.plan = plan
    self.source = source
    self.confidence = confidence
    self.decision = decision
  }
}

/// How the user's line answers a question the agent asked (a missing argument).
public enum SlotReading: Sendable, Equatable {
  /// "cancel", "never mind", 算了: the question is dropped.
  case retraction
  /// The line answers the question: the step continues with these arguments.
  case answer(SkillArguments)
  /// The line is a new request: it is routed as usual.
  case newRequest
}

/// The one router of a turn: every decision about where a turn goes is one of its stages,
/// with its thresholds in one `RoutingThresholds`. Chat, `engram route` and the web
/// inspector call the same `route(_:clock:scenario:)`, so what an inspector shows is what
/// chat does.
///
/// The stages, in order:
/// 1. a pending question's answer (`readAnswer(_:to:clock:)`, called by the agent when it
///    asked for an argument);
/// 2. a routine: a sentence that defines one ("when I say NAME, ...") is saved, "list my
///    routines" and "remove the routine NAME" keep them, and a line
///    that names one (exactly or nearly) runs its requests, each routed, as one plan
///    (`TurnRouter+Routines.swift`);
/// 3. a compound request (several steps, conditions): `RequestPlanner`, when every part
///    routes surely to a skill;
/// 4. the skill router's stages (`SkillRouter.Stage`): explicit patterns, an application's
///    rules, the intent model, similarity, the fallback;
/// 5. the inverse guard: a request to forget, cancel or recall is never sent to a write of
///    the opposite kind (`InverseGuard`); when the words point both ways, the turn asks which
///    is meant (`TurnPlan.clarify`) and writes nothing;
/// 6. with a language model on hand: a question for memory is answered by the model, and an
///    unsure or empty decision is left to the model's planner (`needsLanguageModel`);
/// 7. otherwise a question no skill claims is answered from the memories.
public struct TurnRouter: Sendable {
  /// The skill-choosing stages.
  public let skills: SkillRouter
  /// Whether a language model is on hand (the agent then asks its planner where the rules
  /// leave the turn, and lets it compose answers from memory).
  public var hasLanguageModel: Bool
  /// The user's routines (the enabled ones run when named).
  public var routines: [Routine]

  /// The thresholds of every stage.
  public var thresholds: RoutingThresholds { skills.thresholds }

  /// Creates a turn router over the skill router's stages.
  public init(skills: SkillRouter, hasLanguageModel: Bool = false, routines: [Routine] = []) {
    self.skills = skills
    self.hasLanguageModel = hasLanguageModel
    self.routines = routines
  }

  /// Where `text` goes. `TurnPlan.askLanguageModel` means the language model's planner
  /// decides (only with `hasLanguageModel`).
  /// - Throws: `RouterError` or the embedding's error.
  public func route(_ text: String, clock: AgentClock, scenario: SkillScenario = .all) async throws
    -> TurnRoute
  {
    if let definition = try await routineDefinition(text, clock: clock, scenario: scenario) {
      var route = TurnRoute(plan: .defineRoutine(definition), source: .routine, confidence: 1)
      route.routine = definition.name
      return route
    }
    if let request = Self.routineRequest(text) {
      return TurnRoute(plan: .manageRoutine(request), source: .routine, confidence: 1)
    }
    if let routine = routine(namedBy: text) {
      return try await plan(of: routine, clock: clock, scenario: scenario)
    }
    let planner = RequestPlanner(router: skills, thresholds: thresholds)
    if let compound = try await planner.plan(text, clock: clock, scenario: scenario) {
      return compound
    }
    // Only the user's text is routed: retrieved memories never choose a skill.
    var decision = try await planner.decisions.route(text, with: skills, clock: clock, scenario: scenario)
    if let settled = InverseGuard.settle(
      decision, text: text, skills: skills, clock: clock, scenario: scenario)
    {
      decision = settled
    } else if let chosen = decision,
      let question = InverseGuard.doubt(
        chosen, text: text, skills: skills, scenario: scenario, languageModel: hasLanguageModel)
    {
      // Unsure between a write and its inverse: ask, never write.
      return TurnRoute(
        plan: .clarify(question), source: RouteSource(chosen.method), confidence: chosen.score,
        decision: chosen)
    }
    return single(decision)
  }

  /// The route of one request from the skill router's decision (the last stages).
  func single(_ decision: RouteDecision?) -> TurnRoute {
    guard let decision else {
      return TurnRoute(
        plan: hasLanguageModel ? .askLanguageModel : .answerFromMemory, source: .none, confidence: 0)
    }
    let source = RouteSource(decision.method)
    if hasLanguageModel && !(decision.isConfident && decision.skillID != nil) {
      return TurnRoute(
        plan: .askLanguageModel, source: .planner, confidence: decision.score, decision: decision)
    }
    let plan: TurnPlan
    if decision.skillID == RecallSkill.skillID, hasLanguageModel {
      plan = .answerWithModel
    } else if let skill = decision.skillID {
      plan = .skills([PlanStep(skill: skill, arguments: decision.arguments)])
    } else if let conversation = decision.conversation {
      plan = .converse(conversation)
    } else {
      plan = .answerFromMemory
    }
    return TurnRoute(plan: plan, source: source, confidence: decision.score, decision: decision)
  }

  /// How `text` answers `question` (the agent asked for a missing argument): a retraction,
  /// the answer, or a new request (the intent model is at least
  /// `RoutingThresholds.newRequestWhileAsking` sure it asks for another skill).
  public func readAnswer(_ text: String, to question: SlotQuestion, clock: AgentClock) -> SlotReading {
    if skills.isRetraction(text) { return .retraction }
    var arguments = question.arguments
    switch question.parameter.type {
    case .date:
      if let match = DateExpressionParser(clock: clock).parse(text) {
        arguments[question.parameter.name] = .date(match.date)
      } else if isLikelyNewRequest(text, asked: question) {
        return .newRequest
      } else {
        // Not a date: the validator reports it as unreadable, never as today.
        arguments[question.parameter.name] = .string(text.trimmingCharacters(in: .whitespacesAndNewlines))
      }
    default:
      // A number or an ordinal answers "which one?" even when it reads like arithmetic.
      if !Self.isChoice(text), isLikelyNewRequest(text, asked: question) { return .newRequest }
      let answer = text.trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters))
      guard !answer.isEmpty else { return .newRequest }
      arguments[question.parameter.name] = .string(answer)
    }
    return .answer(arguments)
  }

  /// Whether the intent model is sure `text` asks for another skill than the one waiting.
  private func isLikelyNewRequest(_ text: String, asked question: SlotQuestion) -> Bool {
    guard let prediction = skills.intent(of: text) else { return false }
    return prediction.label != IntentClassifier.noneLabel
      && ConversationIntent(label: prediction.label) == nil
      && prediction.label != question.skillID && prediction.confidence >= thresholds.newRequestWhileAsking
  }

  /// A pick from a numbered list: `2`, `#12`, "the second one", 第二个.
  static func isChoice(_ text: String) -> Bool {
    let answer = text.lowercased().trimmingCharacters(
      in: .whitespacesAndNewlines.union(.punctuationCharacters))
    if Int(answer) != nil || (answer.hasPrefix("#") && Int(answer.dropFirst()) != nil) { return true }
    return answer.count <= 20 && SkillWords.list("dialogue.ordinals").contains { answer.contains($0) }
  }
}

extension RouteSource {
  init(_ method: RouteDecision.Method) {
    switch method {
    case .rules: self = .rules
    case .intent: self = .intent
    case .semantic: self = .semantic
    case .tieBreak: self = .tieBreak
    }
  }
}
