import Engram
import Foundation

/// The orchestrator of a plan of several steps (or of one conditional step): the look-ups
/// run at once, in order, and feed the steps after them; the steps that change something
/// are validated, their conditions checked, and the whole plan confirmed once; then they
/// run in order, a failed step leaving out the steps that need its result. Each step has its
/// own trace row (state, result, duration) under the turn's one execution id. Skills never
/// call skills: only this code feeds one step's result to another.
extension Agent {
  /// The sentence id of a plan's pending call (`PendingAction.skillID`).
  nonisolated public static let planSkillID = "plan"

  /// One step of a plan as it stands: waiting, run, or left out and why.
  struct PlannedStep: Sendable {
    var index: Int
    var step: PlanStep
    var arguments: SkillArguments
    var state: State
    var summary: String?

    enum State: Sendable, Equatable {
      case waiting
      case ran(String)
      case leftOut(String)
      case failed(String)
    }
  }

  /// What a plan keeps while it waits for its one confirmation.
  struct PlanRun: Sendable {
    var run: TurnRun
    var steps: [PlannedStep]
    var outputs: [Int: SkillOutput]
  }

  /// Whether `steps` is run as a plan (several steps, or a condition) rather than one step.
  static func isPlan(_ steps: [PlanStep]) -> Bool {
    steps.count > 1 || steps.contains { $0.condition != nil }
  }

  /// Runs `steps` as the plan of a turn for `text` (tests put a step no request routes to in
  /// a plan this way).
  func runPlanForTesting(_ steps: [PlanStep], text: String) async -> AgentState {
    let execution = UUID()
    currentExecution = execution
    let context = SkillContext(userText: text, clock: configuration.clock, engine: engine)
    let run = TurnRun(executionID: execution, context: context, route: .rules, queue: [], total: steps.count)
    return await startPlan(run, steps: steps)
  }

  /// Runs the look-ups, prepares the rest and asks one confirmation for them.
  func startPlan(_ run: TurnRun, steps: [PlanStep]) async -> AgentState {
    var plan = PlanRun(
      run: run,
      steps: steps.enumerated().map {
        PlannedStep(index: $0, step: $1, arguments: $1.arguments, state: .waiting)
      },
      outputs: [:])
    let language = run.context.language
    for position in plan.steps.indices {
      guard isCurrent(run.executionID) else { return state }
      var planned = plan.steps[position]
      if let reason = await leaveOutReason(planned, plan: plan) {
        planned.state = .leftOut(reason)
        plan.steps[position] = planned
        await tracePlanned(planned, run: run, status: .cancelled, result: reason)
        continue
      }
      planned.arguments = feed(planned, plan: plan)
      // A question no skill answers ("…, and who wrote Dune?") is answered in its place.
      if planned.step.skill == IntentClassifier.noneLabel {
        let output = await answerInPlan(planned, context: run.context)
        planned.state = .ran(output.text)
        plan.outputs[position] = output
        plan.steps[position] = planned
        noteShown(output)
        await tracePlanned(planned, run: run, status: .ok, result: output.text)
        continue
      }
      let skill: any Skill
      do {
        skill = try registry.enabledSkill(id: planned.step.skill)
        guard configuration.scenario.includes(skill) else { throw SkillRegistryError.unknownSkill(skill.id) }
      } catch {
        planned.state = .leftOut(Self.disabledSentence(planned.step.skill, language: language))
        plan.steps[position] = planned
        await tracePlanned(planned, run: run, status: .cancelled, result: "skill disabled or unknown")
        continue
      }
      do {
        let checked = try ArgumentValidator.validate(
          planned.arguments, against: skill.inputSchema, timeZone: configuration.clock.timeZone)
        switch try await skill.prepare(arguments: checked, context: run.context) {
        case .ready(let prepared): planned.arguments = prepared
        case .ask(_, let question, _):
          planned.state = .failed(question)
          plan.steps[position] = planned
          await tracePlanned(planned, run: run, status: .failed, result: question)
          continue
        case .reply(let output):
          planned.state = .ran(output.text)
          plan.outputs[position] = output
          plan.steps[position] = planned
          noteShown(output)
          continue
        }
      } catch {
        let sentence = FriendlyMessage.text(for: error, language: language)
        planned.state = .failed(sentence)
        plan.steps[position] = planned
        await tracePlanned(planned, run: run, status: .failed, result: sentence)
        continue
      }
      if skill.requiresConfirmation {
        planned.summary = skill.confirmationText(arguments: planned.arguments, context: run.context)
        plan.steps[position] = planned
        continue
      }
      // A look-up (no side effect) runs now: its answer is shown, and feeds later steps.
      plan.steps[position] = planned
      plan = await runPlanned(position, skill: skill, plan: plan)
    }
    guard plan.steps.contains(where: { $0.state == .waiting }) else { return await finishPlan(plan) }
    return await suspendPlan(plan)
  }

