import Foundation

/// The last word on a write: a request to forget, cancel or recall is never sent to a write
/// of the opposite kind (remember, create). When the router chose a write but the request
/// opens with a word that destroys ("forget", "delete", 删掉, 取消) or asks whether the
/// assistant remembers something, the request goes to the inverse skill, whose own
/// confirmation shows what it would remove. The words are data in `skill-words.json`
/// (`guard.*`).
enum InverseGuard {
  /// The skills that write something new.
  static let writes: Set<String> = ["memory.remember", "reminder.create", "calendar.create", "note.create"]

  /// The decision to take instead of `decision`, or nil when it stands.
  static func correct(
    _ decision: RouteDecision, text: String, skills: SkillRouter, clock: AgentClock, scenario: SkillScenario
  ) -> RouteDecision? {
    if let moved = cancelInsteadOfMove(decision, text: text, skills: skills, clock: clock, scenario: scenario)
    {
      return moved
    }
    if let made = makeInsteadOfDestroy(decision, text: text, skills: skills, clock: clock, scenario: scenario)
    {
      return made
    }
    guard let chosen = decision.skillID, writes.contains(chosen) else { return nil }
    let head = opening(of: text)
    let lower = text.lowercased()
    let inverse: String
    if startsWithAny(head, "guard.destroy_heads") || destroysWithBa(lower) {
      // The inverse of the write chosen, unless the request names what it removes.
      if ConditionReader.containsAny(lower, "guard.reminder_words") {
        inverse = "reminder.cancel"
      } else if ConditionReader.containsAny(lower, "guard.event_words") {
        inverse = "calendar.cancel"
      } else {
        inverse =
          ["reminder.create": "reminder.cancel", "calendar.create": "calendar.cancel"][chosen]
          ?? "memory.forget"
      }
    } else if decision.method == .intent, let intent = decision.intent,
      let above = destructiveAbove(chosen, in: intent, skills: skills, scenario: scenario),
      destroysLater(lower, after: "guard.write_heads." + chosen)
    {
      // The model put a destructive reading above the write, though not surely enough to
      // destroy, and a word that destroys stands in the request, not as the write's task
      // ("…, we won't need it", "throw it out"): the destructive reading, whose confirmation
      // shows what it would remove.
      inverse = above
    } else if chosen == "memory.remember", negatesKeeping(lower),
      !startsWithAny(head, "guard.write_heads.memory.remember")
    {
      // "you needn't keep that in mind any more", 不必再帮我记着: not to be kept is forgotten.
      inverse = "memory.forget"
    } else if chosen == "reminder.create", decision.arguments["when"] == nil,
      startsWithAny(head, "guard.tell_me_heads")
    {
      // "remind me what the code is": no time to be reminded at, a question to be told.
      inverse = "memory.recall"
    } else if TextCues.isQuestion(text),
      startsWithAny(head, "guard.recall_heads")
        || ConditionReader.containsAny(lower, "guard.recall_questions")
        || (chosen == "memory.remember" && asksBack(text))
        || (chosen == "reminder.create" && decision.arguments["when"] == nil)
    {
      // "remind me what my locker code is", 提醒我一下…是多少: a question with no time to be
      // reminded at asks to be told.
      inverse = "memory.recall"
    } else {
      return nil
    }
    guard inverse != chosen, let skill = skills.registeredSkill(id: inverse, scenario: scenario) else {
      return nil
    }
    return RouteDecision(
      skillID: inverse, arguments: skill.extractArguments(from: text, clock: clock), method: .rules, score: 1,
      intent: decision.intent, ruleCandidates: decision.ruleCandidates)
  }

  /// A cancel for a move the model fell to when it passed over a cancel it ranked above it
  /// ("…, so nuke the swim reminder"): a word that destroys stands in the request and no verb that
  /// moves does. Nil otherwise.
  static func cancelInsteadOfMove(
    _ decision: RouteDecision, text: String, skills: SkillRouter, clock: AgentClock, scenario: SkillScenario
  ) -> RouteDecision? {
    let lower = text.lowercased()
    guard let chosen = decision.skillID, chosen.hasSuffix(".update"), decision.method == .intent,
      let intent = decision.intent,
      let above = destructiveAbove(chosen, in: intent, skills: skills, scenario: scenario),
      above.hasSuffix(".cancel"), ConditionReader.containsAny(lower, "guard.destroy_anywhere"),
      !ConditionReader.containsAny(lower, "plan.update_heads"),
      let skill = skills.registeredSkill(id: above, scenario: scenario)
    else { return nil }
    return RouteDecision(
      skillID: above, arguments: skill.extractArguments(from: text, clock: clock), method: .rules, score: 1,
      intent: decision.intent, ruleCandidates: decision.ruleCandidates)
  }

  /// The one write `text` names when it opens with a verb of another meaning that makes it
  /// ("drop me a reminder", "drop a note": `guard.destroy_heads_not`); nil otherwise.
  static func idiomWrite(in text: String) -> String? {
    guard startsWithAny(opening(of: text), "guard.destroy_heads_not"),
      let named = RequestPlanner.namedWrite(in: text), writes.contains(named)
    else { return nil }
    return named
  }

