import Foundation
import Synchronization

/// The rules that turn one request into several steps: it splits the text into parts at
/// the words people join requests with, finds the conditions ("if it rains on Friday",
/// 要是没安排的话) and the steps they guard, and routes each part with the skill router.
///
/// A request becomes a plan only when every part it would run routes surely to a skill
/// (at least `RoutingThresholds.compoundPart`); otherwise it is one step, routed whole, so a
/// single request ("remind me to call mom and dad") is never cut. The words are data in
/// `skill-words.json` (`plan.*`).
struct RequestPlanner: Sendable {
  let router: SkillRouter
  let thresholds: RoutingThresholds
  /// The skill router's decision for each text this request has routed: a part is looked at
  /// by several rules (merging, joining, planning), and routes once.
  let decisions = DecisionMemo()

  /// One part of a request: text to route, or a condition over the parts near it.
  struct Part: Sendable {
    var text: String
    var isQuestion: Bool
    /// The condition this part states (it is then not a step of its own).
    var condition: ConditionText?
    /// "otherwise", 不然: the part runs when the sentence's condition does not hold.
    var isOtherwise = false
    /// Whether the sentence's condition guards this part (not a request before the condition).
    var isGuarded = true
    /// Whether a join that opens a new request ("then", 然后) stands before it in its sentence.
    var afterJoin = false
    /// Whether such a join stands after it: the part before "then" is a request too.
    var beforeJoin = false

    /// Whether the part is a request by where it stands: after such a join (once a request
    /// came before it), or before one.
    func standsAsRequest(afterARequest: Bool) -> Bool {
      (afterJoin && afterARequest) || beforeJoin
    }
    /// The write this part repeats with a time and a purpose of its own ("ping me at 3 to
    /// stretch, at 4 to phone Al"): its skill when the part alone names none.
    var repeats: String?
  }

  /// A condition as written, before it is read.
  struct ConditionText: Sendable {
    var text: String
    var negatedByMarker: Bool
    /// "if not" / "if so" after a question: the question is what the condition is about.
    var answersQuestion: Bool = false
    /// "if it is", "if I don't": the marker repeats the verb of what came before, so it takes
    /// up that condition's words without their negation (`plan.answer_echo`).
    var echoesVerb: Bool = false
  }

