import Engram
import Foundation

extension Agent {
  /// The most steps one turn runs (plan steps plus chained ones); a longer chain fails the turn.
  public static let maxSteps = 16

  /// A string argument containing this placeholder receives the previous step's output text.
  public static let previousOutputPlaceholder = "{{previous}}"

  // MARK: - One turn

  func runTurn(_ execution: UUID, text: String) async -> AgentState {
    let clock = configuration.clock
    transition(.retrieving, for: execution)
    var language = MessageLanguage.detect(text)
    let prompt: TurnContext
    do {
      if configuration.persistTurns {
        // Embedded after the reply (see persistReply), off the turn's critical path.
        _ = try await engine.conversation.appendTurn(
          role: "user", content: text, session: sessionID, at: clock.now, embedNow: false)
      }
      prompt = try await buildContext(for: text)
    } catch {
      return await fail(execution, error, language: language, skillID: nil)
    }
    guard isCurrent(execution) else { return state }
    lastContext = prompt
    contextsBuilt += 1
    let context = SkillContext(
      userText: text, turn: prompt, clock: clock, engine: engine,
      partial: streamingOutput(for: execution), recentItems: recentItems)
    language = context.language
    currentLanguage = language

    transition(.planning, for: execution)
    // A question the agent asked (a missing argument) is answered by this line, or dropped.
    if let question = awaitingAnswer {
      awaitingAnswer = nil
      if let resumed = await resume(question, with: text, execution: execution, context: context) {
        return resumed
      }
    }
    let routeStart = ContinuousClock.now
    let routeStartedAt = clock.now
    let plan: TurnPlan
    let source: RouteSource
    do {
      (plan, source) = try await route(text, prompt: prompt, execution: execution)
    } catch {
      await trace(
        execution, step: 0, skillID: nil, arguments: SkillArguments(), status: Self.status(for: error),
        error: error, startedAt: routeStartedAt, since: routeStart)
      // The model failed on a question: memory answers it (with a notice), never nothing.
      if Self.isModelFailure(error), TextCues.isQuestion(text), isCurrent(execution) {
        return await answerAfterModelFailure(error, text: text, context: context, execution: execution)
      }
      return await fail(execution, error, language: language, skillID: nil)
    }
    let first = plan.steps.first
    await trace(
      execution, step: 0, skillID: first?.skill, arguments: first?.arguments ?? SkillArguments(), status: .ok,
      result: plan.summary(source: source), startedAt: routeStartedAt, since: routeStart)
    guard isCurrent(execution) else { return state }
    return await dispatch(plan, source: source, text: text, context: context, execution: execution)
  }

  /// The turn's router: the skill router's stages, with the language model as the last one
  /// when a planner is on hand.
  var turnRouter: TurnRouter { TurnRouter(skills: router, hasLanguageModel: planner != nil) }

  /// Where this turn goes: the turn router's plan, or the language model planner's when the
  /// router leaves the turn to it.
  func route(_ text: String, prompt: TurnContext, execution: UUID) async throws -> (TurnPlan, RouteSource) {
    var router = turnRouter
    let engine = self.engine
    // Read each turn: a routine saved by another tool (the CLI, the web app) runs at once.
    router.routines = try await engine.agentRecords.routines()
    let routed = try await router.route(text, clock: configuration.clock, scenario: configuration.scenario)
    guard case .askLanguageModel = routed.plan else { return (routed.plan, routed.source) }
    // The language model takes what the earlier stages leave (it answers with the memories
    // in hand); without one, the memories answer.
    guard let planner else { return (.answerFromMemory, .none) }
    let planned = try await planner.plan(
      request: text, context: prompt.rendered, scenario: configuration.scenario,
      partial: streamingOutput(for: execution))
    switch planned.action {
    case .skill(let step): return (.skills([step]), .planner)
    case .plan(let steps): return (.skills(steps), .planner)
    case .final(let answer): return (.final(answer), .planner)
    }
  }