  /// The write a request names when the model read its opening verb as destroying: "drop me a
  /// reminder at 5", "drop a note that …" make something (`guard.destroy_heads_not` opens the
  /// request and it names one kind of write). Nil otherwise.
  static func makeInsteadOfDestroy(
    _ decision: RouteDecision, text: String, skills: SkillRouter, clock: AgentClock, scenario: SkillScenario
  ) -> RouteDecision? {
    // (Also when the model was not sure enough to destroy, and so chose nothing.)
    guard let chosen = decision.skillID ?? decision.intent?.label,
      skills.registeredSkill(id: chosen, scenario: scenario)?.isDestructive == true,
      let named = idiomWrite(in: text), let skill = skills.registeredSkill(id: named, scenario: scenario)
    else { return nil }
    return RouteDecision(
      skillID: named, arguments: skill.extractArguments(from: text, clock: clock), method: .rules, score: 1,
      intent: decision.intent, ruleCandidates: decision.ruleCandidates)
  }

  /// The decision to take instead of the router's (`correct`, then `recallQuestion`), or nil
  /// when it stands: the one place both the turn router and the planner's parts go through.
  static func settle(
    _ decision: RouteDecision?, text: String, skills: SkillRouter, clock: AgentClock, scenario: SkillScenario
  ) -> RouteDecision? {
    decision.flatMap { correct($0, text: text, skills: skills, clock: clock, scenario: scenario) }
      ?? recallQuestion(decision, text: text, skills: skills, clock: clock, scenario: scenario)
  }

  /// A recall for a question that asks what the assistant remembers ("do you remember ...?",
  /// 你还记得…吗) when no skill claims it; nil otherwise.
  static func recallQuestion(
    _ decision: RouteDecision?, text: String, skills: SkillRouter, clock: AgentClock, scenario: SkillScenario
  ) -> RouteDecision? {
    guard decision?.skillID == nil, decision?.conversation == nil, TextCues.isQuestion(text),
      startsWithAny(opening(of: text), "guard.recall_heads"),
      let recall = skills.registeredSkill(id: RecallSkill.skillID, scenario: scenario)
    else { return nil }
    return RouteDecision(
      skillID: recall.id, arguments: recall.extractArguments(from: text, clock: clock), method: .rules,
      score: 1,
      intent: decision?.intent)
  }

  /// The question to ask instead of `decision` when the intent model is unsure of the write
  /// (below `RoutingThresholds.inverseDoubt`) and the request also reads as its inverse,
  /// though not surely enough for `correct` to turn it: a word that destroys
  /// or gives up on something later in the sentence ("the dentist thing, scrap it", "I don't
  /// need the ... any more"), or a question about what is remembered. A word that destroys as
  /// the task of a reminder (a reminder whose task is to cancel something, 提醒我取消...) is the write's content.
  /// With `languageModel` on hand, a write chosen only because the destructive reading was
  /// passed over goes to the model's planner instead (whose plan the user confirms).
  static func doubt(
    _ decision: RouteDecision, text: String, skills: SkillRouter, scenario: SkillScenario,
    languageModel: Bool = false
  ) -> Clarification? {
    guard let chosen = decision.skillID, writes.contains(chosen) else { return nil }
    // "drop me a reminder at 5 to …": an idiom that makes the very write chosen, not a doubt.
    if idiomWrite(in: text) == chosen { return nil }
    // The model read the request as destructive rather than as the write, but not surely
    // enough to destroy (`destructiveIntentThreshold`), and the router fell to the write:
    // unsure between a destructive reading and a creating one, it asks.
    if decision.method == .intent, !languageModel, let intent = decision.intent,
      let inverse = destructiveAbove(chosen, in: intent, skills: skills, scenario: scenario)
    {
      return Clarification(write: chosen, inverse: inverse)
    }
    let lower = text.lowercased()
    // A word that destroys stands in the request, not as the write's task: the request reads
    // both ways however sure the model is of the write ("the gym one on monday — delete"), so
    // it asks. Otherwise, unsure: the intent model gives the write less than `inverseDoubt` (a
    // rule's pick, with no model reading, stands).
    let destroys = destroysLater(lower, after: "guard.write_heads." + chosen)
    guard
      destroys
        || (decision.intent.map { intent in
          (intent.ranked.first { $0.label == chosen }?.probability ?? 0) < skills.thresholds.inverseDoubt
        } ?? false)
    else { return nil }
    let inverse: String
    if destroys {
      if ConditionReader.containsAny(lower, "guard.reminder_words"), chosen != "reminder.create" {
        inverse = "reminder.cancel"
      } else if ConditionReader.containsAny(lower, "guard.event_words"), chosen != "calendar.create" {
        inverse = "calendar.cancel"
      } else {
        inverse =
          ["reminder.create": "reminder.cancel", "calendar.create": "calendar.cancel"][chosen]
          ?? "memory.forget"
      }
    } else if TextCues.isQuestion(text), chosen != "note.create",
      ConditionReader.containsAny(lower, "guard.recall_anywhere")
    {
      inverse = "memory.recall"
    } else {
      return nil
    }
    guard skills.registeredSkill(id: inverse, scenario: scenario) != nil else { return nil }
    return Clarification(write: chosen, inverse: inverse)
  }