  /// The plan of `text` when it holds several steps or a condition; nil for a single request.
  func plan(_ text: String, clock: AgentClock, scenario: SkillScenario) async throws -> TurnRoute? {
    let trimmed = Self.pausesAsCommas(text.trimmingCharacters(in: .whitespacesAndNewlines))
    // "book… actually no, cancel the 2pm", 说错了，…: only what the user settles on is asked.
    if let corrected = Self.afterCorrection(trimmed) {
      if let route = try await plan(corrected, clock: clock, scenario: scenario) { return route }
      guard let decision = try await surely(corrected, clock: clock, scenario: scenario, lenient: true),
        let skill = decision.skillID
      else { return nil }
      return TurnRoute(
        plan: .skills([PlanStep(skill: skill, arguments: decision.arguments)]),
        source: RouteSource(decision.method),
        confidence: decision.score, decision: decision)
    }
    let sentences = Self.withPointersJoined(
      Self.sentences(trimmed).flatMap(Self.lookupAndAnswer).flatMap(Self.branches))
    var steps: [PlanStep] = []
    var sources: [RouteDecision] = []
    // The text each step was routed from.
    var texts: [String] = []
    // The question just before an "if not" / "if so" sentence, and its step.
    var lastQuestion: (text: String, step: Int)?
    var conditionCount = 0
    // The condition of the last sentence that had one: an "otherwise" or "if not" sentence
    // after it runs when it does not hold.
    var lastCondition: StepCondition?
    // Whether that condition was written with a negation ("if it's not raining").
    var lastWrittenNegated = false
    // The zone of a place named by a statement before the requests ("Tomás lives in Lima."): "there".
    var contextZone: String?
    for (sentenceIndex, sentence) in sentences.enumerated() {
      // "thanks", "quick question:": courtesy around the requests, nothing to run.
      if Self.isCourtesy(sentence.text) { continue }
      // "Is my evening clear? If so, …": the next sentence answers this one.
      let answeredNext =
        sentence.isQuestion
        && sentences.dropFirst(sentenceIndex + 1).first.map { next in
          Self.answerMarkers().contains { Self.startsWith(next.text, $0.0) }
        } ?? false
      // A note's text is one step whatever it lists ("note: eggs, milk and bread").
      let parts: [Part]
      if Self.isNote(sentence.text), let (note, rest) = Self.noteAndRequest(sentence.text) {
        // "note: …, then remind me …": the note ends where another write opens.
        parts =
          [Part(text: note, isQuestion: false)]
          + (try await merged(
            Self.parts(of: rest, isQuestion: sentence.isQuestion), clock: clock, scenario: scenario))
      } else if Self.isNote(sentence.text) {
        parts = [Part(text: sentence.text, isQuestion: false)]
      } else {
        parts = try await merged(
          Self.parts(of: sentence.text, isQuestion: sentence.isQuestion), clock: clock, scenario: scenario)
      }
      let sentenceCondition = parts.compactMap(\.condition).first
      var condition: StepCondition?
      var conditionRead = false
      var writtenNegated = false
      var isBranch = false
      for part in parts where part.condition == nil {
        if part.isGuarded, let written = sentenceCondition, !conditionRead {
          // Read once the requests before it are steps: "there" and a question's zone need them.
          conditionRead = true
          if let earlier = lastCondition, Self.isElliptical(written, after: lastQuestion, steps: steps) {
            // "if not, ...", 还没到点的话 after a sentence with a condition: that condition, or
            // its opposite.
            condition = earlier
            condition?.negated = earlier.negated != Self.negatesEarlier(written)
            // "if it's not snowing …; if it is, …": "it is" is the snowing, not its absence.
            if written.echoesVerb, lastWrittenNegated { condition?.negated.toggle() }
            writtenNegated = written.negatedByMarker
            // "if the slot is empty …, …, if something's there, …": something there is the calendar's
            // other state.
            let busy = ConditionReader.saysBusy(written.text.lowercased())
            if earlier.kind == .calendar, !written.answersQuestion, busy != earlier.negated {
              condition?.negated = busy
            }
          } else {
            condition = read(
              written, clock: clock, question: written.answersQuestion ? lastQuestion : nil, steps: steps,
              contextZone: contextZone)
            if let unplaced = condition, unplaced.kind == .memory, !written.answersQuestion,
              let kind = try await placedKind(
                of: written.text, steps: steps, earlier: lastCondition, clock: clock, scenario: scenario)
            {
              condition =
                ConditionReader(clock: clock).read(
                  written.text, negatedByMarker: written.negatedByMarker,
                  zone: kind == .time ? lastCondition?.zone : nil, kind: kind) ?? unplaced
            }
            writtenNegated = written.negatedByMarker != ConditionReader.isNegated(written.text.lowercased())
          }
          guard let read = condition else { return nil }
          conditionCount += 1
          // "…, if there is, make it 2pm": the opposite of the condition before is its other
          // branch, which may say only what differs.
          isBranch = lastCondition.map { $0.kind == read.kind && $0.negated != read.negated } ?? false
        }
        if condition == nil, sentenceCondition == nil, part.isOtherwise, let earlier = lastCondition {
          // A sentence that opens with "otherwise": the previous sentence's condition.
          condition = earlier
        }
        if Self.isNoop(part.text) {
          // "if it's past 7 there, skip it": the branch does nothing; its condition still
          // stands for an "if not" after it.
          if let condition, part.isGuarded, !part.isOtherwise {
            lastCondition = condition
            lastWrittenNegated = writtenNegated
          }
          continue
        }
        var guarded = part.isGuarded ? condition : nil
        // Under a condition about the weather, a time or the calendar, the action needs only
        // to name a skill: the condition's words already say this is a plan.
        // A later part that opens with a request verb ("..., then book a table") needs only to
        // name a skill too: the verb says where a request starts.
        let opensWithVerb =
          ((steps.count > 0 || part.beforeJoin) && Self.opensWithRequestVerb(part.text))
          || Self.opensWithLookup(part.text)
        // So does one that takes what was stored before ("divide the salary I gave you by 12"):
        // a recall comes first.
        let lenient =
          (guarded.map { $0.kind != .memory } ?? false) || opensWithVerb || Self.refersToStored(part.text)
        var found = try await surely(
          part.text, clock: clock, scenario: scenario, lenient: lenient,
          takeBest: part.standsAsRequest(afterARequest: !steps.isEmpty))
        if found == nil, lenient, parts.count == 2,
          var whole = try await surely(
            sentence.text, clock: clock, scenario: scenario, lenient: true)
        {
          // The action alone names no skill (把放风筝取消了吧): the sentence as a whole does.
          whole.arguments =
            router.registeredSkill(id: whole.skillID!, scenario: scenario)?
            .extractArguments(from: part.text, clock: clock) ?? whole.arguments
          found = whole
        }
        // 就把野餐取消 under a condition: a verb that cancels, its object before it (把) or after,
        // cancels what it names (an event unless a reminder is named), never looks the weather up.
        if guarded != nil, found.map({ !changesSomething($0.skillID, scenario: scenario) }) ?? true,
          Self.opensWithCancel(part.text)
            || (part.text.contains("把")
              && ConditionReader.containsAny(part.text.lowercased(), "plan.cancel_heads")),
          let read = reading(
            part.text,
            as: ConditionReader.containsAny(part.text.lowercased(), "guard.reminder_words")
              ? "reminder.cancel" : "calendar.cancel", clock: clock, scenario: scenario)
        {
          found = read
        }
        // "see Tuesday's list, drop the last one": a removal or a move of an item the
        // look-up just listed is that list's cancel or update (whose confirmation shows the item).
        if let previous = steps.last, Self.listLookups.contains(previous.skill),
          found.map({ !changesSomething($0.skillID, scenario: scenario) }) ?? true,
          Self.refersBack(part.text),
          let verb = Self.changeOfListed(part.text),
          let read = reading(
            part.text, as: previous.skill.replacingOccurrences(of: ".list", with: ".\(verb)"), clock: clock,
            scenario: scenario)
        {
          found = read
        }
        if found == nil, lastQuestion?.step == steps.count - 1,
          try await usesAnswer(part.text, clock: clock, scenario: scenario)
        {
          found = try await surely(part.text, clock: clock, scenario: scenario, lenient: true)
        }
        // "..., otherwise at noon", 不然就改到周五: the other branch names no skill of its
        // own; it does what the branch it replaces does, with its own time.
        if part.isOtherwise, guarded != nil, !Self.opensWithRequestVerb(part.text),
          Self.openingWrite(of: part.text) == nil,
          found.map({ isFragment(part.text, decision: $0, clock: clock, scenario: scenario) }) ?? true,
          let branch = steps.last(where: { $0.condition != nil }), found?.skillID != branch.skill,
          let read = reading(part.text, as: branch.skill, clock: clock, scenario: scenario)
        {
          found = read
        } else if isBranch, guarded != nil, Self.openingWrite(of: part.text) == nil,
          let branch = steps.last(where: { $0.condition != nil }), found?.skillID != branch.skill,
          changesSomething(branch.skill, scenario: scenario),
          found.map({ decision in
            // A look-up ("the same time") or a change of "it" says only what differs.
            isFragment(part.text, decision: decision, clock: clock, scenario: scenario)
              || !changesSomething(decision.skillID, scenario: scenario)
              || decision.skillID?.hasSuffix(".update") == true
          }) ?? true,
          var read = reading(part.text, as: branch.skill, clock: clock, scenario: scenario)
        {
          // What it does is the first branch's: its title, at the time this branch says.
          if let title = branch.arguments["title"] { read.arguments["title"] = title }
          found = read
        }
        // "book the lesson at 5, and if that time is taken make it 6 instead": the item made
        // before is made only when the condition does not hold, and this part makes it at its own
        // time when it does.
        if let written = guarded, !part.isOtherwise,
          ConditionReader.containsAny(part.text.lowercased(), "plan.instead"),
          let previous = steps.indices.last, steps[previous].condition == nil,
          steps[previous].skill.hasSuffix(".create"), found?.skillID != steps[previous].skill,
          found.map({ !($0.skillID?.hasSuffix(".create") ?? false) || Self.refersBack(part.text) }) ?? true,
          var read = reading(part.text, as: steps[previous].skill, clock: clock, scenario: scenario)
        {
          if let title = steps[previous].arguments["title"] { read.arguments["title"] = title }
          found = read
          // "that time" is the first item's.
          if written.when == nil, written.kind != .time {
            guarded?.when = steps[previous].arguments["when"]?.dateValue
          }
          var opposite = guarded!
          opposite.negated.toggle()
          steps[previous].condition = opposite
        }
        // "…; otherwise set it for 5", 已经过了的话改成明早八点: the other branch of an item made
        // under a condition changes only its time: the same item, made at that time.
        if guarded != nil, part.isOtherwise || isBranch,
          let branch = steps.last(where: { $0.condition != nil }), branch.skill.hasSuffix(".create"),
          let chosen = found?.skillID, chosen != branch.skill,
          chosen.hasSuffix(".update") || InverseGuard.opens(part.text, withOneOf: "plan.same_item_again"),
          var read = reading(part.text, as: branch.skill, clock: clock, scenario: scenario)
        {
          if let title = branch.arguments["title"] { read.arguments["title"] = title }
          found = read
        }
        if found == nil, lastQuestion?.step == steps.count - 1, let named = Self.namedWrite(in: part.text),
          let read = reading(part.text, as: named, clock: clock, scenario: scenario)
        {
          // "…? 抄到备忘录": a piece after a question that only names where its answer goes.
          found = read
        }
        if found == nil, answeredNext, part.isQuestion,
          let lookup = Self.lookupAsked(by: part.text),
          let read = reading(part.text, as: lookup, clock: clock, scenario: scenario)
        {
          // A yes-or-no question the next sentence answers looks up what it is about.
          found = read
        }
        // "total 40 + 12 + 7.5 for the taxi", "then halve it": arithmetic the model took for a
        // write it does not name, or did not read at all.
        if guarded == nil, found.map({ InverseGuard.writes.contains($0.skillID ?? "") }) ?? true,
          Self.namedWrite(in: part.text) == nil,
          Self.isArithmetic(
            part.text,
            afterResult: steps.last.map { ["memory.recall", "calculator"].contains($0.skill) } ?? false,
            clock: clock),
          let read = reading(part.text, as: "calculator", clock: clock, scenario: scenario)
        {
          found = read
        }
        // "…, and is it humid in Xi'an?": a question about the weather is its look-up, where
        // the model found nothing that changes something.
        if guarded == nil, part.isQuestion || Self.asksForInformation(part.text),
          found.map({ $0.skillID != "weather.current" && !changesSomething($0.skillID, scenario: scenario) })
            ?? true,
          Self.asksWeather(part.text), ConditionReader.kind(of: part.text) != .calendar,
          !Self.refersToStored(part.text),
          let read = reading(part.text, as: "weather.current", clock: clock, scenario: scenario)
        {
          found = read
        }
        // "…, then set up a fresh one at 5" after a cancel: what was cancelled, made anew.
        if let previous = steps.last, let create = Self.createdAnew[previous.skill],
          found?.skillID != create, ConditionReader.containsAny(part.text.lowercased(), "plan.new_one"),
          [nil, create].contains(Self.namedWrite(in: part.text)),
          let read = reading(part.text, as: create, clock: clock, scenario: scenario)
        {
          found = read
        }
        if found == nil, let repeated = part.repeats {
          found = reading(part.text, as: repeated, clock: clock, scenario: scenario)
        }
        // "if the locker code is on file, read it out", 存过的话发给我: under a fact in memory, being
        // told is the recall of that fact.
        if let guarded, guarded.kind == .memory, Self.isHeldByAssistant(guarded.text),
          Self.asksToBeTold(part.text),
          let read = reading(
            Self.heldThing(guarded.about), as: RecallSkill.skillID, clock: clock, scenario: scenario)
        {
          found = read
        }
        // "Tomás lives in Lima. …, if it's evening there …": a statement before the requests that
        // asks nothing is what they are about, not a request the plan must run.
        if found == nil, parts.count == 1, !sentence.isQuestion, sentenceIndex + 1 < sentences.count,
          !Self.opensWithRequestVerb(part.text), Self.openingWrite(of: part.text) == nil
        {
          contextZone =
            PlaceExtractor(clock: clock).find(in: part.text)?.place?.timeZoneIdentifier ?? contextZone
          continue
        }
        // "…, and who painted the Mona Lisa?": a question no skill answers is answered in its place
        // (by the language model when there is one), beside the steps that do.
        // (A question about what was just recalled, or about "it", asks that recall again.)
        if found == nil, guarded == nil, part.isQuestion || TextCues.isQuestion(part.text),
          Self.isSubstantial(part.text), steps.last?.skill != RecallSkill.skillID,
          !Self.refersBack(part.text), !Self.refersToStored(part.text)
        {
          steps.append(
            PlanStep(skill: IntentClassifier.noneLabel, arguments: ["question": .string(part.text)]))
          sources.append(RouteDecision(skillID: nil, method: .rules, score: 1))
          texts.append(part.text)
          continue
        }
        guard var decision = found else { return nil }
        // "do you have my … saved? if so, send it over": being told is the question just asked.
        if guarded?.kind == .memory, decision.skillID == RecallSkill.skillID,
          steps.last?.skill == RecallSkill.skillID,
          Self.asksToBeTold(part.text)
        {
          continue
        }
        // "That reminder can go now. Delete it.": the same removal said again of "it".
        if let previous = steps.last, previous.skill == decision.skillID, guarded == nil,
          router.registeredSkill(id: previous.skill, scenario: scenario)?.isDestructive == true,
          decision.arguments.values.values.compactMap(\.stringValue).allSatisfy({
            Self.refersBack($0) && !Self.isSubstantial($0)
          })
        {
          continue
        }
        // The same look-up asked twice across sentences ("what time is it? …what time?") is one
        // step; a request restated with what it lacked replaces the bare one.
        if let previous = steps.last, previous.skill == decision.skillID, previous.condition == nil,
          guarded == nil
        {
          let skill = router.registeredSkill(id: previous.skill, scenario: scenario)
          let required = skill?.inputSchema.parameters.filter(\.isRequired).map(\.name) ?? []
          if skill?.hasSideEffects == false { continue }
          if !required.isEmpty, required.allSatisfy({ previous.arguments[$0] == nil }) {
            steps.removeLast()
            sources.removeLast()
          }
        }
        // "make a note of the gate code I gave you": what was stored is recalled first, and the
        // write takes it from that step.
        // The write is the one the router chose, or the one the part names when the stored
        // thing made it a recall (把我存的…写进备忘).
        if let guarded, guarded.kind != .memory, decision.skillID == "memory.remember" {
          // A fact does not hang on the weather, a time or the calendar: what is asked under
          // one is a booking (when the calendar is free) or a reminder.
          let instead = guarded.kind == .calendar ? "calendar.create" : "reminder.create"
          if let read = reading(
            part.text, as: instead, from: decision, keepingScore: true, clock: clock, scenario: scenario)
          {
            decision = read
          }
        }
        // Under a fact in memory, writing something down (记下来, "jot it down") stores that fact,
        // unless the part names a note.
        if let guarded, guarded.kind == .memory, decision.skillID == "note.create",
          !ConditionReader.containsAny(part.text.lowercased(), "plan.note_nouns"),
          let read = reading(
            part.text, as: "memory.remember", from: decision, keepingScore: true, clock: clock,
            scenario: scenario)
        {
          decision = read
        }
        var step = PlanStep(skill: decision.skillID!, arguments: decision.arguments)
        // "the time in Lima and in Oslo", 伦敦和纽约分别几点: one look-up for each place.
        if guarded == nil, ["time.now", "weather.current"].contains(step.skill),
          let places = placePieces(part.text, clock: clock),
          let skill = router.registeredSkill(id: step.skill, scenario: scenario)
        {
          // Each place's look-up is the one its own words name ("the weather in Bergen and the
          // time in Quito"), else the part's.
          let skills = places.map { piece -> any Skill in
            let named: String? =
              ConditionReader.containsAny(piece.lowercased(), "plan.weather_nouns")
              ? "weather.current"
              : ConditionReader.containsAny(piece.lowercased(), "plan.time_asked") ? "time.now" : nil
            return named.flatMap { router.registeredSkill(id: $0, scenario: scenario) } ?? skill
          }
          var each = zip(places, skills).map { $1.extractArguments(from: $0, clock: clock) }
          // A day said once is the day of every place ("in Oslo and Lima tomorrow").
          if let day = each.lazy.compactMap({ $0["day"] }).first {
            for index in each.indices where each[index]["day"] == nil && skills[index].id == "weather.current"
            {
              each[index]["day"] = day
            }
          }
          for index in places.indices.dropLast() {
            steps.append(PlanStep(skill: skills[index].id, arguments: each[index]))
            sources.append(decision)
            texts.append(places[index])
          }
          step = PlanStep(skill: skills[places.count - 1].id, arguments: each[each.count - 1])
        }
        // (Never for a part that destroys: what it forgets or cancels is no write's input.)
        if Self.refersToStored(part.text)
          || Self.anchorsOnPersonalDate(part.text, decision: decision, clock: clock),
          !steps.contains(where: { $0.skill == RecallSkill.skillID }),
          !(router.registeredSkill(id: decision.skillID!, scenario: scenario)?.isDestructive ?? false),
          // A sum over what was stored ("what's 15% of the rent I gave you") is a recall and the sum.
          let computes = Optional(Self.computesWith(part.text)),
          // A question for what was stored is the recall itself ("remind me, which … did I give you?").
          computes
            || !(decision.skillID == RecallSkill.skillID
              && (part.isQuestion || Self.asksForInformation(part.text))
              && [nil, "reminder.create"].contains(Self.namedWrite(in: part.text))),
          let write = [decision.skillID!, Self.namedWrite(in: part.text), computes ? "calculator" : nil]
            .compactMap({ $0 }).first(where: { Self.carriesRecalled.contains($0) }),
          let writer = router.registeredSkill(id: write, scenario: scenario),
          let recall = router.registeredSkill(id: RecallSkill.skillID, scenario: scenario)
        {
          // A sum looks up only what it takes ("the rent I gave you"), not the arithmetic around it.
          let sought =
            write == "calculator" ? CalculatorSkill.storedPhrase(in: part.text) ?? part.text : part.text
          steps.append(
            PlanStep(skill: recall.id, arguments: recall.extractArguments(from: sought, clock: clock)))
          sources.append(decision)
          texts.append(part.text)
          if write != step.skill {
            step = PlanStep(skill: write, arguments: writer.extractArguments(from: part.text, clock: clock))
          }
          // A sum over the recalled value keeps the words that name it: the run puts the number there.
          if write == "calculator" { step.arguments["expression"] = .string(part.text) }
        }
        // A fact in memory guards only a step that changes something ("if I leave a 20% tip
        // on 65, how much is it" asks a sum, with no condition).
        // (Its own recall excepted: "if you have it saved, tell me" asks for the fact.)
        if guarded?.kind == .memory, step.skill != RecallSkill.skillID,
          !(router.registeredSkill(id: step.skill, scenario: scenario)?.hasSideEffects ?? false)
        {
          return nil
        }
        if var guarded {
          if part.isOtherwise { guarded.negated.toggle() }
          // "unless it's raining then": the weather or calendar at the step's own time when
          // the condition names none and the step is on another day.
          if guarded.when == nil, guarded.kind == .weather || guarded.kind == .calendar,
            let due = step.arguments["when"]?.dateValue, !Self.isSameDay(due, clock.now, clock: clock)
          {
            guarded.when = due
          }
          step.condition = guarded
        }
        // "if my plate number is on file, put it in a note": the fact is recalled first, under
        // the same condition, and the write takes what the recall finds.
        if let guarded = step.condition, guarded.kind == .memory, !guarded.negated,
          Self.isHeldByAssistant(guarded.text), Self.carriesRecalled.contains(step.skill),
          steps.last?.skill != RecallSkill.skillID,
          ConditionReader.containsAny(part.text.lowercased(), "plan.uses_stored"),
          let recall = router.registeredSkill(id: RecallSkill.skillID, scenario: scenario)
        {
          var recalled = PlanStep(
            skill: recall.id,
            arguments: recall.extractArguments(from: Self.heldThing(guarded.about), clock: clock))
          recalled.condition = guarded
          steps.append(recalled)
          sources.append(decision)
          texts.append(guarded.text)
        }
        if let guarded = step.condition {
          step.arguments = dayFromCondition(part.text, step: step, condition: guarded, clock: clock)
          if !part.isOtherwise {
            lastCondition = guarded
            lastWrittenNegated = writtenNegated
          }
        }
        // "..., otherwise remind me at 4pm": the other branch keeps the first one's title.
        if part.isOtherwise, step.arguments["title"] == nil,
          let branch = steps.last(where: { $0.skill == step.skill && $0.arguments["title"] != nil })
        {
          step.arguments["title"] = branch.arguments["title"]
        }
        step.inputFrom = inputSource(for: part.text, skill: step.skill, steps: steps)
        // The other branch of a condition runs when the step it would take from does not.
        if let source = step.inputFrom, let mine = step.condition, let theirs = steps[source].condition,
          mine.kind == theirs.kind, mine.about == theirs.about, mine.negated != theirs.negated
        {
          step.inputFrom = nil
        }
        step.arguments = carryDate(part.text, step: step, steps: steps, clock: clock)
        if part.isQuestion { lastQuestion = (part.text, steps.count) }
        steps.append(step)
        sources.append(decision)
        texts.append(part.text)
      }
    }
    steps = Self.retargeted(steps, texts: texts)
    // "remind me: which gate was it?", 提醒我下，…: a write's verb alone before another request
    // only leads into it.
    if steps.count >= 2, steps[0].condition == nil, isLeadIn(steps[0], scenario: scenario),
      !steps.contains(where: { $0.inputFrom == 0 })
    {
      steps.removeFirst()
      texts.removeFirst()
      sources.removeFirst()
      for index in steps.indices { steps[index].inputFrom = steps[index].inputFrom.map { $0 - 1 } }
      if steps.count == 1, steps[0].condition == nil, let first = sources.first {
        return TurnRoute(
          plan: .skills(steps), source: RouteSource(first.method), confidence: first.score, decision: first)
      }
    }
    if let undone = undoneWrite(steps, texts: texts, whole: text, clock: clock, scenario: scenario) {
      return TurnRoute(
        plan: .skills([undone]), source: .rules, confidence: sources.map(\.score).min() ?? 1,
        decision: sources.last)
    }
    guard steps.count >= 2 || (steps.count == 1 && conditionCount > 0), let first = sources.first,
      steps.contains(where: { $0.skill != IntentClassifier.noneLabel })
    else {
      return nil
    }
    return TurnRoute(
      plan: .skills(steps), source: RouteSource(first.method),
      confidence: sources.map(\.score).min() ?? first.score, decision: first)
  }

  /// The inverses that can take back what a step names: a fact stored or asked about is
  /// forgotten, a reminder or an event made is cancelled.
  static let takenBack: [String: Set<String>] = [
    "memory.remember": ["memory.forget", "memory.recall"], "memory.recall": ["memory.forget"],
    "reminder.create": ["reminder.cancel"], "calendar.create": ["calendar.cancel"],
  ]

