import EngramCore
import Synchronization

/// A skill the router considered, with its score.
public struct RouteCandidate: Sendable, Hashable {
  /// The skill id.
  public var skillID: String
  /// Rule score (2 per matched sample phrase, +1 when arguments were extracted) or cosine.
  public var score: Double
  /// Arguments the skill extracted from the text.
  public var arguments: SkillArguments
}

/// The router's choice for one request.
public struct RouteDecision: Sendable, Hashable {
  /// Which stage decided.
  public enum Method: String, Sendable, Hashable {
    /// A high-precision pattern (an arithmetic expression, an explicit "remind me to … at …"),
    /// or the rules of a skill the intent model does not know, picked a single best skill.
    case rules
    /// The intent model decided (a skill, or no skill at all).
    case intent
    /// Embedding similarity picked the skill (the intent model was unsure).
    case semantic
    /// Rules tied and similarity could not separate them; the earliest-registered skill won.
    case tieBreak
  }

  /// The chosen skill id, or nil when the request is for no skill (small talk, thanks, a
  /// question answered from memory, something no skill does).
  public var skillID: String?
  /// The kind of no-skill request the intent model recognised (small talk, a retraction),
  /// when it decided one; `skillID` is then nil.
  public var conversation: ConversationIntent?
  /// Arguments extracted by the chosen skill's rules (not yet validated).
  public var arguments: SkillArguments
  /// How the choice was made.
  public var method: Method
  /// The winning score: 1 for a high-precision pattern, the rule score for other rules, the
  /// intent model's probability, or the cosine.
  public var score: Double
  /// Whether the deciding stage was sure: false when the intent model's probability is
  /// below the router's `intentThreshold`, or its most probable skill was a destructive one
  /// below `destructiveIntentThreshold` (passed over for the next label), and no other stage
  /// decided (a language model, when there is one, should be asked instead).
  public var isConfident: Bool
  /// The intent model's prediction, when it ran.
  public var intent: IntentPrediction?
  /// The rule candidates, best first (empty when rules found nothing).
  public var ruleCandidates: [RouteCandidate]

  /// Creates a decision.
  public init(
    skillID: String?, arguments: SkillArguments = SkillArguments(), method: Method, score: Double,
    isConfident: Bool = true, intent: IntentPrediction? = nil, ruleCandidates: [RouteCandidate] = [],
    conversation: ConversationIntent? = nil
  ) {
    self.skillID = skillID
    self.conversation = conversation
    self.arguments = arguments
    self.method = method
    self.score = score
    self.isConfident = isConfident
    self.intent = intent
    self.ruleCandidates = ruleCandidates
  }
}

/// Chooses a skill for a request, in stages: high-precision patterns; the rules of skills
/// the intent model does not know (an application's own); the intent model (a skill or no
/// skill); embedding similarity among the skills the model does not know, when the model is
/// unsure and the text is mostly words the embedder knows. Nil means "nothing decided" (ask
/// the language model).
public final class SkillRouter: Sendable {
  private let registry: SkillRegistry
  private let embedding: (any PhraseEmbedding)?
  private let classifier: IntentClassifier?
  /// Every threshold the stages use (`RoutingThresholds.calibrated` by default).
  public let thresholds: RoutingThresholds
  /// The cosine a semantic match must exceed.
  public var semanticThreshold: Float { thresholds.semantic }
  /// The intent probability from which the model's choice is taken as sure.
  public var intentThreshold: Double { thresholds.intent }
  /// The intent probability a destructive skill (`Skill.isDestructive`) needs before the
  /// model may pick it at all.
  public var destructiveIntentThreshold: Double { thresholds.destructiveIntent }
  /// The share of a text's word pieces the embedder must know before similarity may decide.
  public var minimumKnownFraction: Double { thresholds.minimumKnownFraction }
  private let index = Mutex<[String: [[Float]]]>([:])

  /// Creates a router over `registry`.
  ///
  /// - Parameters:
  ///   - registry: the skills it chooses among.
  ///   - embedding: for the semantic stage; without it the stage is skipped.
  ///   - classifier: the intent model; `IntentCorpus.classifier` (trained on the built-in
  ///     corpus) by default, nil for rules and similarity alone.
  ///   - thresholds: every threshold of the stages (see `RoutingThresholds`).
  public init(
    registry: SkillRegistry, embedding: (any PhraseEmbedding)? = nil,
    classifier: IntentClassifier? = IntentCorpus.classifier, thresholds: RoutingThresholds
  ) {
    self.registry = registry
    self.embedding = embedding
    self.classifier = classifier
    self.thresholds = thresholds
  }

