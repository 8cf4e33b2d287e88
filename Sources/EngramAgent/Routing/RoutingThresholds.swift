/// Every threshold a routing decision uses, in one place, with where each was chosen.
///
/// None of them was chosen on a frozen evaluation split: the intent thresholds come from
/// `engram-bench agent --cross-validate` on the intent model's own training corpus, the
/// similarity ones from the built-in skills' sample phrases.
public struct RoutingThresholds: Sendable, Hashable {
  /// The cosine a semantic match must exceed (similarity stage).
  public var semantic: Float
  /// The intent probability from which the model's choice is taken as sure; below it a
  /// language model, when there is one, is asked instead. On the training corpus the model
  /// is right 0.93 of the time above 0.45, for 92% of requests.
  public var intent: Double
  /// The intent probability (weighed by the share of the request's words the model knows) a
  /// destructive skill needs before the model may pick it at all: the skill must be clearly
  /// more likely than every other label together (odds of 3 to 2), never below `intent`.
  public var destructiveIntent: Double
  /// The share of a text's word pieces the embedder must know before similarity may decide.
  public var minimumKnownFraction: Double
  /// While the agent waits for an argument it asked for, the intent probability from which
  /// the user's line is read as a new request for another skill rather than as the answer.
  public var newRequestWhileAsking: Double
  /// The intent probability each part of a compound request needs before the request is
  /// planned as several steps (below it, the request is one step, routed whole).
  public var compoundPart: Double
  /// The intent probability of a write (remember, create) below which a word of its inverse
  /// in the request (forget, cancel, "do you remember") makes the turn ask which is meant
  /// instead of writing (`InverseGuard.doubt`). Set at 0.9 (the model sure nine times in
  /// ten), not fitted: a question costs one more line, a wrong write costs a memory.
  public var inverseDoubt: Double
  /// The intent probability from which a part after a join that opens a new request ("then",
  /// 然后) takes the model's most probable skill when the model named none (a split between
  /// two cancels, an unsure sum). Chosen on the compound development sets, never a frozen one.
  public var joinedPart: Double

  /// Creates thresholds; the defaults are the calibrated ones.
  public init(
    semantic: Float = 0.5, intent: Double = 0.45, destructiveIntent: Double = 0.6,
    minimumKnownFraction: Double = 0.7, newRequestWhileAsking: Double = 0.8, compoundPart: Double = 0.45,
    inverseDoubt: Double = 0.9, joinedPart: Double = 0.4
  ) {
    self.semantic = semantic
    self.intent = intent
    self.destructiveIntent = max(intent, destructiveIntent)
    self.minimumKnownFraction = minimumKnownFraction
    self.newRequestWhileAsking = newRequestWhileAsking
    self.compoundPart = compoundPart
    self.inverseDoubt = inverseDoubt
    self.joinedPart = joinedPart
  }

  /// The calibrated thresholds every front end uses.
  public static let calibrated = RoutingThresholds()
}