  /// Carries out a routed turn: runs its skills, answers from memory, or says the final answer.
  func dispatch(
    _ plan: TurnPlan, source: RouteSource, text: String, context: SkillContext, execution: UUID
  ) async -> AgentState {
    let language = context.language
    switch plan {
    case .answerFromMemory:
      let output = answerWithoutSkill(text, context: context)
      return await finish(
        AgentReply(
          executionID: execution, text: output.text, outputs: [output], language: language,
          route: output.isMemoryAnswer ? .memory : source))
    case .final(let answer):
      // A final answer drawn from the memories in hand cites only those; to a question memory
      // answers, it keeps the retrieved fact.
      let checked = AnswerCitations.check(answer, memories: context.turn.hits)
      let reply =
        TextCues.isQuestion(text)
        ? grounded(checked.text, cited: checked.cited, question: text, context: context)
        : (text: checked.text, hits: checked.cited)
      return await finish(
        AgentReply(
          executionID: execution, text: reply.text,
          outputs: reply.hits.isEmpty ? [] : [.memories(answer: reply.text, hits: reply.hits)],
          language: language, route: source))
    case .answerWithModel:
      guard let planner else {
        return await dispatch(
          .answerFromMemory, source: source, text: text, context: context, execution: execution)
      }
      do {
        let answer = try await planner.answer(
          question: text, context: lastContext?.rendered ?? "", partial: streamingOutput(for: execution))
        let checked = AnswerCitations.check(answer, memories: context.turn.hits)
        let reply = grounded(checked.text, cited: checked.cited, question: text, context: context)
        return await finish(
          AgentReply(
            executionID: execution, text: reply.text,
            outputs: [.memories(answer: reply.text, hits: reply.hits)], language: language, route: source
          ))
      } catch {
        if Self.isModelFailure(error), isCurrent(execution) {
          return await answerAfterModelFailure(error, text: text, context: context, execution: execution)
        }
        return await fail(execution, error, language: language, skillID: RecallSkill.skillID)
      }
    case .askLanguageModel:
      // Only a router with a language model plans this, and `route` asks the model then.
      return await dispatch(
        .answerFromMemory, source: source, text: text, context: context, execution: execution)
    case .converse(let conversation):
      // Small talk or a retraction: a reply of its own, no memory, no side effect.
      let reply = conversation.reply(language)
      return await finish(
        AgentReply(
          executionID: execution, text: reply, outputs: [.text(reply)], language: language, route: source))
    case .clarify(let question):
      // A write or its inverse: nothing runs until the user says which.
      let reply = question.question(language)
      return await finish(
        AgentReply(
          executionID: execution, text: reply, outputs: [.text(reply)], language: language, route: source))
    case .defineRoutine(let definition):
      return await saveRoutine(definition, execution: execution, language: language)
    case .manageRoutine(let request):
      return await manageRoutines(request, execution: execution, language: language)
    case .skills(let steps) where steps.isEmpty:
      return await finish(
        AgentReply(
          executionID: execution, text: Self.noSkillMessage(language), outputs: [], language: language,
          route: source))
    case .skills(let steps):
      let run = TurnRun(
        executionID: execution, context: context, route: source, queue: steps, total: steps.count)
      // Several steps, or a condition: one plan, confirmed once (Agent+Plan.swift). A
      // language model's plan is first checked whole against the skills' schemas: one
      // invalid call and nothing runs. Its steps that chain `{{previous}}` still confirm
      // step by step, feeding each result forward.
      // A routine is always a plan: a step whose skill is disabled is left out, and said.
      if source == .planner {
        if let refusal = plannerRefusal(steps, language: language) {
          await trace(
            execution, step: 1, skillID: steps.first?.skill,
            arguments: steps.first?.arguments ?? SkillArguments(),
            status: .failed, result: refusal, startedAt: configuration.clock.now, since: .now)
          return await finish(
            AgentReply(
              executionID: execution, text: refusal, outputs: [.text(refusal)], language: language,
              route: source))
        }
        if steps.count > 1, !steps.contains(where: Self.usesPrevious) {
          return await startPlan(run, steps: steps)
        }
        return await advance(run)
      }
      if source == .routine || Self.isPlan(steps) {
        return await startPlan(run, steps: steps)
      }
      return await advance(run)
    }
  }

