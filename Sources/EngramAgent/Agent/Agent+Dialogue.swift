import Foundation

/// A question the agent asked because a skill lacked a required argument; the user's next
/// line answers it (or cancels it).
public struct SlotQuestion: Sendable {
  /// The skill waiting for the argument.
  public var skillID: String
  /// The missing parameter.
  public var parameter: SkillParameter
  /// The arguments the skill already has.
  public var arguments: SkillArguments
  /// The question shown to the user.
  public var text: String
  /// The language it was asked in.
  public var language: MessageLanguage
}

extension Agent {
  /// The first required parameter of `skill` that `arguments` lack and that a person can
  /// answer in one line (text or a date), or nil.
  static func askableMissingParameter(of skill: any Skill, in arguments: SkillArguments) -> SkillParameter? {
    skill.inputSchema.parameters.first { parameter in
      parameter.isRequired && arguments[parameter.name] == nil
        && (parameter.type == .string || parameter.type == .date)
    }
  }

  /// Ends the turn with a question for the missing `parameter`; the next line answers it.
  /// `preface` (why it asks: an unreadable date, say) comes before the question.
  func ask(
    for parameter: SkillParameter, skill: any Skill, arguments: SkillArguments, run: TurnRun, step: Int,
    preface: String? = nil, question: String? = nil
  ) async -> AgentState {
    let language = run.context.language
    let asked = question ?? Self.question(for: parameter, skillID: skill.id, language: language)
    let question = SlotQuestion(
      skillID: skill.id, parameter: parameter, arguments: arguments,
      text: preface.map { "\($0) \(asked)" } ?? asked, language: language)
    await trace(
      run.executionID, step: step, skillID: skill.id, arguments: arguments, status: .pending,
      result: "asked for \(parameter.name)", startedAt: configuration.clock.now, since: .now)
    guard isCurrent(run.executionID) else { return state }
    awaitingAnswer = question
    return await finish(
      AgentReply(
        executionID: run.executionID, text: question.text, outputs: run.outputs, language: language,
        route: .dialogue))
  }

  /// Continues the skill that asked `question` with `text` as the answer. Returns nil when
  /// the line is not an answer but a new request (it is then routed as usual).
  func resume(_ question: SlotQuestion, with text: String, execution: UUID, context: SkillContext) async
    -> AgentState?
  {
    let language = question.language
    let arguments: SkillArguments
    switch turnRouter.readAnswer(text, to: question, clock: configuration.clock) {
    case .retraction:
      return await finish(
        AgentReply(
          executionID: execution, text: Self.cancelledMessage(language), outputs: [], language: language,
          route: .dialogue))
    case .newRequest:
      return nil
    case .answer(let answered):
      arguments = answered
    }
    let run = TurnRun(
      executionID: execution, context: context, route: .dialogue,
      queue: [PlanStep(skill: question.skillID, arguments: arguments)], total: 1)
    return await advance(run)
  }

  nonisolated static func cancelledMessage(_ language: MessageLanguage) -> String {
    language == .english ? "OK, cancelled. Nothing was saved." : "好的，已取消，没有保存任何内容。"
  }

  /// The question for a missing argument.
  nonisolated static func question(for parameter: SkillParameter, skillID: String, language: MessageLanguage)
    -> String
  {
    switch (parameter.name, language) {
    case ("when", .english):
      return skillID == "reminder.create" ? "When should I remind you?" : "When is it?"
    case ("when", .chinese): return skillID == "reminder.create" ? "什么时候提醒你？" : "是什么时候？"
    case ("title", .english):
      return skillID == "reminder.create" ? "What should I remind you of?" : "What is the event?"
    case ("title", .chinese): return skillID == "reminder.create" ? "要提醒你什么事？" : "是什么活动？"
    case ("content", .english): return "What should I write down?"
    case ("content", .chinese): return "要记下什么？"
    case ("query", .english): return "What should I look up?"
    case ("query", .chinese): return "要查什么？"
    case ("expression", .english): return "What should I calculate?"
    case ("expression", .chinese): return "要算什么？"
    case (let name, .english): return "What is the \(name)? (\(parameter.description))"
    case (let name, .chinese): return "请告诉我\(name)（\(parameter.description)）。"
    }
  }
}