  /// Creates a router over `registry` with the calibrated thresholds, any of them replaced.
  ///
  /// - Parameters:
  ///   - registry: the skills it chooses among.
  ///   - embedding: for the semantic stage; without it the stage is skipped.
  ///   - semanticThreshold: replaces `RoutingThresholds.semantic`.
  ///   - classifier: the intent model; `IntentCorpus.classifier` by default, nil for rules
  ///     and similarity alone.
  ///   - intentThreshold: replaces `RoutingThresholds.intent`.
  ///   - destructiveIntentThreshold: replaces `RoutingThresholds.destructiveIntent`.
  ///   - minimumKnownFraction: replaces `RoutingThresholds.minimumKnownFraction`.
  public convenience init(
    registry: SkillRegistry, embedding: (any PhraseEmbedding)? = nil, semanticThreshold: Float? = nil,
    classifier: IntentClassifier? = IntentCorpus.classifier, intentThreshold: Double? = nil,
    destructiveIntentThreshold: Double? = nil, minimumKnownFraction: Double? = nil
  ) {
    let calibrated = RoutingThresholds.calibrated
    var thresholds = RoutingThresholds(
      semantic: semanticThreshold ?? calibrated.semantic, intent: intentThreshold ?? calibrated.intent,
      destructiveIntent: destructiveIntentThreshold ?? calibrated.destructiveIntent,
      minimumKnownFraction: minimumKnownFraction ?? calibrated.minimumKnownFraction)
    thresholds.newRequestWhileAsking = calibrated.newRequestWhileAsking
    thresholds.compoundPart = calibrated.compoundPart
    self.init(registry: registry, embedding: embedding, classifier: classifier, thresholds: thresholds)
  }

  /// The enabled skill `id` of `scenario`, or nil.
  public func registeredSkill(id: String, scenario: SkillScenario = .all) -> (any Skill)? {
    registry.skills(in: scenario).first { $0.id == id }
  }

  /// Whether skill `id` is registered but disabled.
  public func isDisabled(id: String) -> Bool {
    registry.skill(id: id) != nil && !registry.isEnabled(id: id)
  }

  /// The intent model's prediction for `text`, or nil without a model.
  public func intent(of text: String) -> IntentPrediction? { classifier?.predict(text) }

  /// Whether `text` retracts the exchange ("cancel", "never mind", 算了): a reply to the
  /// agent's own question is read as a confirmation reply is, the plainest retractions by rule
  /// (`ConversationIntent.isPlainRetraction`, with or without a model), and anything else by the intent
  /// model's `ConversationIntent.cancellation` when it is sure (at least `intentThreshold`).
  public func isRetraction(_ text: String) -> Bool {
    if ConversationIntent.isPlainRetraction(text) { return true }
    guard let classifier else { return false }
    return ConversationIntent.predicted(by: classifier.predict(text), threshold: intentThreshold)
      == .cancellation
  }

  /// The skills the intent model has a label for: their own phrase rules are not used.
  private func isModelled(_ skill: any Skill) -> Bool {
    classifier?.labels.contains(skill.id) ?? false
  }

  /// Scores every enabled phrase-ruled skill of `scenario` (`PhraseRuledSkill`) that the
  /// intent model does not know and whose `canHandle` accepts `text`, best first.
  ///
  /// Ties keep registration order, so the first candidate is the deterministic winner.
  /// - Complexity: O(skills × sample phrases × phrase length).
  public func ruleCandidates(for text: String, clock: AgentClock, scenario: SkillScenario = .all)
    -> [RouteCandidate]
  {
    let textTokens = Set(Tokenizer.routing.terms(text))
    var candidates: [RouteCandidate] = []
    for case let skill as any PhraseRuledSkill in registry.skills(in: scenario)
    where !isModelled(skill) && skill.canHandle(text) {
      let arguments = skill.extractArguments(from: text, clock: clock)
      var score = 0.0
      for phrase in skill.samplePhrases where Tokenizer.routing.phrase(phrase, matches: textTokens) {
        score += 2
      }
      if !arguments.isEmpty { score += 1 }
      candidates.append(RouteCandidate(skillID: skill.id, score: score, arguments: arguments))
    }
    // A stable sort keeps registration order among equal scores.
    return candidates.enumerated().sorted { lhs, rhs in
      lhs.element.score != rhs.element.score ? lhs.element.score > rhs.element.score : lhs.offset < rhs.offset
    }.map(\.element)
  }