  /// The skills whose item keeps a condition about a later moment, checked when it comes due.
  static func keepsLaterCondition(_ skill: String) -> Bool { skill == "reminder.create" }

  /// The condition step `planned` hands its skill to keep: one about a later moment, on a
  /// skill that keeps it.
  private func laterCondition(of planned: PlannedStep) -> StepCondition? {
    guard let condition = planned.step.condition, Self.keepsLaterCondition(planned.step.skill),
      condition.isFuture(after: configuration.clock.now)
    else { return nil }
    return condition
  }

  /// Why a step is left out before it runs: an earlier step it needs did not run, its
  /// condition does not hold (or cannot be checked), or it is about a later moment and the
  /// step cannot keep it.
  private func leaveOutReason(_ planned: PlannedStep, plan: PlanRun) async -> String? {
    let language = plan.run.context.language
    if let source = planned.step.inputFrom, source < plan.steps.count {
      switch plan.steps[source].state {
      case .ran: break
      default: return Self.notRunSentence(needs: source + 1, language: language)
      }
    }
    guard let condition = planned.step.condition else { return nil }
    if condition.isFuture(after: configuration.clock.now) {
      // A reminder keeps it and is checked when it comes due; any other step would have to
      // be carried out now as if it held, so it is left out.
      if Self.keepsLaterCondition(planned.step.skill) { return nil }
      return Self.laterConditionSentence(condition, language: language)
    }
    switch await conditionChecker.check(condition, context: plan.run.context) {
    case .holds: return nil
    case .fails(let reason):
      return Self.conditionSentence(condition, reason: reason, held: false, language: language)
    case .unknown(let reason):
      return Self.conditionSentence(condition, reason: reason, held: nil, language: language)
    }
  }

  /// The arguments of a step with what the earlier step it needs found: a date a recalled
  /// fact names, the recalled text of a note, the reminder or event a list showed.
  private func feed(_ planned: PlannedStep, plan: PlanRun) -> SkillArguments {
    var arguments = planned.arguments
    guard let source = planned.step.inputFrom, let output = plan.outputs[source] else { return arguments }
    switch output {
    case .memories(let answer, let hits) where planned.step.skill == "calculator":
      // "12 percent of the rent I gave you": the number of the memory found first (not of a
      // date in it) stands for what was stored.
      var recalled = hits.first?.text ?? answer
      if let date = DateExpressionParser(clock: configuration.clock).parse(recalled) {
        recalled.removeSubrange(date.range)
      }
      if let value = ArithmeticExpression.numbers(in: recalled).first(where: { !$0.percent })?.text,
        let text = arguments["expression"]?.stringValue,
        let expression = CalculatorSkill.expression(text, taking: value)
      {
        arguments["expression"] = .string(expression)
      }
    case .memories(let answer, _):
      if arguments["when"] == nil, let match = DateExpressionParser(clock: configuration.clock).parse(answer)
      {
        arguments["when"] = .date(match.date)
      }
      if planned.step.skill == "note.create",
        arguments["content"] == nil || arguments["content"] == .string("")
      {
        arguments["content"] = .string(answer)
      }
    case .agenda(_, let ids, _) where !ids.isEmpty:
      let text = plan.run.context.userText.lowercased()
      let last = ["last", "最后"].contains { text.contains($0) }
      arguments["id"] = .int(Int(last ? ids.last! : ids.first!))
    default:
      break
    }
    return arguments
  }

