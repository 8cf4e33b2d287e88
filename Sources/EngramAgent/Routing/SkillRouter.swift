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
    /// Rule scoring picked a single best skill.
    case rules
    /// Embedding similarity picked the skill (no rule match, or a rule tie).
    case semantic
    /// Rules tied and similarity could not separate them; the earliest-registered skill won.
    case tieBreak
  }

  /// The chosen skill id.
  public var skillID: String
  /// Arguments extracted by the chosen skill's rules (not yet validated).
  public var arguments: SkillArguments
  /// How the choice was made.
  public var method: Method
  /// The winning score (rule score or cosine).
  public var score: Double
  /// The rule candidates, best first (empty when rules found nothing).
  public var ruleCandidates: [RouteCandidate]
}

/// Chooses a skill for a request: rules first, then semantic similarity; nil means
/// "ask the language model".
public final class SkillRouter: Sendable {
  private let registry: SkillRegistry
  private let embedding: (any PhraseEmbedding)?
  /// The cosine a semantic match must exceed.
  public let semanticThreshold: Float
  private let index = Mutex<[String: [[Float]]]>([:])

  /// Creates a router over `registry`; without `embedding` the semantic stage is skipped.
  public init(
    registry: SkillRegistry, embedding: (any PhraseEmbedding)? = nil, semanticThreshold: Float = 0.5
  ) {
    self.registry = registry
    self.embedding = embedding
    self.semanticThreshold = semanticThreshold
  }

  /// Scores every enabled skill of `scenario` whose `canHandle` accepts `text`, best first.
  ///
  /// Ties keep registration order, so the first candidate is the deterministic winner.
  /// - Complexity: O(skills × sample phrases × phrase length).
  public func ruleCandidates(for text: String, clock: AgentClock, scenario: SkillScenario = .all)
    -> [RouteCandidate]
  {
    let textTokens = Set(RoutingTokenizer.tokens(text))
    var candidates: [RouteCandidate] = []
    for skill in registry.skills(in: scenario) where skill.canHandle(text) {
      let arguments = skill.extractArguments(from: text, clock: clock)
      var score = 0.0
      for phrase in skill.samplePhrases where RoutingTokenizer.phrase(phrase, matches: textTokens) {
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

  /// The rule stage alone: the best candidate (ties broken by registration order), or nil.
  public func routeByRules(_ text: String, clock: AgentClock, scenario: SkillScenario = .all)
    -> RouteDecision?
  {
    let candidates = ruleCandidates(for: text, clock: clock, scenario: scenario)
    guard let best = candidates.first else { return nil }
    let tied = candidates.count > 1 && candidates[1].score == best.score
    return RouteDecision(
      skillID: best.skillID, arguments: best.arguments, method: tied ? .tieBreak : .rules, score: best.score,
      ruleCandidates: candidates)
  }

  /// Routes `text`: a unique rule winner; else the most similar skill above the threshold
  /// (among the tied skills when rules tied); else the rule tie-break; else nil.
  /// - Throws: `RouterError` or the embedding's error.
  public func route(_ text: String, clock: AgentClock, scenario: SkillScenario = .all) async throws
    -> RouteDecision?
  {
    let candidates = ruleCandidates(for: text, clock: clock, scenario: scenario)
    if let best = candidates.first, candidates.count == 1 || candidates[1].score < best.score {
      return RouteDecision(
        skillID: best.skillID, arguments: best.arguments, method: .rules, score: best.score,
        ruleCandidates: candidates)
    }
    let tiedIDs = candidates.filter { $0.score == candidates.first?.score }.map(\.skillID)
    let pool = tiedIDs.isEmpty ? registry.skills(in: scenario).map(\.id) : tiedIDs
    if let (id, cosine) = try await bestSemanticMatch(for: text, among: pool), cosine > semanticThreshold,
      let skill = registry.skill(id: id)
    {
      return RouteDecision(
        skillID: id, arguments: skill.extractArguments(from: text, clock: clock), method: .semantic,
        score: Double(cosine), ruleCandidates: candidates)
    }
    guard let best = candidates.first else { return nil }
    return RouteDecision(
      skillID: best.skillID, arguments: best.arguments, method: .tieBreak, score: best.score,
      ruleCandidates: candidates)
  }

  /// Cosine similarity of `text` to each skill in `pool` (the best over its sample phrases and
  /// description), highest first; empty without an embedding.
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

  /// Embeds the sample phrases and description of every registered skill not yet indexed.
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
      texts.append(contentsOf: skill.samplePhrases)
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