  /// The most probable label of a destructive skill (`Skill.isDestructive`: forget, cancel)
  /// of `scenario` the model ranks above the write `chosen`, or nil.
  static func destructiveAbove(
    _ chosen: String, in intent: IntentPrediction, skills: SkillRouter, scenario: SkillScenario
  ) -> String? {
    for ranked in intent.ranked {
      if ranked.label == chosen { return nil }
      if skills.registeredSkill(id: ranked.label, scenario: scenario)?.isDestructive == true {
        return ranked.label
      }
    }
    return nil
  }

  /// Whether a word that destroys or gives up on something stands in the request other than
  /// as the task of a reminder or note ("remind me to cancel the gym"): after one of the
  /// write's own verbs (the list `heads`: remind, 提醒我, add, 记住) it is the write's content.
  static func destroysLater(_ lower: String, after heads: String) -> Bool {
    let tasks = SkillWords.list("guard.task_openers")
    let clauseEnds: Set<Character> = [",", "，", "—", "–", "-", ".", "。", ";", "；", "!", "！", "、"]
    for word in SkillWords.list("guard.destroy_anywhere") {
      var searchStart = lower.startIndex
      while let range = lower.range(of: word, range: searchStart..<lower.endIndex) {
        searchStart = range.upperBound
        if word.first?.isASCII == true {
          // A whole word: "drop" is not "dropbox", "clear" is not "nuclear".
          if range.lowerBound > lower.startIndex, lower[lower.index(before: range.lowerBound)].isLetter {
            continue
          }
          if range.upperBound < lower.endIndex, lower[range.upperBound].isLetter { continue }
        }
        let before = lower[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
        // A clause of its own ("…, delete it", …的那个，删了) takes back what the clause before it
        // named, whatever verb that clause opened with.
        if let last = before.last, clauseEnds.contains(last), !before.isEmpty { return true }
        if tasks.contains(where: { before.hasSuffix($0) }) { continue }
        if ConditionReader.containsAny(before, heads) { continue }
        return true
      }
    }
    return false
  }

  /// Whether the request says something need not be kept: "no need to" or "don't have to" a
  /// few words before a verb of keeping ("there's no need to keep ... in mind", "you needn't
  /// remember", 不用再帮我记).
  static func negatesKeeping(_ lower: String) -> Bool {
    let text = lower.replacingOccurrences(of: "’", with: "'")
    let english =
      /\b(?:(?:don't|dont|do not)\s+(?:need|have|got)(?:\s+you)?\s+to|needn't|need not|no need(?:\s+for you)?\s+to|no longer need(?:\s+you)?\s+to|not necessary to|can stop)(?:\s+[a-z']+){0,2}?\s+(?:remember|remembering|keep|keeping|store|save|track)\b/
    return text.firstMatch(of: english) != nil
      || text.firstMatch(of: /(?:不用|不必|不需要|无需|别再|不要再)(?:再|帮我|给我|替我)?记/) != nil
  }

  /// 把 X 取消 / 删掉: the verb that destroys comes after its object.
  static func destroysWithBa(_ lower: String) -> Bool {
    guard let ba = lower.range(of: "把") else { return false }
    let after = lower[ba.upperBound...]
    return SkillWords.list("guard.destroy_ba_verbs").contains { after.contains($0) }
  }

  /// A question that ends with a question mark and asks nothing to be kept ("is my son
  /// allergic to peanuts?"): it asks what is remembered.
  static func asksBack(_ text: String) -> Bool {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard trimmed.hasSuffix("?") || trimmed.hasSuffix("？") else { return false }
    return !ConditionReader.containsAny(trimmed.lowercased(), "guard.keep_words")
  }

  /// The request without the politeness before its verb ("please", "could you", 帮我).
  static func opening(of text: String) -> String {
    var head = text.lowercased().trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters))
    let fillers = SkillWords.list("guard.head_fillers").sorted { $0.count > $1.count }
    var changed = true
    while changed {
      changed = false
      for filler in fillers where head.hasPrefix(filler) {
        let rest = head.dropFirst(filler.count)
        if filler.first?.isASCII == true, let next = rest.first, next.isLetter { continue }
        head = String(rest).trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters))
        changed = true
        break
      }
    }
    return head
  }

  /// Whether `text`, without the politeness before its verb, opens with a phrase of `list`
  /// (a Latin phrase as a whole word).
  static func opens(_ text: String, withOneOf list: String) -> Bool {
    startsWithAny(opening(of: text), list)
  }

  private static func startsWithAny(_ head: String, _ list: String) -> Bool {
    // "drop off the keys", "drop by the bank": a verb of another meaning destroys nothing.
    if list == "guard.destroy_heads", startsWithAny(head, "guard.destroy_heads_not") { return false }
    return SkillWords.list(list).contains { word in
      guard head.hasPrefix(word) else { return false }
      guard word.first?.isASCII == true, let next = head.dropFirst(word.count).first else { return true }
      return !next.isLetter
    }
  }
}