  /// The first enabled skill of `scenario` whose high-precision pattern claims `text`.
  public func claimingSkill(for text: String, clock: AgentClock, scenario: SkillScenario = .all) -> (
    any Skill
  )? {
    registry.skills(in: scenario).first {
      ($0 as? any PatternClaimingSkill)?.claims(text, clock: clock) == true
    }
  }

  /// What the stages of one routing share: the request, and what earlier stages found.
  public struct RoutingState: Sendable {
    /// The request.
    public var text: String
    /// The clock dates resolve against.
    public var clock: AgentClock
    /// The skills that may be chosen.
    public var scenario: SkillScenario
    /// The rule candidates of skills the intent model does not know, best first.
    public var candidates: [RouteCandidate]
    /// The intent model's choice when it was unsure (a later stage may still decide).
    public var unsureModelChoice: RouteDecision?
  }

  /// The stages `route` runs, in order: each returns a decision, or nil to let the next
  /// stage decide.
  public enum Stage: String, Sendable, CaseIterable {
    /// A skill's high-precision pattern (an arithmetic expression, an explicit "remind me to
    /// … at …").
    case explicitPattern
    /// One best rule candidate among the skills the intent model does not know (an
    /// application's own).
    case applicationRules
    /// The intent model (a skill or no skill), when it is sure.
    case intentModel
    /// Embedding similarity among the tied rule candidates, or the skills the model does
    /// not know, when the text is mostly words the embedder knows.
    case similarity
    /// What is left: the model's unsure choice, else the first tied rule candidate.
    case fallback
  }

  /// The stages of the full router.
  public static let stages = Stage.allCases
  /// The stages of the rules-only baseline (`routeByRules`): patterns and rules, ties
  /// broken by registration order.
  public static let ruleStages: [Stage] = [.explicitPattern, .applicationRules, .fallback]

  /// The rule stages alone: a high-precision pattern, else the best rule candidate (ties
  /// broken by registration order), else nil.
  public func routeByRules(_ text: String, clock: AgentClock, scenario: SkillScenario = .all)
    -> RouteDecision?
  {
    var state = RoutingState(
      text: text, clock: clock, scenario: scenario, candidates: [], unsureModelChoice: nil)
    for stage in Self.ruleStages {
      if stage == .applicationRules {
        state.candidates = ruleCandidates(for: text, clock: clock, scenario: scenario)
      }
      // Synchronous stages only: the rule stages never embed.
      if let decision = decideByRules(stage, &state, tiesAllowed: true) { return decision }
    }
    return nil
  }

  /// Routes `text` through the stages (see the type's summary and `Stage`).
  /// - Throws: `RouterError` or the embedding's error.
  public func route(_ text: String, clock: AgentClock, scenario: SkillScenario = .all) async throws
    -> RouteDecision?
  {
    var state = RoutingState(
      text: text, clock: clock, scenario: scenario, candidates: [], unsureModelChoice: nil)
    for stage in Self.stages {
      // The rule candidates only once a high-precision pattern has not taken the request.
      if stage == .applicationRules {
        state.candidates = ruleCandidates(for: text, clock: clock, scenario: scenario)
      }
      if let decision = try await decide(stage, &state) {
        return asReminderIfAlarm(decision, text: text, clock: clock, scenario: scenario) ?? decision
      }
    }
    return nil
  }

  /// The reminder's skill of the same kind for a calendar decision about an alarm ("set an
  /// alarm for 6", "wake me up at 5", 闹钟): an alarm is a reminder that rings, set, moved,
  /// listed and cancelled as one; the intent model's corpus has almost no alarms, and lines
  /// added for them moved unrelated requests. Not when the request names an event ("the fire
  /// alarm drill meeting"). Nil otherwise.
  func asReminderIfAlarm(
    _ decision: RouteDecision, text: String, clock: AgentClock, scenario: SkillScenario
  ) -> RouteDecision? {
    let lower = text.lowercased()
    guard let chosen = decision.skillID, chosen.hasPrefix("calendar."),
      ConditionReader.containsAny(lower, "route.alarm_words"),
      !ConditionReader.containsAny(lower, "guard.event_words"),
      let skill = registeredSkill(id: "reminder." + chosen.dropFirst("calendar.".count), scenario: scenario)
    else { return nil }
    var reading = decision
    reading.skillID = skill.id
    reading.arguments = skill.extractArguments(from: text, clock: clock)
    return reading
  }