  /// The answer to a planned question no skill takes: the language model's when there is one
  /// (memory's if it fails), else what memory holds on it ("nothing about that yet").
  private func answerInPlan(_ planned: PlannedStep, context: SkillContext) async -> SkillOutput {
    let question = planned.arguments["question"]?.stringValue ?? context.userText
    if let planner {
      do {
        let answer = try await planner.answer(question: question, context: lastContext?.rendered ?? "")
        let checked = AnswerCitations.check(answer, memories: context.turn.hits)
        return .memories(answer: checked.text, hits: checked.cited)
      } catch {
        // The model failing leaves memory's answer, as a whole question's does.
      }
    }
    return answerWithoutSkill(question, context: context)
  }

  /// Runs step `position` (already validated) and records its outcome.
  private func runPlanned(_ position: Int, skill: any Skill, plan initial: PlanRun) async -> PlanRun {
    var plan = initial
    var planned = plan.steps[position]
    transition(
      .executing(skillID: skill.id, step: position + 1, total: plan.steps.count), for: plan.run.executionID)
    var run = plan.run
    run.context.laterCondition = laterCondition(of: planned)
    switch await execute(skill, arguments: planned.arguments, run: run, step: position + 1) {
    case .success(let output):
      noteShown(output)
      planned.state = .ran(output.text)
      plan.outputs[position] = output
    case .failure(let error):
      planned.state = .failed(FriendlyMessage.text(for: error, language: plan.run.context.language))
    }
    plan.steps[position] = planned
    return plan
  }

  /// Persists one pending call for the whole plan and waits for `confirm()` or `cancel()`.
  private func suspendPlan(_ plan: PlanRun) async -> AgentState {
    let run = plan.run
    let language = run.context.language
    let summary = Self.planSummary(plan, language: language)
    let waiting = plan.steps.filter { $0.state == .waiting }
    let object = waiting.map { "\($0.index + 1):\($0.step.skill)" }.joined(separator: ",")
    let engine = self.engine
    let now = configuration.clock.now
    let owner = ProcessOwner.tag(run.executionID, agent: ownerToken)
    let callID: Int64
    do {
      callID = try await engine.agentRecords.addPendingCall(
        executionID: owner, step: 1, skillID: Self.planSkillID, arguments: "{\"steps\":\"\(object)\"}",
        summary: summary, at: now)
    } catch {
      return await fail(run, error, skillID: nil)
    }
    await trace(
      run.executionID, step: 1, skillID: Self.planSkillID, arguments: SkillArguments(), status: .pending,
      result: summary, startedAt: now, since: .now)
    guard isCurrent(run.executionID) else {
      try? await engine.agentRecords.setPendingCallStatus(callID, to: .cancelled, error: "stale", at: now)
      return state
    }
    let action = PendingAction(
      id: callID, executionID: run.executionID, skillID: Self.planSkillID, step: 1, total: plan.steps.count,
      arguments: SkillArguments(), confirmationText: summary, language: language)
    suspended = SuspendedStep(run: run, action: action, plan: plan)
    transition(.waitingForConfirmation(action), for: run.executionID)
    return state
  }

  /// The confirmed plan: every waiting step in order, each left out when a step it needs failed.
  func runConfirmedPlan(_ suspendedPlan: PlanRun, action: PendingAction) async -> AgentState {
    var plan = suspendedPlan
    let engine = self.engine
    let clock = configuration.clock
    do {
      guard try await engine.agentRecords.claimPendingCall(action.id, at: clock.now)
      else {
        return await finish(
          AgentReply(
            executionID: plan.run.executionID,
            text: Self.cancelledElsewhereMessage(plan.run.context.language),
            outputs: [], language: plan.run.context.language, route: plan.run.route))
      }
    } catch {
      return await fail(plan.run, error, skillID: nil)
    }
    for position in plan.steps.indices where plan.steps[position].state == .waiting {
      guard isCurrent(plan.run.executionID) else { return state }
      var planned = plan.steps[position]
      if let source = planned.step.inputFrom, source < plan.steps.count {
        if case .ran = plan.steps[source].state {
        } else {
          planned.state = .leftOut(
            Self.notRunSentence(needs: source + 1, language: plan.run.context.language))
          plan.steps[position] = planned
          await tracePlanned(
            planned, run: plan.run, status: .cancelled, result: "an earlier step it needs did not run")
          continue
        }
      }
      guard let skill = try? registry.enabledSkill(id: planned.step.skill) else {
        planned.state = .leftOut(
          Self.disabledSentence(planned.step.skill, language: plan.run.context.language))
        plan.steps[position] = planned
        continue
      }
      plan = await runPlanned(position, skill: skill, plan: plan)
    }
    let failed = plan.steps.contains { if case .failed = $0.state { return true } else { return false } }
    try? await engine.agentRecords.setPendingCallStatus(
      action.id, to: failed ? .failed : .executed, error: failed ? "a step failed" : nil, at: clock.now)
    return await finishPlan(plan)
  }