  /// Runs the queued steps in order until one needs confirmation, one fails, or all are done.
  func advance(_ initial: TurnRun) async -> AgentState {
    var run = initial
    let clock = configuration.clock
    while !run.queue.isEmpty {
      let step = run.queue.removeFirst()
      run.stepNumber += 1
      let number = run.stepNumber
      let arguments = Self.substitute(step.arguments, previous: run.previousText)
      let skill: any Skill
      let validated: SkillArguments
      do {
        guard number <= Self.maxSteps else {
          throw SkillError.executionFailed(skill: step.skill, reason: "more than \(Self.maxSteps) steps")
        }
        skill = try registry.enabledSkill(id: step.skill)
        guard configuration.scenario.includes(skill) else {
          throw SkillRegistryError.unknownSkill(step.skill)
        }
        if let missing = Self.askableMissingParameter(of: skill, in: arguments) {
          return await ask(for: missing, skill: skill, arguments: arguments, run: run, step: number)
        }
        if let (parameter, text) = Self.unreadableDate(of: skill, in: arguments, timeZone: clock.timeZone) {
          // Say what could not be read, and ask again: never today or tomorrow instead.
          var remaining = arguments
          remaining[parameter.name] = nil
          let reason = FriendlyMessage.text(
            for: SkillError.unreadableDate(name: parameter.name, text: text), language: run.context.language)
          return await ask(
            for: parameter, skill: skill, arguments: remaining, run: run, step: number, preface: reason)
        }
        let checked = try ArgumentValidator.validate(
          arguments, against: skill.inputSchema, timeZone: clock.timeZone)
        switch try await skill.prepare(arguments: checked, context: run.context) {
        case .ready(let prepared): validated = prepared
        case .ask(let name, let question, let partial):
          guard let parameter = skill.inputSchema.parameters.first(where: { $0.name == name }) else {
            throw SkillError.executionFailed(
              skill: skill.id, reason: "asked for an unknown parameter \(name)")
          }
          return await ask(
            for: parameter, skill: skill, arguments: partial, run: run, step: number, question: question)
        case .reply(let output):
          noteShown(output)
          run.outputs.append(output)
          continue
        }
      } catch {
        await trace(
          run.executionID, step: number, skillID: step.skill, arguments: arguments, status: .failed,
          error: error,
          startedAt: clock.now, since: .now)
        return await fail(run, error, skillID: step.skill)
      }
      if skill.requiresConfirmation {
        return await suspend(run, skill: skill, arguments: validated, step: number)
      }
      transition(.executing(skillID: skill.id, step: number, total: run.total), for: run.executionID)
      switch await execute(skill, arguments: validated, run: run, step: number) {
      case .success(let output):
        noteShown(output)
        Self.absorb(output, into: &run)
      case .failure(let error): return await fail(run, error, skillID: skill.id)
      }
      guard isCurrent(run.executionID) else { return state }
    }
    let text = run.outputs.map(\.text).joined(separator: "\n")
    return await finish(
      AgentReply(
        executionID: run.executionID, text: text, outputs: run.outputs, language: run.context.language,
        route: run.route))
  }

  /// Persists the pending call and its trace, then waits for `confirm()` or `cancel()`.
  func suspend(_ run: TurnRun, skill: any Skill, arguments: SkillArguments, step: Int) async -> AgentState {
    let summary = skill.confirmationText(arguments: arguments, context: run.context)
    let json = ArgumentsJSON.encode(arguments)
    let engine = self.engine
    let execution = run.executionID
    let now = configuration.clock.now
    let skillID = skill.id
    let owner = ProcessOwner.tag(execution, agent: ownerToken)
    let callID: Int64
    do {
      callID = try await engine.agentRecords.addPendingCall(
        executionID: owner, step: step, skillID: skillID, arguments: json, summary: summary, at: now)
    } catch {
      return await fail(run, error, skillID: skillID)
    }
    await trace(
      execution, step: step, skillID: skillID, arguments: arguments, status: .pending, result: summary,
      startedAt: now, since: .now)
    guard isCurrent(execution) else {
      try? await engine.agentRecords.setPendingCallStatus(callID, to: .cancelled, error: "stale", at: now)
      return state
    }
    let action = PendingAction(
      id: callID, executionID: execution, skillID: skillID, step: step, total: run.total,
      arguments: arguments,
      confirmationText: summary, language: run.context.language)
    suspended = SuspendedStep(run: run, action: action)
    transition(.waitingForConfirmation(action), for: execution)
    return state
  }