  /// Whether `step` is a write with nothing of what it needs: every required argument
  /// missing or a single character (the verb alone: "remind me", 提醒我下 leaves 下).
  private func isLeadIn(_ step: PlanStep, scenario: SkillScenario) -> Bool {
    guard InverseGuard.writes.contains(step.skill),
      let skill = router.registeredSkill(id: step.skill, scenario: scenario)
    else { return false }
    let required = skill.inputSchema.parameters.filter(\.isRequired).map(\.name)
    return !required.isEmpty
      && required.allSatisfy { name in
        guard let value = step.arguments[name] else { return true }
        guard let text = value.stringValue else { return false }
        return text.trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters)).count <= 1
      }
  }

  /// One step for two that describe an item and then take it back: a write (or a recall) and
  /// then its inverse of "it", "that one", 这条 ("the plumber on tuesday? drop that one", 下周那个
  /// 体检提醒，删了; a bare "delete it", 去掉吧), or a request the user corrects at once ("remind
  /// me to … no wait, cancel …"). Nobody asks in one breath for a thing and its undoing: the
  /// first part only says which item the inverse acts on, so the inverse runs alone, its
  /// arguments read from the whole request. Nil otherwise (never under a condition).
  private func undoneWrite(
    _ steps: [PlanStep], texts: [String], whole: String, clock: AgentClock, scenario: SkillScenario
  ) -> PlanStep? {
    guard steps.count == 2, texts.count == 2, steps.allSatisfy({ $0.condition == nil }),
      Self.takenBack[steps[0].skill]?.contains(steps[1].skill) == true
    else { return nil }
    let second = texts[1].lowercased()
    let corrects = Self.words("plan.corrections").contains { Self.startsWith(second, $0) }
    guard corrects || Self.refersBack(second) || Self.isBareDestroy(texts[1]),
      let skill = router.registeredSkill(id: steps[1].skill, scenario: scenario)
    else { return nil }
    // A correction drops what it corrects; otherwise the first part names the item.
    let source = corrects ? texts[1] : whole
    return PlanStep(skill: skill.id, arguments: skill.extractArguments(from: source, clock: clock))
  }

  /// The parts with each piece that is not a request of its own joined to the request
  /// before it (or after it, for the first): a piece that names no skill ("九点半", "and
  /// Dad"), a date alone ("On 7/9 at 3pm, remind me ..."), a request with none of its
  /// skill's required arguments ("can you take a note? gift ideas: ..."; 提醒我一下，…), and
  /// a later English piece that opens with no request word ("..., I like it now").
  private func merged(_ parts: [Part], clock: AgentClock, scenario: SkillScenario) async throws -> [Part] {
    var result: [Part] = []
    var pending: Part?
    for (index, part) in parts.enumerated() {
      guard part.condition == nil else {
        result.append(part)
        continue
      }
      var current = part
      if current.isOtherwise, pending == nil, !result.isEmpty {
        // "otherwise do it Sunday": the other branch is a step of its own, however short.
        result.append(current)
        continue
      }
      if let waiting = pending {
        current.text = waiting.text + "，" + current.text
        current.isOtherwise = waiting.isOtherwise
        // The piece now opens where the waiting one did: after a join, if it stood after one.
        current.afterJoin = current.afterJoin || waiting.afterJoin
        pending = nil
      }
      let isLast = index == parts.count - 1
      // After a question, a step may do something with its answer ("…叫啥来着？帮我写进备忘"):
      // it needs only to name a skill.
      let afterQuestion = result.last.map { $0.condition == nil && $0.isQuestion } ?? false
      let previousIsRequest =
        result.last.map { $0.condition == nil && $0.isGuarded == current.isGuarded } ?? false
      // A piece that opens with a request verb, after a request or before another piece that
      // opens with one ("drop it, then ping me ..."), is a request of its own.
      let nextIsRequest = parts.dropFirst(index + 1).first.map { Self.opensWithRequestVerb($0.text) } ?? false
      // A piece that names a kind of write ("plus a calendar entry for …") is a request of its
      // own, unless it was cut inside a quotation ("add 'tea with Jo and Al' to my calendar").
      let namesOwnWrite =
        Self.namedWrite(in: current.text) != nil
        && !Self.openQuotes(in: current.text)
      if previousIsRequest, Self.continuesArithmetic(current.text, after: result[result.count - 1].text) {
        // "add up 1250, 830 and 415 and then divide by 3": one sum, said in steps.
        result[result.count - 1].text += " " + current.text
      } else if previousIsRequest,
        let repeated = try await repeatedWrite(
          current.text, after: result[result.count - 1], clock: clock, scenario: scenario)
      {
        // "…at 3 to stretch, at 4 to phone Al": the same write again, its own time.
        current.repeats = repeated
        result.append(current)
      } else if previousIsRequest, Self.pointsToStored(current.text) {
        // "…, it's on file with you", 日子你那儿有: what the request needs is stored.
        result[result.count - 1].text += "，" + current.text
      } else if previousIsRequest, !Self.opensRequest(current.text), !namesOwnWrite, !current.afterJoin {
        result[result.count - 1].text += "，" + current.text
      } else if previousIsRequest,
        try await saysWhereToPut(
          current.text, after: result[result.count - 1].text, clock: clock, scenario: scenario)
      {
        // "…四点和房东见面，加到日程里": a piece that only says where the request before it goes.
        result[result.count - 1].text += "，" + current.text
      } else if previousIsRequest, Self.opensWithLookup(result[result.count - 1].text),
        Self.refersBack(current.text), Self.changeOfListed(current.text) != nil
      {
        // "look up …, cancel the last one": a change to what the look-up lists is a step of its own.
        result.append(current)
      } else if current.isGuarded, Self.isNoop(current.text) {
        // "…, never mind, otherwise …": the branch that does nothing stands alone.
        result.append(current)
      } else if !isLast, Self.onlySaysNewOne(current.text) {
        // "…, and a fresh one: …": what it is comes in the next piece.
        pending = current
      } else if let decision = try await surely(
        current.text, clock: clock, scenario: scenario,
        lenient: ((!result.isEmpty || nextIsRequest) && Self.opensWithRequestVerb(current.text))
          || Self.opensWithLookup(current.text)
          || (!result.isEmpty && DateExpressionParser.leadTime(in: current.text) != nil
            && ConditionReader.containsAny(current.text.lowercased(), "guard.reminder_words")),
        takeBest: current.standsAsRequest(afterARequest: !result.isEmpty)
      ),
        isLast || !isFragment(current.text, decision: decision, clock: clock, scenario: scenario)
      {
        result.append(current)
      } else if afterQuestion, try await usesAnswer(current.text, clock: clock, scenario: scenario) {
        result.append(current)
      } else if !isLast {
        pending = current
      } else if previousIsRequest {
        result[result.count - 1].text += "，" + current.text
      } else {
        result.append(current)
      }
    }
    if let pending { result.append(pending) }
    return try await joined(result, clock: clock, scenario: scenario)
  }

  /// `text` cut where it joins two places ("in Lima and in Oslo", 伦敦和纽约), when every piece
  /// names a different known place; nil otherwise.
  private func placePieces(_ text: String, clock: AgentClock) -> [String]? {
    let extractor = PlaceExtractor(clock: clock)
    for join in [" and ", " & ", "和", "跟", "与", "、", " or ", "，", ","] {
      let pieces = text.components(separatedBy: join)
      guard pieces.count >= 2 else { continue }
      let places = pieces.map { extractor.find(in: $0)?.place?.timeZoneIdentifier }
      guard places.allSatisfy({ $0 != nil }), Set(places).count == places.count else { continue }
      return pieces
    }
    return nil
  }

  /// The write (a reminder or an event made) that `previous` asks for, when `text` says it
  /// again with a time and a purpose of its own and names no skill ("…, at 4 to email Li",
  /// "…，五点去洗车"); nil otherwise.
  private func repeatedWrite(
    _ text: String, after previous: Part, clock: AgentClock, scenario: SkillScenario
  ) async throws -> String? {
    let body = Self.stripLeading(text, Self.words("plan.sequence_joins"))
    guard let match = DateExpressionParser(clock: clock).parse(body), match.hasTime,
      ["", "at", "on", "by", "在"].contains(
        body[..<match.range.lowerBound].trimmingCharacters(in: .whitespaces).lowercased())
    else { return nil }
    var rest = body
    rest.removeSubrange(match.range)
    let purpose = Self.stripLeading(rest.trimmingCharacters(in: Self.edge), ["to", "去", "要"])
    guard Self.isSubstantial(purpose), Self.namedWrite(in: text) == nil, !Self.opensWithRequestVerb(body),
      !Self.opensWithRequestVerb(purpose),
      let earlier = try await repeatedSkill(of: previous, clock: clock, scenario: scenario),
      ["reminder.create", "calendar.create"].contains(earlier)
    else { return nil }
    let own = try await surely(text, clock: clock, scenario: scenario)?.skillID
    return own == nil || own == earlier ? earlier : nil
  }

  /// The look-up a yes-or-no question about the calendar, the weather or the time asks for.
  static func lookupAsked(by question: String) -> String? {
    switch ConditionReader.kind(of: question) {
    case .calendar: "calendar.list"
    case .weather: "weather.current"
    case .time: "time.now"
    case .memory: nil
    }
  }

  /// The skill `part` asks for: the write it repeats, else the router's reading.
  private func repeatedSkill(of part: Part, clock: AgentClock, scenario: SkillScenario) async throws
    -> String?
  {
    if let repeats = part.repeats { return repeats }
    return try await surely(part.text, clock: clock, scenario: scenario, lenient: true)?.skillID
  }

  /// Whether `text` only names the write that `previous` already is (a date and a title, then
  /// "put it in my calendar", 加到日程里), with nothing of its own.
  private func saysWhereToPut(
    _ text: String, after previous: String, clock: AgentClock, scenario: SkillScenario
  )
    async throws -> Bool
  {
    guard let named = Self.namedWrite(in: text),
      try await surely(previous, clock: clock, scenario: scenario, lenient: true)?.skillID == named
    else { return false }
    guard let own = try await surely(text, clock: clock, scenario: scenario, lenient: true) else {
      return true
    }
    return isFragment(text, decision: own, clock: clock, scenario: scenario)
  }

  /// Whether a piece after a question does something with its answer: it refers back to it
  /// ("put it on my calendar") or names a skill that changes something without its content
  /// (帮我写进备忘).
  private func usesAnswer(_ text: String, clock: AgentClock, scenario: SkillScenario) async throws -> Bool {
    guard let decision = try await surely(text, clock: clock, scenario: scenario, lenient: true),
      let id = decision.skillID, router.registeredSkill(id: id, scenario: scenario)?.hasSideEffects == true
    else { return false }
    return Self.refersBack(text) || isFragment(text, decision: decision, clock: clock, scenario: scenario)
  }

  /// Whether a piece is only part of a request: a date with little else, or a skill call
  /// with none of the skill's required arguments.
  private func isFragment(_ text: String, decision: RouteDecision, clock: AgentClock, scenario: SkillScenario)
    -> Bool
  {
    if let match = DateExpressionParser(clock: clock).parse(text) {
      var rest = text
      rest.removeSubrange(match.range)
      if !Self.isSubstantial(InverseGuard.opening(of: rest)) { return true }
    }
    guard let id = decision.skillID, let skill = router.registeredSkill(id: id, scenario: scenario) else {
      return false
    }
    let required = skill.inputSchema.parameters.filter(\.isRequired).map(\.name)
    return !required.isEmpty && required.allSatisfy { decision.arguments[$0] == nil }
  }

  /// Whether a piece opens with a verb that looks something up ("find", "look up", 找一下).
  static func opensWithLookup(_ text: String) -> Bool {
    if InverseGuard.opens(text, withOneOf: "plan.lookup_heads") { return true }
    // 把那个预算会找出来: the object first, the verb of finding after it, before any comma.
    let head = text.prefix { $0 != "," && $0 != "，" }.trimmingCharacters(in: edge)
    return ["把", "帮我把", "先把"].contains(where: head.hasPrefix)
      && words("plan.lookup_tails").contains(where: head.hasSuffix)
  }

  /// The one kind of write a part names ("set a reminder", "make a note", "on my calendar",
  /// "keep in mind"); nil when it names none or several ("remind me to add it to my calendar").
  static func namedWrite(in text: String) -> String? {
    let lower = text.lowercased()
    let named = ["reminder.create", "note.create", "calendar.create", "memory.remember"].filter {
      ConditionReader.containsAny(lower, "plan.kind." + $0)
    }
    return named.count == 1 ? named[0] : nil
  }

  /// The change a part asks of an item when the router's pick says other: a part that opens
  /// with a verb that moves or renames ("push ... back", 改到) updates (a reminder when it
  /// names one, else a calendar event: "shift the 4 o'clock viewing"), one that opens with a verb
  /// that makes something creates, and one that cancels what it names cancels an event (not a
  /// memory, not a reminder it does not name). Nil when `chosen` stands.
  static func changeOfItem(_ text: String, chosen: String) -> String? {
    let writesItem = ["calendar.create", "reminder.create", "calendar.update", "reminder.update"]
    // 把 X 改到…: the verb follows its object.
    let moves =
      InverseGuard.opens(text, withOneOf: "plan.update_heads")
      || (text.contains("把") && ConditionReader.containsAny(text.lowercased(), "plan.update_heads"))
    if !moves, chosen.hasSuffix(".update"), let opening = openingWrite(of: text), opening != "memory.remember"
    {
      // "ping me at noon to ... instead": a verb that makes something, not one that moves it.
      return opening
    }
    if chosen.hasSuffix(".update"), !moves, InverseGuard.opens(text, withOneOf: "guard.destroy_heads") {
      // "wipe out the swim reminder": a verb that destroys cancels what it names, not moves it.
      return chosen.replacingOccurrences(of: ".update", with: ".cancel")
    }
    if chosen == "memory.forget", InverseGuard.opens(text, withOneOf: "plan.cancel_heads") {
      // "cancel the board games night": what is cancelled has a time; a memory is forgotten.
      return ConditionReader.containsAny(text.lowercased(), "guard.reminder_words")
        ? "reminder.cancel" : "calendar.cancel"
    }
    if chosen == "reminder.cancel", InverseGuard.opens(text, withOneOf: "plan.cancel_heads"),
      !ConditionReader.containsAny(text.lowercased(), "guard.reminder_words"),
      ConditionReader.containsAny(text.lowercased(), "guard.event_words")
    {
      return "calendar.cancel"
    }
    // 把 X 挪过去 read as a note: a verb that moves an item changes it.
    guard writesItem.contains(chosen) || chosen == "note.create", moves else { return nil }
    let remindersNamed = ConditionReader.containsAny(text.lowercased(), "guard.reminder_words")
    return remindersNamed ? "reminder.update" : "calendar.update"
  }

  /// Whether `text` opens with a verb that cancels ("cancel", "call off", 取消), or is one
  /// (…，cancel 掉).
  static func opensWithCancel(_ text: String) -> Bool {
    InverseGuard.opens(text, withOneOf: "plan.cancel_heads")
  }

  /// Whether `text` is a verb that cancels or deletes and nothing else but a word that points
  /// back ("cancel it", 取消掉, 删掉吧).
  static func isBareDestroy(_ text: String) -> Bool {
    var rest = InverseGuard.opening(of: text)
    let heads = (words("plan.cancel_heads") + words("guard.destroy_heads")).filter { rest.hasPrefix($0) }
    guard let head = heads.max(by: { $0.count < $1.count }) else { return false }
    rest.removeFirst(head.count)
    let left = rest.split { !$0.isLetter }.filter { piece in
      !words("plan.references").contains(String(piece))
        && !["掉", "了", "吧", "掉吧", "了吧"].contains(String(piece))
    }
    return left.isEmpty
  }

  /// The one write whose own verbs (`guard.write_heads.*`) open `text`, or nil.
  static func openingWrite(of text: String) -> String? {
    let opening = InverseGuard.writes.filter {
      InverseGuard.opens(text, withOneOf: "guard.write_heads." + $0)
    }
    return opening.count == 1 ? opening.first : nil
  }

  /// The look-up a part that opens with a look-up verb asks for: the reminders or the
  /// calendar when it names one of them, else nil (a recall of what is remembered).
  static func lookup(for text: String) -> String? {
    let lower = text.lowercased()
    if ConditionReader.containsAny(lower, "guard.reminder_words") { return "reminder.list" }
    if ConditionReader.containsAny(lower, "guard.event_words") { return "calendar.list" }
    if ConditionReader.containsAny(lower, "plan.weather_nouns") { return "weather.current" }
    return nil
  }

  /// Whether a piece opens by asking back what the user said before ("I told you ...",
  /// 我以前跟你讲过, "do you remember", 你应该记得).
  static func asksWhatWasSaid(_ text: String) -> Bool {
    InverseGuard.opens(text, withOneOf: "plan.said_before")
  }

  /// Whether a piece opens with a verb that asks the assistant to do something ("book ...",
  /// "remind me ...", 提醒我, 帮我加), after the politeness before it.
  static func opensWithRequestVerb(_ text: String) -> Bool {
    let opening = InverseGuard.opening(of: text)
    guard let first = opening.first else { return false }
    if InverseGuard.idiomWrite(in: text) != nil { return true }
    if first.isASCII {
      let word = opening.prefix { $0.isLetter || $0 == "'" }.lowercased()
      return words("plan.action_verbs").contains(word)
    }
    return words("plan.request_heads").contains { opening.hasPrefix($0) }
  }

  /// Whether an English piece opens with a word that starts a request or a question (a
  /// piece in another script is taken as one).
  static func opensRequest(_ text: String) -> Bool {
    let opening = InverseGuard.opening(of: text)
    // "…, 10:30": a time with nothing else goes on with the request before it.
    if opening.first?.isNumber == true, let match = DateExpressionParser(clock: .system()).parse(text) {
      var rest = text
      rest.removeSubrange(match.range)
      if !isSubstantial(rest) { return false }
    }
    guard let first = opening.first, first.isASCII, first.isLetter else { return true }
    // "…, and drop me a reminder at 5": an idiom that makes what it names opens a request.
    if InverseGuard.idiomWrite(in: text) != nil { return true }
    // "…, and drop off the books": a verb with a particle of another meaning goes on with the task.
    if InverseGuard.opens(text, withOneOf: "plan.task_verbs") { return false }
    let word = opening.prefix { $0.isLetter || $0 == "'" || $0 == "’" }.lowercased()
    return words("plan.openers").contains(word) || words("plan.action_verbs").contains(word)
  }

  /// Adjacent requests that are one step said in pieces, joined: the same skill twice ("I
  /// need the prescription at 5, can you remind me"; 安排个会，明天下午四点), unless both are
  /// complete and at different times; and a statement followed by a part that refers back to
  /// it ("my sister's wedding is on August 16, can you put it in the calendar").
  private func joined(_ parts: [Part], clock: AgentClock, scenario: SkillScenario) async throws -> [Part] {
    var result: [Part] = []
    var lastSkill: String?
    var lastArguments = SkillArguments()
    for part in parts {
      guard part.condition == nil, let previous = result.indices.last, result[previous].condition == nil,
        result[previous].isGuarded == part.isGuarded,
        let decision = try await surely(part.text, clock: clock, scenario: scenario, lenient: true),
        let skill = decision.skillID, let earlier = lastSkill
      else {
        if part.condition == nil,
          let decision = try await surely(part.text, clock: clock, scenario: scenario, lenient: true)
        {
          lastSkill = decision.skillID
          lastArguments = decision.arguments
        } else if part.condition == nil {
          lastSkill = nil
        }
        result.append(part)
        continue
      }
      let distinctTimes =
        lastArguments["when"]?.dateValue != nil && decision.arguments["when"]?.dateValue != nil
        && lastArguments["when"]?.dateValue != decision.arguments["when"]?.dateValue
        && lastArguments["title"] != nil && decision.arguments["title"] != nil
      // "X, cancel it": the part names what an earlier statement (not a question, not a look-up,
      // not a request of its own: "book X and remind me before it") said.
      // A sum is an answer too: "…, then remember that number" keeps it as a step of its own.
      let lookups: Set<String> = ["memory.recall", "calendar.list", "reminder.list", "calculator"]
      let refersBack =
        Self.refersBack(part.text) && !result[previous].isQuestion && !lookups.contains(earlier)
        && !(Self.opensWithRequestVerb(result[previous].text) && Self.opensWithRequestVerb(part.text))
        && !Self.opensWithLookup(result[previous].text)
        // "book X, then show me that day": a look-up after a request of its own is its own step.
        && !(lookups.contains(skill) && InverseGuard.writes.contains(earlier) && earlier != "memory.remember"
          && !Self.refersToStored(part.text))
      // An "otherwise" branch is a step of its own even for the same skill.
      // "the X reminder, not needed any more, cancel", 那个…，删掉吧: a bare verb that cancels or
      // deletes acts on what the statement before it names (not on what a look-up or a
      // question before it finds: that is a step of its own).
      // "forget my old number, it's not used any more", 已经不用了: a reason after a destructive
      // request, read as destructive itself, is part of it.
      let earlierDestroys = router.registeredSkill(id: earlier, scenario: scenario)?.isDestructive ?? false
      let destroysToo = router.registeredSkill(id: skill, scenario: scenario)?.isDestructive ?? false
      let reason =
        earlierDestroys && destroysToo && !Self.opensWithRequestVerb(part.text)
        && !InverseGuard.opens(part.text, withOneOf: "guard.destroy_heads") && part.text.count <= 12
      let finishes =
        reason
        || Self.isBareDestroy(part.text) && !result[previous].isQuestion
          && !Self.opensWithLookup(result[previous].text)
          && !Self.isBareDestroy(result[previous].text)
      // A part after "and also", 然后 is a request of its own even when it says "that".
      if !part.isOtherwise,
        (skill == earlier && !distinctTimes) || ((refersBack || finishes) && !part.afterJoin)
      {
        result[previous].text += "，" + part.text
        if let merged = try await surely(
          result[previous].text, clock: clock, scenario: scenario, lenient: true)
        {
          lastSkill = merged.skillID
          lastArguments = merged.arguments
        }
        continue
      }
      lastSkill = skill
      lastArguments = decision.arguments
      result.append(part)
    }
    return result
  }

  /// Whether `text` refers to something the user stored before ("the gate code I saved",
  /// "what I told you about", 我存过的): a recall, wherever it stands in the part.
  static func refersToStored(_ text: String) -> Bool {
    let lower = text.lowercased()
    if ConditionReader.containsAny(lower, "plan.stored_before") { return true }
    // "the date I said", "the figure I mentioned": a value named by the user's own words.
    if words("plan.said_nouns").contains(where: { noun in
      ["i said", "i mentioned", "i gave"].contains { lower.contains(" \(noun) \($0)") }
    }) {
      return true
    }
    // "you've got the day saved", "should be on file with you", 你那儿存着: the assistant holds it.
    let tokens = Set(lower.split(whereSeparator: { !$0.isLetter && $0 != "'" }).map(String.init))
    let addressed = !tokens.isDisjoint(with: ["you", "you've", "your", "u"]) || lower.contains("你")
    return addressed && ConditionReader.containsAny(lower, "plan.stored_places")
  }

  /// Whether `text` only asks for "a new one" (再建一个), saying nothing of what or when.
  static func onlySaysNewOne(_ text: String) -> Bool {
    let lower = text.lowercased()
    guard ConditionReader.containsAny(lower, "plan.new_one") else { return false }
    let rest = ConditionReader.removing(
      ["plan.new_one", "plan.sequence_joins", "plan.request_joins"], from: lower
    )
    .trimmingCharacters(in: edge)
    return !isSubstantial(rest) && DateExpressionParser(clock: .system()).parse(rest) == nil
  }

  /// `text` with each space between two Chinese characters read as the pause it is, a comma
  /// (Chinese typed or dictated without punctuation: 没空的话 改到周五). Not in text with Latin
  /// words, where spaces set off the words of the other language (水电费 的账单).
  static func pausesAsCommas(_ text: String) -> String {
    guard !text.unicodeScalars.contains(where: { $0.isASCII && CharacterSet.letters.contains($0) }) else {
      return text
    }
    func isHan(_ character: Character?) -> Bool { character?.unicodeScalars.first?.isCJKIdeograph ?? false }
    var result = ""
    var pending = ""
    for character in text {
      if character == " " {
        pending.append(character)
        continue
      }
      if !pending.isEmpty {
        result += isHan(result.last) && isHan(character) ? "，" : pending
        pending = ""
      }
      result.append(character)
    }
    return result + pending
  }

  /// Whether `text` asks for arithmetic and names no day or time: an expression or a sum said
  /// as a task ("add up 12, 30 and 4"); after a recall or a sum (`afterResult`), an operation
  /// with one number of its own ("then split it 3 ways", 再乘以12).
  static func isArithmetic(_ text: String, afterResult: Bool, clock: AgentClock) -> Bool {
    let numbers = ArithmeticExpression.numbers(in: text)
    guard !numbers.isEmpty, DateExpressionParser(clock: clock).parse(text) == nil else { return false }
    // An expression, a conversion ("5 feet in cm"), or a sum said as a task.
    if CalculatorSkill.isArithmetic(text)
      || (numbers.count >= 2 && CalculatorSkill.phrasedExpression(text) != nil)
    {
      return true
    }
    guard afterResult else { return false }
    let lower = text.lowercased()
    return ConditionReader.containsAny(lower, "plan.arithmetic_steps")
      || ConditionReader.containsAny(lower, "calculator.divide_cues")
      || ConditionReader.containsAny(lower, "calculator.multiply_cues")
  }

  /// Whether `text` is about the weather: it names it or a kind of it (rain, heat, 气温).
  static func asksWeather(_ text: String) -> Bool {
    let lower = text.lowercased()
    return ConditionReader.containsAny(lower, "plan.weather_nouns")
      || ConditionReader.weatherAbout(lower) != nil
  }

  /// The look-ups that list items a later piece may change ("…, drop the last one").
  static let listLookups: Set<String> = ["calendar.list", "reminder.list"]

  /// What a piece does to an item it refers to: "cancel" for a word that destroys, "update"
  /// for one that moves it, else nil.
  static func changeOfListed(_ text: String) -> String? {
    let lower = text.lowercased()
    if ConditionReader.containsAny(lower, "guard.destroy_anywhere") { return "cancel" }
    return ConditionReader.containsAny(lower, "plan.update_heads") ? "update" : nil
  }

  /// The write that makes anew what a step removed: "a new one" after it is that write.
  static let createdAnew: [String: String] = [
    "reminder.cancel": "reminder.create", "calendar.cancel": "calendar.create",
    "memory.forget": "memory.remember",
  ]

  /// The steps that may take what a recall finds: a note, an event, a reminder made with it,
  /// a sum over it, the time where it is, an event or reminder moved to a stored date.
  static let carriesRecalled: Set<String> = [
    "note.create", "calendar.create", "reminder.create", "calculator", "time.now", "calendar.update",
    "reminder.update",
  ]

  /// Whether a reminder or event is set by a date of the user's life that the request does not
  /// give ("a week ahead of my passport's expiry", 纪念日那天): it needs a recall first.
  /// A time of day alone does not give the date when the request puts it on "the day" of one
  /// ("at 7 the day my permit runs out"); a birthday that is only the subject ("at 11 to send
  /// her birthday card") is no date.
  static func anchorsOnPersonalDate(_ text: String, decision: RouteDecision, clock: AgentClock) -> Bool {
    let lower = text.lowercased()
    guard ["reminder.create", "calendar.create"].contains(decision.skillID ?? ""),
      ConditionReader.containsAny(lower, "plan.personal_dates")
    else { return false }
    return decision.arguments["when"] == nil
      || (DateExpressionParser(clock: clock).parse(text)?.hasDay == false
        && ConditionReader.containsAny(lower, "plan.the_day_of"))
  }

  /// A sentence that opens with a condition and, after a comma, states a second one for
  /// another action ("if X, do A, if Y, do B"; 晴天的话…，阴天的话…), as two sentences: each
  /// condition then guards its own action, and a second that only opposes the first ("if not",
  /// "if there is") is read as its other branch.
  static func branches(_ sentence: Sentence) -> [Sentence] {
    let text = sentence.text
    guard leadingCondition(text) != nil else { return [sentence] }
    let latin = (conditionMarkers() + answerMarkers()).map(\.0).filter { $0.first?.isASCII == true }
    let enders = words("plan.condition_enders")
    var searchFrom = text.startIndex
    while let comma = text[searchFrom...].firstIndex(where: { $0 == "," || $0 == "，" }) {
      searchFrom = text.index(after: comma)
      let head = String(text[..<comma])
      let rest = String(text[searchFrom...]).trimmingCharacters(in: edge)
      // The condition before this comma needs its action first ("if X, do A, …").
      guard let (_, _, action) = leadingCondition(head), isSubstantial(action) else { continue }
      let opensCondition =
        latin.contains { startsWith(rest, $0) }
        || rest.range(of: "就").map { rest.distance(from: rest.startIndex, to: $0.lowerBound) <= 8 } ?? false
        || conditionMarkers().contains { $0.0.first?.isASCII == false && rest.hasPrefix($0.0) }
        || enders.contains { ender in
          rest.range(of: ender).map { rest.distance(from: rest.startIndex, to: $0.lowerBound) <= 12 } ?? false
        }
      guard opensCondition, leadingCondition(rest) != nil else { continue }
      return [Sentence(text: head, isQuestion: false)]
        + branches(Sentence(text: rest, isQuestion: sentence.isQuestion))
    }
    return [sentence]
  }

  /// The sentences with each one that only says the user's data is stored ("it's on file with
  /// you") joined to the request before it, so that request recalls it first.
  static func withPointersJoined(_ sentences: [Sentence]) -> [Sentence] {
    var result: [Sentence] = []
    for sentence in sentences {
      if let last = result.indices.last, !result[last].isQuestion, pointsToStored(sentence.text) {
        result[last].text += "，" + sentence.text
      } else {
        result.append(sentence)
      }
    }
    return result
  }

  /// Whether `text` only says that what the request needs was stored before ("it's on file
  /// with you", 日子你存着): it refers to what was stored and asks for nothing of its own.
  static func pointsToStored(_ text: String) -> Bool {
    refersToStored(text) && !opensWithRequestVerb(text) && !opensWithLookup(text)
      && !text.hasSuffix("?") && !text.hasSuffix("？")
      && text.split(whereSeparator: \.isWhitespace).count <= 6 && text.count <= 30
  }

  /// Whether `text` only goes on with the arithmetic of `previous` ("divide by 3", 再除以3):
  /// it opens with an operation and a number, and `previous` has numbers.
  static func continuesArithmetic(_ text: String, after previous: String) -> Bool {
    let lower = text.lowercased().trimmingCharacters(in: edge)
    return previous.contains(where: \.isNumber) && lower.contains(where: \.isNumber)
      && words("plan.arithmetic_steps").contains { lower.hasPrefix($0) }
  }

  /// Whether `text` is a question for a piece of information ("which one …?", 是多少来着？).
  static func asksForInformation(_ text: String) -> Bool {
    let asked =
      text.hasSuffix("?") || text.hasSuffix("？") || text.contains("来着") || TextCues.isQuestion(text)
    return asked && ConditionReader.containsAny(text.lowercased(), "plan.info_questions")
  }

  /// Whether a part asks for a sum or a count of days (`plan.compute_cues`): with what was
  /// stored, a recall and then the calculator.
  static func computesWith(_ text: String) -> Bool {
    ConditionReader.containsAny(text.lowercased(), "plan.compute_cues")
  }

  /// Whether a sentence is only courtesy or a preamble to the requests (`plan.courtesies`:
  /// "thank you!", 谢谢, "quick question").
  /// Whether a condition's `text` is about what the assistant holds ("you've got it on file",
  /// 你记得), not only a fact of the user's life.
  static func isHeldByAssistant(_ text: String) -> Bool {
    refersToStored(text) || ConditionReader.containsAny(text.lowercased(), "plan.held_by_you")
  }

  /// What a condition on what the assistant holds is about, without the holding
  /// ("you've got my plate number saved" is "my plate number").
  static func heldThing(_ about: String) -> String {
    let thing = ConditionReader.removing(["plan.held_by_you"], from: about.lowercased())
      .trimmingCharacters(in: edge)
    return thing.isEmpty ? about : thing
  }

  /// Whether `text` asks only to be told something ("read it out to me", 发给我), naming no write.
  static func asksToBeTold(_ text: String) -> Bool {
    ConditionReader.containsAny(text.lowercased(), "plan.tell_stored")
      && !["reminder.create", "note.create", "calendar.create"].contains(namedWrite(in: text))
      && openingWrite(of: text) == nil
  }

  static func isCourtesy(_ text: String) -> Bool {
    let bare = text.lowercased().trimmingCharacters(in: edge.union(.punctuationCharacters).union(.symbols))
    return words("plan.courtesies").contains(bare)
  }

  /// What follows the last correction in `text` ("…, no wait, I meant …", 不对，…:
  /// `plan.corrections` at the start of a clause), when it says enough to route; nil without one.
  static func afterCorrection(_ text: String) -> String? {
    let lower = text.lowercased()
    var last: Range<String.Index>?
    for marker in words("plan.corrections") {
      var searchFrom = lower.startIndex
      while let range = lower.range(of: marker, range: searchFrom..<lower.endIndex) {
        searchFrom = range.upperBound
        let before = range.lowerBound == lower.startIndex ? nil : lower[lower.index(before: range.lowerBound)]
        let after = range.upperBound == lower.endIndex ? nil : lower[range.upperBound]
        let opensClause = before.map { !$0.isLetter || !$0.isASCII } ?? true
        let endsWord = !(marker.last?.isASCII ?? false) || !(after?.isLetter ?? false)
        guard opensClause, endsWord, range.lowerBound > lower.startIndex else { continue }
        if last.map({ range.lowerBound > $0.lowerBound }) ?? true { last = range }
      }
    }
    guard let last, lower.count == text.count else { return nil }
    let offset = lower.distance(from: lower.startIndex, to: last.upperBound)
    let rest = String(text[text.index(text.startIndex, offsetBy: offset)...])
      .trimmingCharacters(in: edge.union(.punctuationCharacters))
    return isSubstantial(rest) ? rest : nil
  }

  /// Whether a part asks for nothing to be done ("skip it", 算了).
  static func isNoop(_ text: String) -> Bool {
    let bare = stripLeading(text, words("plan.action_openers")).lowercased()
      .trimmingCharacters(in: edge.union(.punctuationCharacters))
    return words("plan.noop").contains(bare)
  }

  /// Whether `text` refers back to something said before it ("it", "that", 那个).
  static func refersBack(_ text: String) -> Bool {
    ConditionReader.containsAny(text.lowercased(), "plan.references")
  }

  /// The skill router's decision for one part when it names a skill surely, else nil.
  private func surely(
    _ text: String, clock: AgentClock, scenario: SkillScenario, lenient: Bool = false, takeBest: Bool = false
  ) async throws -> RouteDecision? {
    guard Self.isSubstantial(text),
      var decision = try await decisions.route(text, with: router, clock: clock, scenario: scenario)
    else { return nil }
    if let settled = InverseGuard.settle(
      decision, text: text, skills: router, clock: clock, scenario: scenario)
    {
      decision = settled
    }
    // "add a reminder ...", "log that ...": a part that names one kind of thing to write is
    // that kind, whichever write the router leaned to.
    // So is one that opens with a verb that makes something ("add a reminder at noon …"), whatever
    // the router chose.
    let makes =
      InverseGuard.opens(text, withOneOf: "guard.add_heads")
      || InverseGuard.opens(text, withOneOf: "guard.make_heads")
    if let chosen = decision.skillID, InverseGuard.writes.contains(chosen) || makes,
      let named = Self.namedWrite(in: text),
      named != chosen, let read = reading(text, as: named, from: decision, clock: clock, scenario: scenario)
    {
      decision = read
    }
    decision = added(decision, text: text, clock: clock, scenario: scenario)
    // The router's confidence stands: only what the item is changes.
    if let chosen = decision.skillID, let changed = Self.changeOfItem(text, chosen: chosen),
      changed != chosen,
      let read = reading(
        text, as: changed, from: decision, keepingScore: true, clock: clock, scenario: scenario)
    {
      decision = read
    }
    // "find my dentist appointment", 查一下提醒: a part that opens with a look-up verb changes
    // nothing; it looks up what its words name (else what is remembered).
    // An unsure pick below what a part needs (a look in memory read as the time) is no
    // reading either: the verb says what is asked.
    let unsurePick =
      !decision.isConfident && decision.method == .intent && decision.score < thresholds.compoundPart
    if Self.opensWithLookup(text), changesSomething(decision.skillID, scenario: scenario) || unsurePick,
      let read = reading(
        text, as: Self.lookup(for: text) ?? RecallSkill.skillID, clock: clock, scenario: scenario)
    {
      decision = read
    }
    // "I told you my salary, didn't I?", 我以前跟你讲过…: a part that asks back what was said is a
    // recall; so is one about what was stored before ("the code I gave you", 我存过的),
    // unless a note, event or reminder is made with it (it gets a recall before it: `plan`).
    // What was stored and is now to be forgotten or cancelled stays the object of that verb.
    let destroysStored =
      (decision.skillID.flatMap { router.registeredSkill(id: $0, scenario: scenario) }?.isDestructive ?? false)
      && (InverseGuard.opens(text, withOneOf: "guard.destroy_heads")
        || ConditionReader.containsAny(text.lowercased(), "guard.destroy_anywhere"))
    // "remind me, which code did I give you?", 提醒我一下…是多少来着？: a question for what
    // was stored, with no time to remind at, is a recall even when it says "remind".
    let asksStored =
      decision.skillID == "reminder.create" && Self.asksForInformation(text)
      && DateExpressionParser(clock: clock).parse(text) == nil
    let recallsStored =
      Self.refersToStored(text) && (!Self.carriesRecalled.contains(decision.skillID ?? "") || asksStored)
      && !destroysStored
    if decision.skillID != RecallSkill.skillID, Self.asksWhatWasSaid(text) || recallsStored,
      let read = reading(text, as: RecallSkill.skillID, clock: clock, scenario: scenario)
    {
      decision = read
    }
    // Where a verb is enough ("..., otherwise book a movie"): the write its opening verb is
    // one of (`guard.write_heads`), when the model named none.
    // ("add a reminder at noon …": the kind it names before the kind its verb would open.)
    if decision.skillID == nil, lenient, let named = Self.namedWrite(in: text) ?? Self.openingWrite(of: text),
      let read = reading(text, as: named, from: decision, clock: clock, scenario: scenario)
    {
      decision = read
    }
    // "..., then cancel it", 然后取消掉: a verb that cancels is enough too; what it cancels is a
    // reminder when the part names one, else an event (a look-up before it retargets it).
    if decision.skillID == nil, lenient, Self.opensWithCancel(text),
      let read = reading(
        text,
        as: ConditionReader.containsAny(text.lowercased(), "guard.reminder_words")
          ? "reminder.cancel" : "calendar.cancel", from: decision, clock: clock, scenario: scenario)
    {
      decision = read
    }
    // A piece after "then", 然后 is a request by where it stands: when the model is unsure,
    // the skill it finds most probable is the reading (a cancel it cannot place between
    // reminders and events is still a cancel; a look-up before it retargets which).
    if takeBest, decision.method == .intent, decision.skillID == nil || !decision.isConfident,
      let best = decision.intent?.ranked.first(where: {
        router.registeredSkill(id: $0.label, scenario: scenario) != nil
      }),
      best.probability >= thresholds.joinedPart,
      var read = reading(
        text, as: best.label, from: decision, keepingScore: true, clock: clock, scenario: scenario)
    {
      read.score = best.probability
      read.isConfident = false
      return added(read, text: text, clock: clock, scenario: scenario)
    }
    guard decision.skillID != nil else { return nil }
    if lenient { return decision }
    guard decision.isConfident else { return nil }
    if decision.method == .intent && decision.score < thresholds.compoundPart { return nil }
    return decision
  }

  /// "add 'buy stamps' to my reminders": a list named as where a write goes is that list's
  /// write, not a look at it (the router's confidence stands).
  private func added(_ decision: RouteDecision, text: String, clock: AgentClock, scenario: SkillScenario)
    -> RouteDecision
  {
    guard let chosen = decision.skillID, Self.listLookups.contains(chosen) else { return decision }
    // "set a reminder two days ahead": a write's own verb and kind say what is made.
    // "…, then two days ahead set a reminder": a make-verb with its kind anywhere in the part.
    let write =
      InverseGuard.opens(text, withOneOf: "guard.add_heads")
      ? chosen.replacingOccurrences(of: ".list", with: ".create")
      : InverseGuard.opens(text, withOneOf: "guard.make_heads")
        || ConditionReader.containsAny(text.lowercased(), "plan.make_item") ? Self.namedWrite(in: text) : nil
    guard let write,
      let read = reading(
        text, as: write, from: decision, keepingScore: true, clock: clock, scenario: scenario)
    else { return decision }
    return read
  }

  /// `text` read as the skill `id`, its arguments extracted from the text: by a rule (score
  /// 1, keeping the model's reading of `decision` for inspection), or, `keepingScore`, with
  /// `decision`'s method and confidence when only what the item is changes. Nil when no such
  /// skill is registered.
  private func reading(
    _ text: String, as id: String, from decision: RouteDecision? = nil, keepingScore: Bool = false,
    clock: AgentClock, scenario: SkillScenario
  ) -> RouteDecision? {
    guard let skill = router.registeredSkill(id: id, scenario: scenario) else { return nil }
    let arguments = skill.extractArguments(from: text, clock: clock)
    if keepingScore, var kept = decision {
      kept.skillID = skill.id
      kept.arguments = arguments
      return kept
    }
    return RouteDecision(
      skillID: skill.id, arguments: arguments, method: .rules, score: 1, intent: decision?.intent)
  }

  /// Whether the skill `id` changes something (true when no skill is chosen).
  private func changesSomething(_ id: String?, scenario: SkillScenario) -> Bool {
    guard let id else { return true }
    return router.registeredSkill(id: id, scenario: scenario)?.hasSideEffects ?? false
  }

  // MARK: - Splitting

  /// A note's text is one step whatever it lists ("note: eggs, milk and bread").
  static func isNote(_ text: String) -> Bool {
    let lower = text.lowercased()
    guard let colon = lower.firstIndex(where: { $0 == ":" || $0 == "：" }) else { return false }
    let head = String(lower[..<colon])
    // A colon late in the text introduces the note's list after another request.
    // A head under a condition ("if you don't have it, write down: …") is the condition's action.
    return head.count <= 30 && words("plan.note_heads").contains { head.contains($0) }
      && !words("plan.sequence_joins").contains { head.contains($0) }
      && !ConditionReader.containsAny(head, "plan.condition_markers")
      && !ConditionReader.containsAny(head, "plan.condition_enders")
  }

  /// A note's text and the request after it, where a joining word ("then", 再) is followed by
  /// the verb of another write ("remind me", 提醒我); nil when the note runs to the end.
  static func noteAndRequest(_ text: String) -> (String, String)? {
    guard let colon = text.firstIndex(where: { $0 == ":" || $0 == "：" }) else { return nil }
    let joins = words("plan.sequence_joins").sorted { $0.count > $1.count }
    // The joins without their commas (，再 -> 再), as they open the rest.
    let bareJoins = joins.map { $0.trimmingCharacters(in: edge) }.filter { !$0.isEmpty }
    var searchFrom = text.index(after: colon)
    while searchFrom < text.endIndex,
      let found = joins.compactMap({ join in
        text.range(of: join, options: .caseInsensitive, range: searchFrom..<text.endIndex).map { ($0, join) }
      }).min(by: { $0.0.lowerBound < $1.0.lowerBound })
    {
      let (range, join) = found
      searchFrom = range.upperBound
      // A Latin join is a whole word: "and" is not in "brand" or "android".
      if join.first?.isASCII == true, join.first?.isLetter == true, range.lowerBound > text.startIndex,
        text[text.index(before: range.lowerBound)].isLetter
      {
        continue
      }
      if join.last?.isASCII == true, join.last?.isLetter == true, range.upperBound < text.endIndex,
        text[range.upperBound].isLetter
      {
        continue
      }
      var rest = String(text[range.upperBound...]).trimmingCharacters(in: edge)
      // "，再 remind me": the joining words after the first.
      while let stripped = stripMarker(rest, bareJoins) { rest = stripped }
      guard let write = openingWrite(of: rest), write != "note.create" else { continue }
      let note = String(text[..<range.lowerBound]).trimmingCharacters(in: edge)
      return note.isEmpty ? nil : (note, rest)
    }
    return nil
  }

  /// "check whether anything's on …, and if not …", 看看…有没有…，有的话…: a look-up said as a
  /// request, then an answer to it, is a question and the sentence after it.
  static func lookupAndAnswer(_ sentence: Sentence) -> [Sentence] {
    guard !sentence.isQuestion, opensWithLookup(sentence.text) else { return [sentence] }
    let text = sentence.text
    var searchFrom = text.startIndex
    while let comma = text[searchFrom...].firstIndex(where: { $0 == "," || $0 == "，" }) {
      let after = String(text[text.index(after: comma)...]).trimmingCharacters(in: edge)
      let rest = stripLeading(after, ["and", "then", "然后"]).trimmingCharacters(in: edge)
      if answerMarkers().contains(where: { startsWith(rest, $0.0) }) {
        return [
          Sentence(text: String(text[..<comma]), isQuestion: true), Sentence(text: rest, isQuestion: false),
        ]
      }
      searchFrom = text.index(after: comma)
    }
    return [sentence]
  }

  struct Sentence {
    var text: String
    var isQuestion: Bool
  }

  /// The sentences of `text`: split after `.`, `?`, `!`, `;` (and their full-width forms),
  /// a dot only when a space or the end follows (so 1.5 and 12.30 stay whole).
  static func sentences(_ text: String) -> [Sentence] {
    var result: [Sentence] = []
    var current = ""
    let characters = Array(text)
    for (position, character) in characters.enumerated() {
      let next = position + 1 < characters.count ? characters[position + 1] : nil
      let ends: Bool
      switch character {
      case "?", "？", "!", "！", ";", "；", "。": ends = true
      case ".":
        // A dot ends a sentence before a space or the end, not after an abbreviation (Dr.).
        let word = current.split(whereSeparator: { !$0.isLetter }).last.map { $0.lowercased() } ?? ""
        ends =
          (next == nil || next!.isWhitespace) && !words("plan.abbreviations").contains(word)
          && !endsListNumber(current)
      case "-", "–", "—":
        // " - " between two clauses, not 2-4pm, not inside a note's list, not inside a quote.
        let insideQuote = openQuotes(in: current)
        ends =
          next?.isWhitespace == true && position > 0 && characters[position - 1].isWhitespace
          && !isNote(current + ": ") && !insideQuote
      default: ends = false
      }
      current.append(character)
      if ends {
        append(current, to: &result)
        current = ""
      }
    }
    append(current, to: &result)
    return result
  }

  /// Whether `text` ends with the number of an item in a list opened by a colon ("agenda: 1",
  /// "…: 1. eggs 2"): its dot numbers the item and ends no sentence.
  static func endsListNumber(_ text: String) -> Bool {
    text.contains(/[:：]\s*1$/) || (text.contains(/[:：]\s*1\.\s/) && text.contains(/\s\d{1,2}$/))
  }

  /// Whether `text` leaves a quotation open: an odd count of quotation marks, an apostrophe
  /// inside a word ("I'm", "Kai's") not counted.
  static func openQuotes(in text: String) -> Bool {
    let characters = Array(text)
    var count = 0
    for (index, character) in characters.enumerated() where "'\"“”‘’".contains(character) {
      let before = index > 0 ? characters[index - 1] : nil
      let after = index + 1 < characters.count ? characters[index + 1] : nil
      if character == "'" || character == "’", before?.isLetter == true, after?.isLetter == true { continue }
      count += 1
    }
    return count % 2 == 1
  }

  private static func append(_ text: String, to sentences: inout [Sentence]) {
    let trimmed = text.trimmingCharacters(
      in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "-–—")))
    // Punctuation alone ("??", "!!!") is emphasis on the sentence before it, no sentence.
    guard trimmed.contains(where: { $0.isLetter || $0.isNumber }) else {
      if trimmed.contains(where: { $0 == "?" || $0 == "？" }), let last = sentences.indices.last {
        sentences[last].isQuestion = true
      }
      return
    }
    let isQuestion = trimmed.hasSuffix("?") || trimmed.hasSuffix("？") || TextCues.isQuestion(trimmed)
    // The question mark stays: the router and the inverse guard read it.
    let body = trimmed.trimmingCharacters(in: CharacterSet(charactersIn: ".!;。！；").union(.whitespaces))
    guard !body.isEmpty else { return }
    // A sentence that only joins ("oh and", "also") belongs to the next: nothing to route.
    sentences.append(Sentence(text: body, isQuestion: isQuestion))
  }

  /// Whether `rest` goes on with the verb of the words before it ("'s on", " is booked").
  static func continuesClause(_ rest: String) -> Bool {
    if rest.hasPrefix("'") || rest.hasPrefix("’") { return true }
    let word = rest.trimmingCharacters(in: .whitespaces).prefix { $0.isLetter }.lowercased()
    return rest.first == " " && ["is", "are", "was", "were"].contains(word)
  }

  /// The parts of one sentence: its condition (if any) and the requests around it.
  static func parts(of sentence: String, isQuestion: Bool) -> [Part] {
    // "if you don't mind, ...", 方便的话: politeness, not a condition.
    var text = stripLeading(
      stripLeading(sentence, words("plan.sequence_joins")), words("plan.polite_conditions"))
    var parts: [Part] = []
    // "if not, ..." / "if so ..." / 如果不是 after a question.
    for (marker, negated) in answerMarkers() where startsWith(text, marker) {
      let rest = String(text.dropFirst(marker.count)).trimmingCharacters(in: edge)
      // "if nothing's on ...", "if nothing is booked": the marker's last word is the subject of
      // a clause that goes on, not the answer to a question.
      if Self.continuesClause(String(text.dropFirst(marker.count))) { continue }
      // "if not, book drinks": the rest is the action; "如果还没到十点，提醒我…" says more first.
      var (conditionText, action) = splitCondition(rest, requireAction: true)
      // "if so pencil in a swim, if not …": a request right after the marker is the action.
      if conditionText == nil || ConditionReader.kind(of: conditionText!, zoneKnown: true) == .memory
        || opensWithRequestVerb(rest)
      {
        (conditionText, action) = (nil, stripLeading(rest, words("plan.action_openers")))
      }
      parts.append(
        Part(
          text: marker, isQuestion: false,
          condition: ConditionText(
            text: conditionText ?? "", negatedByMarker: negated, answersQuestion: true,
            echoesVerb: words("plan.answer_echo").contains(marker))))
      text = action
      break
    }
    // "check the time in LA, and if it is past midnight ...", 先看看…，如果…就…: the requests
    // before the condition are steps of their own.
    if parts.isEmpty, let (before, rest) = conditionInside(text) {
      parts += split(before).map { Part(text: $0, isQuestion: isQuestion, isGuarded: false) }
      text = rest
    }
    if let (conditionText, negated, action) = leadingCondition(text),
      !parts.contains(where: { $0.condition != nil })
    {
      parts.append(
        Part(
          text: conditionText, isQuestion: false,
          condition: ConditionText(text: conditionText, negatedByMarker: negated)))
      text = action
    } else if !parts.contains(where: { $0.condition != nil }),
      let (action, conditionText, negated) = trailingCondition(text)
    {
      parts.append(
        Part(
          text: conditionText, isQuestion: false,
          condition: ConditionText(text: conditionText, negatedByMarker: negated)))
      text = action
    }
    let hasCondition = parts.contains { $0.condition != nil }
    // "either way", 不管下不下雨: says the step is unconditional; nothing to run of its own.
    // A request after it ("either way remind me …", 不管怎样都提醒我…) runs whatever the condition.
    let pieces = splitMarked(text).compactMap { piece -> (text: String, afterJoin: Bool, always: Bool)? in
      guard let rest = stripMarker(piece.text, words("plan.regardless")) else {
        return (piece.text, piece.afterJoin, false)
      }
      return opensWithRequestVerb(rest) ? (rest, piece.afterJoin, true) : nil
    }
    for (index, piece) in pieces.enumerated() {
      var body = piece.text
      var otherwise = false
      // "..., otherwise ...", "..., if not ..." after the sentence's condition; a sentence
      // that opens with "otherwise" takes the previous sentence's condition (`plan`).
      let markers = words("plan.otherwise") + (hasCondition ? words("plan.answer_no") : [])
      if index > 0 || !hasCondition, let stripped = stripMarker(body, markers) {
        body = stripped
        otherwise = true
      }
      parts.append(
        Part(
          text: body, isQuestion: isQuestion && !otherwise, condition: nil, isOtherwise: otherwise,
          isGuarded: !piece.always, afterJoin: piece.afterJoin && index > 0,
          beforeJoin: pieces.dropFirst(index + 1).first?.afterJoin ?? false))
    }
    return parts
  }

  /// The requests of a sentence with no condition left in it, split at the joining words.
  static func split(_ text: String) -> [String] {
    splitMarked(text).map(\.text)
  }

  /// ``split(_:)``'s pieces, each with whether a join that opens a new request ("then",
  /// "also", 然后, 另外: `plan.request_joins`) stands before it, where a comma or "and" may
  /// only go on with the request before.
  static func splitMarked(_ text: String) -> [(text: String, afterJoin: Bool)] {
    // 再提醒我, 也帮我: a join fused with the next request's verb; the verb stays with it.
    var text = text
    for join in words("plan.verb_joins") {
      var searchFrom = text.startIndex
      while let range = text.range(of: join, range: searchFrom..<text.endIndex) {
        let verb = String(join.dropFirst())
        // The join stays a join that opens a request (`plan.request_joins`), cut by `splitOn`.
        let opener = words("plan.request_joins").first { $0.hasPrefix("，") } ?? "，"
        if range.lowerBound == text.startIndex {
          text.replaceSubrange(range, with: verb)
        } else {
          text.replaceSubrange(range, with: opener + verb)
        }
        searchFrom = text.index(
          text.startIndex,
          offsetBy: min(text.count, text.distance(from: text.startIndex, to: range.lowerBound) + verb.count))
      }
    }
    let opening = Set(words("plan.request_joins"))
    var pieces = [(text: text, afterJoin: false)]
    for join in words("plan.sequence_joins") + words("plan.otherwise_joins") {
      pieces = pieces.flatMap { piece in
        splitOn(piece.text, join).enumerated().map { index, cut in
          (text: cut, afterJoin: index == 0 ? piece.afterJoin : opening.contains(join))
        }
      }
    }
    return pieces.map { (text: $0.text.trimmingCharacters(in: edge), afterJoin: $0.afterJoin) }
      .filter { !$0.text.isEmpty }
  }

  /// `text` split at every occurrence of `join` that stands between words (a Latin join
  /// needs word boundaries; a comma between digits, as in 1,280, is not a join). Words of
  /// `plan.otherwise_joins` stay at the start of the part they open.
  private static func splitOn(_ text: String, _ join: String) -> [String] {
    let keep = words("plan.otherwise_joins").contains(join)
    let latin = join.unicodeScalars.contains { $0.isASCII && CharacterSet.letters.contains($0) }
    var pieces: [String] = []
    var start = text.startIndex
    var searchFrom = text.startIndex
    while let range = text.range(of: join, options: .caseInsensitive, range: searchFrom..<text.endIndex) {
      searchFrom = range.upperBound
      let before = text[..<range.lowerBound]
      let after = text[range.upperBound...]
      if latin, join.first?.isLetter == true, before.last?.isLetter == true { continue }
      if latin, join.last?.isLetter == true, after.first?.isLetter == true { continue }
      if join == ",", before.last?.isNumber == true, after.first?.isNumber == true { continue }
      // "add up 1250, 830 and 415": a join between two numbers lists them.
      if [",", "，", "and", "、"].contains(join.trimmingCharacters(in: .whitespaces)),
        before.trimmingCharacters(in: .whitespaces).last?.isNumber == true,
        after.trimmingCharacters(in: .whitespaces).first?.isNumber == true
      {
        continue
      }
      pieces.append(String(text[start..<range.lowerBound]))
      start = keep ? range.lowerBound : range.upperBound
    }
    pieces.append(String(text[start...]))
    return pieces
  }

  /// Where a condition opens after other requests in the same sentence: the text before it
  /// (after a comma, "and", 先…) and from the marker on; nil when none does, or when the
  /// condition has no action after it (a trailing condition, read by `trailingCondition`).
  static func conditionInside(_ text: String) -> (String, String)? {
    // A sentence that opens with its condition is read by `leadingCondition`; its "if not"
    // later is the other branch, not a condition of its own.
    if conditionMarkers().contains(where: { $0.0.first?.isASCII == true && startsWith(text, $0.0) }) {
      return nil
    }
    for (marker, _) in conditionMarkers() {
      let isLatin = marker.first?.isASCII ?? false
      var searchFrom = text.startIndex
      while let range = text.range(of: marker, options: .caseInsensitive, range: searchFrom..<text.endIndex) {
        searchFrom = range.upperBound
        guard range.lowerBound != text.startIndex else { continue }
        let before = String(text[..<range.lowerBound])
        let trimmedBefore = before.trimmingCharacters(in: .whitespaces)
        if isLatin {
          // A Latin marker opens a clause: after a comma or "and".
          let lower = trimmedBefore.lowercased()
          guard
            lower.hasSuffix(",") || lower.hasSuffix("，") || lower.hasSuffix(" and")
              || lower.hasSuffix(", and")
          else { continue }
        } else {
          // A Chinese one after a comma: the topic of a condition has none (明天要是下雨).
          guard trimmedBefore.hasSuffix("，") || trimmedBefore.hasSuffix(",") else { continue }
        }
        let rest = String(text[range.lowerBound...])
        // "…? if so, …", 有的话就…: an answer to the request before, not a condition of its own
        // (如果有冰雹…, "if it is snowing" say one).
        if let (marker, _) = answerMarkers().first(where: { startsWith(rest, $0.0) }) {
          let after = String(rest.dropFirst(marker.count)).trimmingCharacters(in: .whitespaces)
          if after.isEmpty
            || ["，", ",", "就", "的话", "then"].contains(where: { after.lowercased().hasPrefix($0) })
            || opensWithRequestVerb(after)
          {
            continue
          }
        }
        guard leadingCondition(rest) != nil else { continue }
        let head = stripTrailing(trimmedBefore)
        guard !head.isEmpty else { continue }
        return (head, rest)
      }
    }
    return nil
  }

  private static func stripTrailing(_ text: String) -> String {
    var result = text.trimmingCharacters(in: edge)
    for join in ["and", "，", ","] where result.lowercased().hasSuffix(join) {
      result = String(result.dropLast(join.count)).trimmingCharacters(in: edge)
    }
    return result
  }

  /// A condition at the start of the sentence ("if it rains tomorrow, ...", 如果…就…,
  /// 明天要是下雨，…): the condition's text, whether its marker negates (unless, 除非), and
  /// the action after it.
  static func leadingCondition(_ text: String) -> (String, Bool, String)? {
    for (marker, negated) in conditionMarkers() {
      let isLatin = marker.first?.isASCII ?? false
      // A Latin marker opens the sentence, or follows a short time it is about ("Sunday
      // morning if it rains, …"); a Chinese one may follow the topic (明天要是…).
      let timeTopic = isLatin && !startsWith(text, marker) ? Self.timeTopic(before: marker, in: text) : nil
      if isLatin && !startsWith(text, marker) && timeTopic == nil { continue }
      guard let range = timeTopic ?? text.range(of: marker, options: .caseInsensitive) else { continue }
      if !isLatin, text.distance(from: text.startIndex, to: range.lowerBound) > 16 { continue }
      let topic = String(text[..<range.lowerBound])
      let rest = String(text[range.upperBound...])
      let (condition, action) = splitCondition(rest, requireAction: true)
      guard let condition, !action.isEmpty else { continue }
      return ((topic + condition).trimmingCharacters(in: edge), negated, action)
    }
    // 周日下午风大的话就…: a Chinese condition marked only by 的话 at its end.
    for ender in words("plan.condition_enders") {
      guard let range = text.range(of: ender) else { continue }
      let condition = String(text[..<range.lowerBound]).trimmingCharacters(in: edge)
      let action = String(text[range.upperBound...]).trimmingCharacters(in: edge)
      guard !condition.isEmpty, !action.isEmpty else { continue }
      return (condition, false, stripLeading(action, words("plan.action_openers")))
    }
    // 不空就挪到周五, 不下雪就算了: a short state of the calendar, the weather or a clock before
    // a bare 就.
    if let range = text.range(of: "就"), text.distance(from: text.startIndex, to: range.lowerBound) <= 8 {
      let condition = String(text[..<range.lowerBound]).trimmingCharacters(in: edge)
      let action = String(text[range.upperBound...]).trimmingCharacters(in: edge)
      // 不下就…, 没空就…: a bare negation is the other branch of the condition before it.
      let bareNegation = condition.count <= 3 && (condition.hasPrefix("不") || condition.hasPrefix("没"))
      if !condition.isEmpty, !action.isEmpty, !condition.contains(where: { $0.isASCII && $0.isLetter }),
        ConditionReader.kind(of: condition) != .memory || bareNegation
      {
        return (condition, false, action)
      }
    }
    return nil
  }

  /// The range of `marker` after a short time that opens `text` ("Saturday morning if …"): at
  /// most three words, each a day, a part of the day or a word around them.
  static func timeTopic(before marker: String, in text: String) -> Range<String.Index>? {
    guard let range = text.range(of: " \(marker) ", options: .caseInsensitive) else { return nil }
    let words = text[..<range.lowerBound].lowercased().split(whereSeparator: { $0 == " " || $0 == "," })
    guard (1...3).contains(words.count),
      words.allSatisfy({ Self.words("plan.time_topics").contains(String($0)) })
    else { return nil }
    return text.index(after: range.lowerBound)..<text.index(before: range.upperBound)
  }

  /// A condition at the end ("... unless it's raining", "... if it snows"): only one about
  /// the weather, a time or the calendar, so "remind me to check if the shop is open" stays whole.
  static func trailingCondition(_ text: String) -> (String, String, Bool)? {
    for (marker, negated) in conditionMarkers() {
      // A Latin marker after a space, or after a comma in a Chinese sentence ("…两点，unless …");
      // a Chinese one after a comma ("…，除非…", "…, 只有在…的情况下").
      let openers = marker.first?.isASCII ?? false ? [" ", "，", ","] : ["，", ", ", ","]
      let closer = marker.first?.isASCII ?? false ? " " : ""
      guard
        let range = openers.lazy.compactMap({
          text.range(of: $0 + marker + closer, options: [.caseInsensitive, .backwards])
        }).first
      else { continue }
      let action = String(text[..<range.lowerBound]).trimmingCharacters(in: edge)
      var condition = String(text[range.upperBound...]).trimmingCharacters(in: edge)
      for tail in words("plan.condition_tails") where condition.hasSuffix(tail) {
        condition = String(condition.dropLast(tail.count)).trimmingCharacters(in: edge)
      }
      guard !action.isEmpty, !condition.isEmpty, ConditionReader.kind(of: condition) != .memory else {
        continue
      }
      return (action, condition, negated)
    }
    return nil
  }

  /// Splits "it rains tomorrow, remind me ..." (or without the comma, at the first action
  /// word; or at 就) into the condition and the action.
  static func splitCondition(_ text: String, requireAction: Bool) -> (String?, String) {
    var best: Range<String.Index>?
    for separator in [",", "，", " then ", "就"] {
      if let range = text.range(of: separator), best.map({ range.lowerBound < $0.lowerBound }) ?? true {
        best = range
      }
    }
    // "if it's after 5 there ping me at 6, if not ...": a request to the assistant before the
    // first comma starts the action.
    if let comma = best, let verb = addressedVerb(in: text), verb < comma.lowerBound {
      return (
        String(text[..<verb]).trimmingCharacters(in: edge),
        String(text[verb...]).trimmingCharacters(in: edge)
      )
    }
    if let best {
      let condition = String(text[..<best.lowerBound]).trimmingCharacters(in: edge)
      let action = String(text[best.upperBound...]).trimmingCharacters(in: edge)
      // "if Quito's past 9pm don't bother, otherwise …": the branch that does nothing ends the
      // condition; the action after the comma is its other branch.
      let lower = condition.lowercased()
      if let noop = words("plan.noop").compactMap({ word -> Range<String.Index>? in
        guard let range = lower.range(of: word), range.upperBound == lower.endIndex,
          range.lowerBound != lower.startIndex
        else { return nil }
        return range
      }).min(by: { $0.lowerBound < $1.lowerBound }) {
        let offset = lower.distance(from: lower.startIndex, to: noop.lowerBound)
        let split = condition.index(condition.startIndex, offsetBy: offset)
        return (
          String(condition[..<split]).trimmingCharacters(in: edge),
          String(condition[split...]) + ", " + action
        )
      }
      return (condition, stripLeading(action, words("plan.action_openers")))
    }
    // No comma: the action starts at its first action word ("if it rains remind me ...").
    let lower = text.lowercased()
    var start: String.Index?
    for verb in words("plan.action_verbs") {
      var searchFrom = lower.startIndex
      while let range = lower.range(of: verb, range: searchFrom..<lower.endIndex) {
        let boundaryBefore =
          range.lowerBound == lower.startIndex || !lower[lower.index(before: range.lowerBound)].isLetter
        let boundaryAfter = range.upperBound == lower.endIndex || !lower[range.upperBound].isLetter
        if boundaryBefore && boundaryAfter && range.lowerBound != lower.startIndex {
          if start.map({ range.lowerBound < $0 }) ?? true { start = range.lowerBound }
          break
        }
        searchFrom = range.upperBound
      }
    }
    guard let start else {
      return (requireAction ? nil : text.isEmpty ? nil : text, requireAction ? text : "")
    }
    let offset = lower.distance(from: lower.startIndex, to: start)
    let split = text.index(text.startIndex, offsetBy: offset)
    return (
      String(text[..<split]).trimmingCharacters(in: edge), String(text[split...]).trimmingCharacters(in: edge)
    )
  }

  /// Where a request to the assistant first stands after the start of `text`: an action
  /// verb before "me", an article, "my" or a quote ("remind me", "book a", "create '...'"),
  /// not after a subject ("if I book a table" is a condition).
  static func addressedVerb(in text: String) -> String.Index? {
    let lower = text.lowercased()
    var first: String.Index?
    let objects = words("plan.verb_objects")
    let subjects = Set(words("plan.subject_pronouns"))
    for verb in words("plan.action_verbs") {
      for object in objects {
        guard let range = lower.range(of: verb + " " + object), range.lowerBound != lower.startIndex,
          !lower[lower.index(before: range.lowerBound)].isLetter,
          !(object.last?.isLetter ?? false) || range.upperBound == lower.endIndex
            || !lower[range.upperBound].isLetter
        else { continue }
        // "if I book a table": a verb whose subject is someone is part of the condition.
        let before = lower[..<range.lowerBound].split(whereSeparator: { !$0.isLetter && $0 != "'" })
        if let word = before.last, subjects.contains(String(word)) { continue }
        if first.map({ range.lowerBound < $0 }) ?? true { first = range.lowerBound }
      }
    }
    guard let first else { return nil }
    return text.index(text.startIndex, offsetBy: lower.distance(from: lower.startIndex, to: first))
  }

  // MARK: - Reading conditions, inputs and dates

  /// Whether a condition only refers to the one before it ("if not", "if so", 还没到点的话,
  /// 不是的话): it answers no question just asked and says too little to read on its own.
  static func isElliptical(
    _ written: ConditionText, after question: (text: String, step: Int)?, steps: [PlanStep]
  )
    -> Bool
  {
    if written.answersQuestion {
      // "if it IS snowing": a condition of its own after the marker is read on its own.
      if !written.text.isEmpty, ConditionReader.kind(of: written.text) != .memory { return false }
      return question == nil || question!.step != steps.count - 1
    }
    let lower = written.text.lowercased()
    let bare = ConditionReader.removing(["plan.negations", "plan.time_before"], from: lower)
      .trimmingCharacters(in: edge)
    let latinWords = bare.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).count
    let cjk = bare.unicodeScalars.filter { $0.value >= 0x4E00 && $0.value <= 0x9FFF }.count
    return ConditionReader.kind(of: written.text) == .memory && latinWords <= 2 && cjk <= 2
      && !lower.contains(where: \.isNumber)
  }

  /// The kind of a condition whose words name none (so it would be a fact in memory) and
  /// that says nothing of what is stored: the weather or the calendar the plan has just
  /// looked at ("…, and if it seems pleasant then …"), else that of the condition just before
  /// (the other branch: "if the slot is empty …, if anything is booked …"), else what the router
  /// confidently reads in it as a request of its own (an item at a time "still there").
  private func placedKind(
    of text: String, steps: [PlanStep], earlier: StepCondition?, clock: AgentClock, scenario: SkillScenario
  )
    async throws -> StepCondition.Kind?
  {
    guard !Self.refersToStored(text), !ConditionReader.containsAny(text.lowercased(), "plan.said_before")
    else { return nil }
    let skill: String?
    if let last = steps.last?.skill, last == "weather.current" || last == "calendar.list" {
      skill = last
    } else if let earlier, earlier.kind != .memory {
      // (A time only with the words of one: 不是凌晨的话 after a condition on the small hours.)
      guard earlier.kind != .time || ConditionReader.namesTimeOfDay(text.lowercased()) else { return nil }
      return earlier.kind
    } else {
      skill = try await surely(text, clock: clock, scenario: scenario)?.skillID
    }
    switch skill {
    case "weather.current": return .weather
    case .some(let id) where id.hasPrefix("calendar."): return .calendar
    default: return nil
    }
  }

  /// Whether an elliptical condition asks for the opposite of the one before it.
  static func negatesEarlier(_ written: ConditionText) -> Bool {
    if written.answersQuestion { return written.negatedByMarker }
    return ConditionReader.isNegated(written.text.lowercased()) != written.negatedByMarker
  }

  /// The condition `written` states, read against the question it may answer.
  private func read(
    _ written: ConditionText, clock: AgentClock, question: (text: String, step: Int)?, steps: [PlanStep],
    contextZone: String? = nil
  ) -> StepCondition? {
    let reader = ConditionReader(clock: clock)
    if written.answersQuestion, let question {
      let asked = steps[question.step]
      return reader.read(
        answering: question.text, skill: asked.skill, arguments: asked.arguments, rest: written.text,
        negatedByMarker: written.negatedByMarker)
    }
    guard !written.text.isEmpty else { return nil }
    // "there", 那边: the zone of an earlier step that named one (or of a place a statement
    // before the requests named); right after a question for the time in a zone, a time names
    // that zone's.
    let zone =
      steps.last(where: { $0.arguments["zone"] != nil })?.arguments["zone"]?.stringValue ?? contextZone
    let afterTimeQuestion = steps.last?.skill == "time.now"
    guard
      var condition = reader.read(
        written.text, negatedByMarker: written.negatedByMarker, zone: zone, zoneKnown: afterTimeQuestion)
    else { return nil }
    let lower = written.text.lowercased()
    // Right after a look at the weather, "if it's clear" is the sky's.
    if steps.last?.skill == "weather.current", condition.kind == .calendar,
      ConditionReader.weatherAbout(lower) != nil,
      let weather = reader.read(written.text, negatedByMarker: written.negatedByMarker, kind: .weather)
    {
      condition = weather
    }
    // Right after a look at the calendar, "if the morning is open" and "if there's a X" are
    // about the calendar.
    if steps.last?.skill == "calendar.list", condition.kind == .weather || condition.kind == .memory,
      ConditionReader.containsAny(lower, "plan.calendar_free")
        || ConditionReader.containsAny(lower, "plan.calendar_busy")
        || ConditionReader.containsAny(lower, "plan.calendar_exists")
    {
      let busy = ConditionReader.saysBusy(lower)
      condition = ConditionReader.said(
        StepCondition(
          kind: .calendar, about: "free", negated: busy != written.negatedByMarker,
          when: DateExpressionParser(clock: clock).parse(written.text)?.date
            ?? steps.last?.arguments["when"]?.dateValue,
          text: written.text),
        negatedByMarker: written.negatedByMarker)
    }
    return condition
  }

  /// Steps that act on what an earlier look-up found, made to agree with it: a question
  /// about an appointment or meeting ("when is my orthodontist visit?") followed by a step
  /// that uses its answer looks the event up in the calendar (not in memory); a change right
  /// after a calendar look-up acts on that event (cancel or move it, not a reminder, not a
  /// new event), and one after a reminder list on that reminder.
  static func retargeted(_ steps: [PlanStep], texts: [String]) -> [PlanStep] {
    var result = steps
    for index in result.indices.dropFirst() {
      let previous = index - 1
      let lookup = result[previous].skill
      let changes = [
        "reminder.cancel", "reminder.update", "calendar.cancel", "calendar.update", "calendar.create",
      ]
      guard changes.contains(result[index].skill) || result[index].inputFrom == previous else { continue }
      let previousLower = texts[previous].lowercased()
      // (A look-up of the weather or the time is one of its own: "check Friday's weather, if
      // it storms cancel the picnic".)
      if opensWithLookup(texts[previous]),
        !["calendar.list", "reminder.list", "weather.current", "time.now"].contains(lookup)
      {
        // A look-up verb, then a change of what it finds: the look-up is a step of its own, of
        // the calendar unless it names a reminder (what is moved or cancelled has a time).
        let changesTimedItem =
          changes.contains(result[index].skill) && result[index].skill != "calendar.create"
        if let named = Self.lookup(for: texts[previous]) {
          result[previous].skill = named
        } else if changesTimedItem, !refersToStored(texts[previous]) {
          result[previous].skill = "calendar.list"
        }
      }
      // "what day is the recital? push it to Monday": a question of when something is, then a
      // change of it, looks it up in the calendar (or the reminders, when it names one).
      // (A question for the time now, here or in a zone, asks no item's time: 伦敦这会儿几点？)
      let asksClock =
        result[previous].skill == "time.now"
        && (ConditionReader.containsAny(previousLower, "plan.time_now")
          || result[previous].arguments["zone"] != nil)
      if ["memory.recall", "time.now"].contains(result[previous].skill), !asksClock,
        ConditionReader.containsAny(previousLower, "plan.when_questions"), !refersToStored(texts[previous]),
        changes.contains(result[index].skill), result[index].skill != "calendar.create"
      {
        result[previous].skill = Self.lookup(for: texts[previous]) ?? "calendar.list"
      }
      if result[previous].skill == "memory.recall",
        ConditionReader.containsAny(previousLower, "guard.event_words"), !refersToStored(texts[previous]),
        result[index].inputFrom == previous || result[index].skill.hasPrefix("calendar.")
          || result[index].skill.hasSuffix(".cancel")
      {
        result[previous].skill = "calendar.list"
      }
      // "list my reminders, then add one more for Sunday", 再加一个: one more of what was listed.
      if result[index].skill == "calendar.create", result[previous].skill == "reminder.list",
        namedWrite(in: texts[index]) == nil,
        ConditionReader.containsAny(texts[index].lowercased(), "plan.one_more")
      {
        result[index].skill = "reminder.create"
        continue
      }
      let kind: String
      switch result[previous].skill {
      case "calendar.list": kind = "calendar"
      case "reminder.list": kind = "reminder"
      default: continue
      }
      let verb: String
      switch result[index].skill {
      case "reminder.cancel", "calendar.cancel": verb = "cancel"
      case "reminder.update", "calendar.update": verb = "update"
      case "calendar.create"
      where refersBack(texts[index])
        && !(result[index].condition?.kind == .calendar && result[index].condition?.negated == false):
        // "… if nothing's there, block it off": what is free has no event to change.
        verb = "update"
      default: continue
      }
      result[index].skill = "\(kind).\(verb)"
      result[index].inputFrom = previous
    }
    return result
  }

  /// The earlier step whose result this part needs: a look-up (recall, a list) before a part
  /// that refers back to it ("it", "the first one", 那个, 最后一个), or a write with no date
  /// of its own after a recall.
  private func inputSource(for text: String, skill: String, steps: [PlanStep]) -> Int? {
    let lookups: Set<String> = ["memory.recall", "calendar.list", "reminder.list"]
    guard let index = steps.lastIndex(where: { lookups.contains($0.skill) || $0.skill == "calculator" }),
      !lookups.contains(skill)
    else {
      return nil
    }
    let lower = " " + text.lowercased() + " "
    let refers = Self.words("plan.references").contains { reference in
      reference.first?.isASCII == true
        ? lower.contains(" \(reference) ") || lower.contains(" \(reference),") : lower.contains(reference)
    }
    if refers { return index }
    if steps[index].skill == "memory.recall",
      [
        "calendar.create", "reminder.create", "note.create", "calendar.update", "reminder.update",
        "calculator",
      ]
      .contains(skill)
    {
      return index
    }
    return nil
  }

  /// A step whose text names a time but no day (…就帮我约个理发，三点) on the day its
  /// condition is about (周六下午要是有空).
  private func dayFromCondition(_ text: String, step: PlanStep, condition: StepCondition, clock: AgentClock)
    -> SkillArguments
  {
    var arguments = step.arguments
    guard let day = condition.when, let own = arguments["when"]?.dateValue,
      let match = DateExpressionParser(clock: clock).parse(text), !match.hasDay
    else { return arguments }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = clock.timeZone
    var parts = calendar.dateComponents([.year, .month, .day], from: day)
    let time = calendar.dateComponents([.hour, .minute], from: own)
    parts.hour = time.hour
    parts.minute = time.minute
    // "明天早上要是下雨，就八点提醒我": a bare hour on a morning the condition names is in the
    // morning (read alone, "八点" after ten o'clock today is tonight's).
    if let hour = time.hour, (17...23).contains(hour),
      ConditionReader.containsAny(condition.text.lowercased(), "plan.time_morning"),
      !ConditionReader.containsAny(text.lowercased(), "plan.time_pm")
    {
      parts.hour = hour - 12
    }
    if let date = calendar.date(from: parts) { arguments["when"] = .date(date) }
    return arguments
  }

  /// "that day", 当天, "the day before", 前一天: the date of an earlier step with a date,
  /// at the time this part names (or the skill's default hour).
  private func carryDate(_ text: String, step: PlanStep, steps: [PlanStep], clock: AgentClock)
    -> SkillArguments
  {
    var arguments = step.arguments
    // "…, and ping me ten minutes ahead", 提前两个钟头叫我: the earlier step's time less the lead.
    if step.skill == "reminder.create", let (lead, phrase) = DateExpressionParser.leadTime(in: text),
      let anchorStep = steps.last(where: { $0.arguments["when"]?.dateValue != nil }),
      let anchor = anchorStep.arguments["when"]?.dateValue
    {
      arguments["when"] = .date(anchor.addingTimeInterval(-lead))
      let title = (arguments["title"]?.stringValue ?? "").replacingOccurrences(of: phrase, with: " ")
      let left = title.trimmingCharacters(in: Self.edge.union(.punctuationCharacters)).lowercased()
      if left.isEmpty || ["it", "that", "this", "then"].contains(left),
        let earlier = anchorStep.arguments["title"]
      {
        arguments["title"] = earlier
      }
      return arguments
    }
    let lower = text.lowercased()
    let sameDay = Self.words("plan.same_day").contains { lower.contains($0) }
    let dayBefore = Self.words("plan.day_before").contains { lower.contains($0) }
    guard sameDay || dayBefore,
      let anchor = steps.last(where: { $0.arguments["when"]?.dateValue != nil })?.arguments["when"]?.dateValue
    else { return arguments }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = clock.timeZone
    let day = calendar.date(byAdding: .day, value: dayBefore ? -1 : 0, to: anchor) ?? anchor
    var parts = calendar.dateComponents([.year, .month, .day], from: day)
    if let own = arguments["when"]?.dateValue {
      let time = calendar.dateComponents([.hour, .minute], from: own)
      parts.hour = time.hour
      parts.minute = time.minute
    } else {
      parts.hour = 9
      parts.minute = 0
    }
    if let date = calendar.date(from: parts) { arguments["when"] = .date(date) }
    return arguments
  }

  static func isSameDay(_ first: Date, _ second: Date, clock: AgentClock) -> Bool {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = clock.timeZone
    return calendar.isDate(first, inSameDayAs: second)
  }

  // MARK: - Words

  static let edge = CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: ",，、:：-–—"))

  static func words(_ name: String) -> [String] { SkillWords.list(name) }

  /// Condition markers, longest first, with whether each negates.
  static func conditionMarkers() -> [(String, Bool)] { sortedConditionMarkers }

  private static let sortedConditionMarkers =
    (words("plan.condition_markers").map { ($0, false) } + words("plan.unless_markers").map { ($0, true) })
    .sorted { $0.0.count > $1.0.count }

  /// "if not" / "if so" / 如果不是 after a question, longest first, with whether each negates.
  static func answerMarkers() -> [(String, Bool)] { sortedAnswerMarkers }

  private static let sortedAnswerMarkers =
    (words("plan.answer_no").map { ($0, true) } + words("plan.answer_yes").map { ($0, false) })
    .sorted { $0.0.count > $1.0.count }

  static func isSubstantial(_ text: String) -> Bool {
    let latinWords = text.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).count
    let cjk = text.unicodeScalars.filter { $0.value >= 0x4E00 && $0.value <= 0x9FFF }.count
    return latinWords >= 2 || cjk >= 3 || (latinWords >= 1 && cjk >= 2)
  }

  static func startsWith(_ text: String, _ marker: String) -> Bool {
    guard text.lowercased().hasPrefix(marker.lowercased()) else { return false }
    let after = text.dropFirst(marker.count).first
    return !(marker.last?.isLetter ?? false) || !(marker.first?.isASCII ?? false)
      || !(after?.isLetter ?? false)
  }

  static func stripLeading(_ text: String, _ markers: [String]) -> String {
    stripMarker(text, markers) ?? text
  }

  static func stripMarker(_ text: String, _ markers: [String]) -> String? {
    let trimmed = text.trimmingCharacters(in: edge)
    for marker in markers.sorted(by: { $0.count > $1.count }) where startsWith(trimmed, marker) {
      return String(trimmed.dropFirst(marker.count)).trimmingCharacters(in: edge)
    }
    return nil
  }
}

/// The skill router's decisions for one request's texts, each routed once.
final class DecisionMemo: Sendable {
  private let decisions = Mutex<[String: RouteDecision?]>([:])

  /// The router's decision for `text`, from an earlier call when there was one.
  func route(_ text: String, with router: SkillRouter, clock: AgentClock, scenario: SkillScenario)
    async throws -> RouteDecision?
  {
    if let known = decisions.withLock({ $0[text] }) { return known }
    let decision = try await router.route(text, clock: clock, scenario: scenario)
    decisions.withLock { $0[text] = .some(decision) }
    return decision
  }
}