  /// The reply: each step's answer, or why it did not run.
  private func finishPlan(_ plan: PlanRun) async -> AgentState {
    let language = plan.run.context.language
    var lines: [String] = []
    for planned in plan.steps {
      switch planned.state {
      case .ran(let text): lines.append(text)
      case .leftOut(let reason), .failed(let reason):
        lines.append(Self.notDoneLine(planned, reason: reason, language: language))
      case .waiting: break
      }
    }
    let outputs = plan.steps.indices.compactMap { plan.outputs[$0] }
    return await finish(
      AgentReply(
        executionID: plan.run.executionID, text: lines.joined(separator: "\n"), outputs: outputs,
        language: language,
        route: plan.run.route))
  }

  private func tracePlanned(_ planned: PlannedStep, run: TurnRun, status: TraceStatus, result: String) async {
    await trace(
      run.executionID, step: planned.index + 1, skillID: planned.step.skill, arguments: planned.arguments,
      status: status, result: result, startedAt: configuration.clock.now, since: .now)
  }

  // MARK: - Sentences

  /// The one confirmation of a plan: what ran already, then each step to run, with its condition.
  static func planSummary(_ plan: PlanRun, language: MessageLanguage) -> String {
    var lines: [String] = []
    for planned in plan.steps {
      let number = planned.index + 1
      switch planned.state {
      case .waiting:
        var line = "\(number). \(planned.summary ?? planned.step.skill)"
        if let condition = planned.step.condition {
          let later =
            keepsLaterCondition(planned.step.skill) && condition.isFuture(after: plan.run.context.clock.now)
          switch (language, later) {
          case (.english, false): line += " (\(condition.phrase(language)))"
          case (.english, true): line += " (\(condition.phrase(language)), checked when it comes due)"
          case (.chinese, false): line += "（\(condition.phrase(language))）"
          case (.chinese, true): line += "（\(condition.phrase(language))，到时再检查）"
          }
        }
        lines.append(line)
      case .ran(let text): lines.append("\(number). \(text)")
      case .leftOut(let reason), .failed(let reason):
        lines.append("\(number). \(notDoneLine(planned, reason: reason, language: language))")
      }
    }
    let head = language == .english ? "Do these steps?" : "执行这些步骤吗？"
    return ([head] + lines).joined(separator: "\n")
  }

  static func notDoneLine(_ planned: PlannedStep, reason: String, language: MessageLanguage) -> String {
    language == .english
      ? "Not done (\(planned.step.skill)): \(reason)" : "未执行（\(planned.step.skill)）：\(reason)"
  }

  static func notRunSentence(needs step: Int, language: MessageLanguage) -> String {
    language == .english ? "step \(step), whose result it needs, did not run." : "它需要的第 \(step) 步没有执行。"
  }

  static func disabledSentence(_ skill: String, language: MessageLanguage) -> String {
    language == .english ? "the skill \(skill) is disabled." : "技能 \(skill) 已停用。"
  }

  static func conditionSentence(
    _ condition: StepCondition, reason: String, held: Bool?, language: MessageLanguage
  )
    -> String
  {
    switch (held, language) {
    case (false?, .english): return "the condition “\(condition.quoted(language))” does not hold (\(reason))."
    case (false?, .chinese): return "条件“\(condition.quoted(language))”不成立（\(reason)）。"
    case (_, .english):
      return "the condition “\(condition.quoted(language))” could not be checked (\(reason))."
    case (_, .chinese): return "条件“\(condition.quoted(language))”无法检查（\(reason)）。"
    }
  }

  static func laterConditionSentence(_ condition: StepCondition, language: MessageLanguage) -> String {
    language == .english
      ? "the condition “\(condition.quoted(language))” is about a later moment, and only a reminder keeps a condition until then; ask again closer to the time, or without the condition."
      : "条件“\(condition.quoted(language))”要到以后才能判断，只有提醒能把条件保留到那时；请临近时再说，或者去掉条件。"
  }
}