  /// Runs a confirmed step, records its outcome on the pending call, then the rest of the turn.
  func runConfirmed(_ step: SuspendedStep) async -> AgentState {
    var run = step.run
    let action = step.action
    let engine = self.engine
    let clock = configuration.clock
    do {
      // Atomically: a call another process cancelled meanwhile is never run.
      guard try await engine.agentRecords.claimPendingCall(action.id, at: clock.now)
      else {
        await trace(
          run.executionID, step: action.step, skillID: action.skillID, arguments: action.arguments,
          status: .cancelled, result: "cancelled elsewhere before confirmation", startedAt: clock.now,
          since: .now)
        return await finish(
          AgentReply(
            executionID: run.executionID, text: Self.cancelledElsewhereMessage(run.context.language),
            outputs: run.outputs, language: run.context.language, route: run.route))
      }
      let skill = try registry.enabledSkill(id: action.skillID)
      switch await execute(skill, arguments: action.arguments, run: run, step: action.step) {
      case .success(let output):
        noteShown(output)
        try await engine.agentRecords.setPendingCallStatus(action.id, to: .executed, at: clock.now)
        Self.absorb(output, into: &run)
      case .failure(let error):
        let description = String(describing: error)
        try? await engine.agentRecords.setPendingCallStatus(
          action.id, to: .failed, error: description, at: clock.now)
        return await fail(run, error, skillID: action.skillID)
      }
    } catch {
      return await fail(run, error, skillID: action.skillID)
    }
    guard isCurrent(run.executionID) else { return state }
    return await advance(run)
  }

  /// The user declined: the call is cancelled and the turn finishes saying nothing changed.
  func decline(_ step: SuspendedStep) async -> AgentState {
    await abandon(step, reason: nil)
    let run = step.run
    let message = FriendlyMessage.text(
      for: SkillError.confirmationCancelled(skill: step.action.skillID), language: run.context.language)
    let text = (run.outputs.map(\.text) + [message]).joined(separator: "\n")
    return await finish(
      AgentReply(
        executionID: run.executionID, text: text, outputs: run.outputs, language: run.context.language,
        route: run.route))
  }

  /// Marks a waiting call cancelled (declined, or replaced by a new request) and traces it.
  func abandon(_ step: SuspendedStep, reason: String?) async {
    let engine = self.engine
    let now = configuration.clock.now
    let id = step.action.id
    do {
      try await engine.agentRecords.setPendingCallStatus(id, to: .cancelled, error: reason, at: now)
    } catch {
      persistenceFailures += 1
    }
    await trace(
      step.run.executionID, step: step.action.step, skillID: step.action.skillID,
      arguments: step.action.arguments,
      status: .cancelled, result: reason ?? "declined by the user", startedAt: now, since: .now)
  }

  /// Runs one skill through `SkillExecutor` (validation, timeout, retries) and traces it.
  func execute(_ skill: any Skill, arguments: SkillArguments, run: TurnRun, step: Int) async -> Result<
    SkillOutput, any Error
  > {
    let start = ContinuousClock.now
    let startedAt = configuration.clock.now
    do {
      let output = try await SkillExecutor.run(skill, arguments: arguments, context: run.context)
      await trace(
        run.executionID, step: step, skillID: skill.id, arguments: arguments, status: .ok,
        result: output.text,
        startedAt: startedAt, since: start)
      return .success(output)
    } catch {
      await trace(
        run.executionID, step: step, skillID: skill.id, arguments: arguments, status: Self.status(for: error),
        error: error, startedAt: startedAt, since: start)
      return .failure(error)
    }
  }

  // MARK: - Endings

  func finish(_ reply: AgentReply) async -> AgentState {
    guard isCurrent(reply.executionID) else { return state }
    await persistReply(reply.text)
    transition(.finished(reply), for: reply.executionID)
    return state
  }

  func fail(_ run: TurnRun, _ error: any Error, skillID: String?) async -> AgentState {
    await fail(run.executionID, error, language: run.context.language, skillID: skillID)
  }