  /// One stage's decision, or nil.
  /// - Throws: `RouterError` or the embedding's error (similarity only).
  public func decide(_ stage: Stage, _ state: inout RoutingState) async throws -> RouteDecision? {
    switch stage {
    case .explicitPattern, .applicationRules, .fallback:
      return decideByRules(stage, &state, tiesAllowed: false)
    case .intentModel:
      return decideByModel(&state)
    case .similarity:
      return try await decideBySimilarity(state)
    }
  }

  /// The synchronous stages. With `tiesAllowed` (the rules-only baseline) the best of tied
  /// rule candidates wins at once, by registration order.
  private func decideByRules(_ stage: Stage, _ state: inout RoutingState, tiesAllowed: Bool)
    -> RouteDecision?
  {
    let (text, clock, candidates) = (state.text, state.clock, state.candidates)
    switch stage {
    case .explicitPattern:
      guard let skill = claimingSkill(for: text, clock: clock, scenario: state.scenario) else { return nil }
      return RouteDecision(
        skillID: skill.id, arguments: skill.extractArguments(from: text, clock: clock), method: .rules,
        score: 1)
    case .applicationRules:
      guard let best = candidates.first else { return nil }
      let tied = candidates.count > 1 && candidates[1].score == best.score
      if tied && !tiesAllowed { return nil }
      return RouteDecision(
        skillID: best.skillID, arguments: best.arguments, method: tied ? .tieBreak : .rules,
        score: best.score,
        ruleCandidates: candidates)
    case .fallback:
      if let choice = state.unsureModelChoice { return choice }
      guard let best = candidates.first else { return nil }
      return RouteDecision(
        skillID: best.skillID, arguments: best.arguments, method: .tieBreak, score: best.score,
        ruleCandidates: candidates)
    case .intentModel, .similarity:
      return nil
    }
  }

  /// The intent model, when no rule candidate competes: its most probable label the
  /// scenario offers (a disabled skill cannot be chosen), or a label for no skill (`none`,
  /// small talk, a retraction: `ConversationIntent`); a destructive skill only when the
  /// model is clearly sure of it, else the next label, and the decision is unsure. An unsure
  /// decision is kept for the fallback stage.
  private func decideByModel(_ state: inout RoutingState) -> RouteDecision? {
    guard let classifier, state.candidates.isEmpty else { return nil }
    let (text, clock) = (state.text, state.clock)
    let offered = registry.skills(in: state.scenario)
    let prediction = classifier.predict(text)
    var passedOver = false
    guard
      let best = prediction.ranked.first(where: { label, probability in
        guard label != IntentClassifier.noneLabel, ConversationIntent(label: label) == nil else {
          return true
        }
        guard let skill = offered.first(where: { $0.id == label }) else { return false }
        // Only the part of the request the model understands counts towards destroying.
        if skill.isDestructive && probability * prediction.knownWordFraction < destructiveIntentThreshold {
          passedOver = true
          return false
        }
        return true
      })
    else { return nil }
    let skill = offered.first { $0.id == best.label }
    let decision = RouteDecision(
      skillID: skill?.id, arguments: skill?.extractArguments(from: text, clock: clock) ?? SkillArguments(),
      method: .intent, score: best.probability,
      isConfident: !passedOver && best.probability >= intentThreshold, intent: prediction,
      ruleCandidates: state.candidates, conversation: ConversationIntent(label: best.label))
    if decision.isConfident { return decision }
    state.unsureModelChoice = decision
    return nil
  }