  func fail(_ execution: UUID, _ error: any Error, language: MessageLanguage, skillID: String?) async
    -> AgentState
  {
    guard isCurrent(execution) else { return state }
    let reason = Self.reason(for: error)
    let message =
      reason == .cancelled
      ? Self.stoppedMessage(language) : FriendlyMessage.text(for: error, language: language)
    await persistReply(message)
    transition(
      .failed(AgentFailure(executionID: execution, reason: reason, message: message, skillID: skillID)),
      for: execution)
    return state
  }

  func persistReply(_ text: String) async {
    guard configuration.persistTurns, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      return
    }
    do {
      _ = try await engine.conversation.appendTurn(
        role: "assistant", content: text, session: sessionID, at: configuration.clock.now, embedNow: false)
    } catch {
      persistenceFailures += 1
    }
    embedTurnsInBackground()
  }

  // MARK: - Context

  /// The engine's turn context within the budget the catalog leaves, from one engine call:
  /// the retrieved items (search hits, with their kinds), every preference, the recent turns
  /// and the prompt text. Skills receive it as it is.
  func buildContext(for text: String) async throws -> TurnContext {
    // The catalog is sent only to a language model: without one, memories get the budget.
    let catalogCost =
      planner == nil ? 0 : TokenEstimator.estimate(registry.catalog(for: configuration.scenario))
    let memoryBudget = max(configuration.minimumMemoryBudget, configuration.contextBudget - catalogCost)
    let context = try await engine.context(
      for: text, budget: memoryBudget, memoryCount: configuration.memoryCount,
      recentCount: configuration.recentCount, session: sessionID,
      filters: SearchFilters(excludedSessions: [sessionID]), timeZone: configuration.clock.timeZone)
    return try await fitted(context, budget: memoryBudget)
  }

  // MARK: - Traces

  func trace(
    _ execution: UUID, step: Int, skillID: String?, arguments: SkillArguments,
    status: TraceStatus,
    result: String? = nil, error: (any Error)? = nil, startedAt: Date, since start: ContinuousClock.Instant
  ) async {
    let elapsed = ContinuousClock.now - start
    let (seconds, attoseconds) = elapsed.components
    let record = Trace(
      executionID: execution.uuidString, step: step, skillID: skillID,
      arguments: ArgumentsJSON.encode(arguments),
      result: result, status: status, startedAt: startedAt,
      durationMs: max(0, Double(seconds) * 1000 + Double(attoseconds) / 1e15),
      error: error.map { String(describing: $0) })
    let engine = self.engine
    do {
      _ = try await engine.agentRecords.recordTrace(record)
    } catch {
      persistenceFailures += 1
    }
  }

  // MARK: - Helpers

  /// Keeps what "it" and "the second one" refer to next: the reminder or event just
  /// created, changed or shown; a cancelled one is forgotten.
  func noteShown(_ output: SkillOutput) {
    switch output {
    case .created(let item, _), .changed(let item, _):
      if item.kind == .reminder || item.kind == .event { recentItems = [item.id] }
    case .agenda(_, let ids, _):
      if !ids.isEmpty { recentItems = ids }
    case .removed(let item, _):
      recentItems.removeAll { $0 == item.id }
    default:
      break
    }
  }

  static func absorb(_ output: SkillOutput, into run: inout TurnRun) {
    if case .chain(let skill, let arguments) = output {
      run.queue.insert(PlanStep(skill: skill, arguments: arguments), at: 0)
      run.total += 1
    } else {
      run.outputs.append(output)
      run.previousText = output.text
    }
  }

  /// Replaces `previousOutputPlaceholder` in string arguments with the previous output's text.
  /// Whether a step takes the previous step's result through `{{previous}}`.
  static func usesPrevious(_ step: PlanStep) -> Bool {
    step.arguments.names.contains { name in
      if case .string(let text)? = step.arguments[name] { return text.contains(previousOutputPlaceholder) }
      return false
    }
  }

  /// Why a language model's plan cannot run, as one sentence, or nil when every step names
  /// an enabled skill of the scenario and its arguments fit the skill's schema (a single
  /// step may leave a required argument out: the agent asks for it).
  func plannerRefusal(_ steps: [PlanStep], language: MessageLanguage) -> String? {
    for (index, step) in steps.enumerated() {
      let reason: String
      do {
        let skill = try registry.enabledSkill(id: step.skill)
        guard configuration.scenario.includes(skill) else {
          throw SkillRegistryError.unknownSkill(step.skill)
        }
        if Self.usesPrevious(step) { continue }
        _ = try ArgumentValidator.validate(
          step.arguments, against: skill.inputSchema, timeZone: configuration.clock.timeZone)
        continue
      } catch SkillError.missingArgument where steps.count == 1 {
        continue
      } catch {
        reason = FriendlyMessage.text(for: error, language: language)
      }
      switch language {
      case .english:
        return
          "The language model's plan cannot run: step \(index + 1) (\(step.skill)): \(reason) Nothing was done."
      case .chinese:
        return "语言模型给出的计划无法执行：第\(index + 1)步（\(step.skill)）：\(reason) 什么都没有做。"
      }
    }
    return nil
  }

  static func substitute(_ arguments: SkillArguments, previous: String?) -> SkillArguments {
    var result = arguments
    for name in arguments.names {
      if case .string(let text)? = arguments[name], text.contains(previousOutputPlaceholder) {
        result[name] = .string(text.replacingOccurrences(of: previousOutputPlaceholder, with: previous ?? ""))
      }
    }
    return result
  }

  static func status(for error: any Error) -> TraceStatus {
    switch reason(for: error) {
    case .cancelled: return .cancelled
    case .skill(.timeout): return .timeout
    default: return .failed
    }
  }

  static func reason(for error: any Error) -> AgentFailure.Reason {
    switch error {
    case let error as SkillError: return .skill(error)
    case let error as SkillRegistryError: return .registry(error)
    case let error as PlannerError: return .planner(error)
    case let error as LanguageModelError: return .languageModel(error)
    case let error as RouterError: return .router(error)
    case is CancellationError: return .cancelled
    case EngramError.cancelled: return .cancelled
    default: return .other(String(describing: error))
    }
  }

  /// The date parameter of `skill` whose text in `arguments` cannot be read as a date, with
  /// that text.
  static func unreadableDate(of skill: any Skill, in arguments: SkillArguments, timeZone: TimeZone)
    -> (SkillParameter, String)?
  {
    for parameter in skill.inputSchema.parameters where parameter.type == .date {
      guard case .string(let text)? = arguments[parameter.name] else { continue }
      let single = SkillInputSchema([
        SkillParameter(parameter.name, .date, description: parameter.description)
      ])
      do {
        _ = try ArgumentValidator.validate(
          [parameter.name: .string(text)], against: single, timeZone: timeZone)
      } catch {
        if case .unreadableDate(_, let shown) = error { return (parameter, shown) }
      }
    }
    return nil
  }

  /// The reply when a confirmed action had been cancelled meanwhile (by another process).
  public static func cancelledElsewhereMessage(_ language: MessageLanguage) -> String {
    language == .english
      ? "That action was cancelled before you confirmed it; nothing was done."
      : "这个操作在你确认之前已被取消，没有执行任何操作。"
  }

  /// The reply when no skill fits and no language model is configured.
  public static func noSkillMessage(_ language: MessageLanguage) -> String {
    switch language {
    case .english:
      return
        "I'm not sure how to help with that. I can remember things, set reminders and answer from memory."
    case .chinese: return "我不太确定该怎么帮你。我可以记住事情、设置提醒，或者根据记忆回答问题。"
    }
  }
}

/// Arguments as a JSON object text for traces and pending calls (dates in ISO 8601, keys sorted).
enum ArgumentsJSON {
  static func encode(_ arguments: SkillArguments) -> String {
    var object: [String: Any] = [:]
    for name in arguments.names {
      switch arguments[name]! {
      case .string(let text): object[name] = text
      case .int(let number): object[name] = number
      case .number(let number): object[name] = number.isFinite ? number : String(number)
      case .bool(let flag): object[name] = flag
      case .date(let date): object[name] = date.formatted(.iso8601)
      }
    }
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
      return "{}"
    }
    return String(decoding: data, as: UTF8.self)
  }
}