  /// Similarity only chooses among the tied rule candidates or the skills the intent model
  /// does not know: measured on the training corpus, it is right less often than the model's
  /// own unsure guess for the skills the model does know (`engram-bench agent
  /// --cross-validate`).
  private func decideBySimilarity(_ state: RoutingState) async throws -> RouteDecision? {
    let candidates = state.candidates
    let tiedIDs = candidates.filter { $0.score == candidates.first?.score }.map(\.skillID)
    let pool =
      tiedIDs.isEmpty ? registry.skills(in: state.scenario).filter { !isModelled($0) }.map(\.id) : tiedIDs
    guard !pool.isEmpty, try await knownFraction(state.text) >= minimumKnownFraction,
      let (id, cosine) = try await bestSemanticMatch(for: state.text, among: pool),
      cosine > semanticThreshold,
      let skill = registry.skill(id: id)
    else { return nil }
    return RouteDecision(
      skillID: id, arguments: skill.extractArguments(from: state.text, clock: state.clock), method: .semantic,
      score: Double(cosine), intent: state.unsureModelChoice?.intent, ruleCandidates: candidates)
  }

  /// The share of `text`'s word pieces the embedding knows (1 when it cannot tell).
  private func knownFraction(_ text: String) async throws -> Double {
    guard let embedding else { return 0 }
    return embedding.knownFraction(of: text) ?? 1
  }

  /// Cosine similarity of `text` to each skill in `pool` (the best over its sample phrases,
  /// for a `PhraseRuledSkill`, and its description), highest first; empty without an embedding.
  /// - Throws: `RouterError` or the embedding's error.
  public func semanticScores(for text: String, among pool: [String]) async throws -> [(String, Float)] {
    guard let embedding else { return [] }
    try await prepareIndex()
    let vectors = try await embedding.embed([text])
    guard vectors.count == 1 else {
      throw RouterError.embeddingCountMismatch(expected: 1, got: vectors.count)
    }
    guard let query = Self.normalized(vectors[0]) else { throw RouterError.invalidEmbedding(index: 0) }
    let snapshot = index.withLock { $0 }
    var scores: [(String, Float)] = []
    for id in pool {
      guard let rows = snapshot[id] else { continue }
      var best = -Float.infinity
      for row in rows {
        guard row.count == query.count else {
          throw RouterError.embeddingDimensionMismatch(expected: row.count, got: query.count)
        }
        var dot: Float = 0
        for position in 0..<row.count { dot += row[position] * query[position] }
        best = max(best, dot)
      }
      scores.append((id, best))
    }
    return scores.enumerated().sorted { lhs, rhs in
      lhs.element.1 != rhs.element.1 ? lhs.element.1 > rhs.element.1 : lhs.offset < rhs.offset
    }.map(\.element)
  }

  /// Embeds the sample phrases (of a `PhraseRuledSkill`) and the description of every
  /// registered skill not yet indexed.
  ///
  /// Called lazily by `route`; call it up front to pay the cost at start-up.
  /// - Throws: `RouterError` or the embedding's error; the index is unchanged on failure.
  public func prepareIndex() async throws {
    guard let embedding else { return }
    let known = index.withLock { Set($0.keys) }
    let missing = registry.allSkills.filter { !known.contains($0.id) }
    guard !missing.isEmpty else { return }
    var texts: [String] = []
    var owners: [(String, Range<Int>)] = []
    for skill in missing {
      let start = texts.count
      texts.append(contentsOf: (skill as? any PhraseRuledSkill)?.samplePhrases ?? [])
      texts.append(skill.description)
      owners.append((skill.id, start..<texts.count))
    }
    let vectors = try await embedding.embed(texts)
    guard vectors.count == texts.count else {
      throw RouterError.embeddingCountMismatch(expected: texts.count, got: vectors.count)
    }
    var normalized: [[Float]] = []
    normalized.reserveCapacity(vectors.count)
    for (position, vector) in vectors.enumerated() {
      guard let unit = Self.normalized(vector) else { throw RouterError.invalidEmbedding(index: position) }
      if let first = normalized.first, first.count != unit.count {
        throw RouterError.embeddingDimensionMismatch(expected: first.count, got: unit.count)
      }
      normalized.append(unit)
    }
    index.withLock { index in
      for (id, range) in owners { index[id] = Array(normalized[range]) }
    }
  }

  private func bestSemanticMatch(for text: String, among pool: [String]) async throws -> (String, Float)? {
    try await semanticScores(for: text, among: pool).first
  }

  private static func normalized(_ vector: [Float]) -> [Float]? {
    guard !vector.isEmpty, vector.allSatisfy(\.isFinite) else { return nil }
    let norm = vector.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
    guard norm > 0, norm.isFinite else { return nil }
    return vector.map { $0 / norm }
  }
}
