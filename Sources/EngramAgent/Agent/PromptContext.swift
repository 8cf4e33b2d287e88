import Engram

/// What one turn knows before it routes: the engine's memory context (pinned preferences,
/// retrieved memories fenced as data with ids and dates, recent turns), all preferences, and
/// the skill catalog, within a token budget.
public struct PromptContext: Sendable {
  /// The engine's context, trimmed to the budget left after the catalog.
  public var memory: MemoryContext
  /// The retrieved items as skills see them (memories keep their stored kind), best first.
  public var recalled: [RecalledMemory]
  /// Every preference by key.
  public var preferences: [String: String]
  /// The catalog of the skills on offer.
  public var catalog: String
  /// The whole budget (catalog included).
  public var budget: Int

  /// The context text the planner receives beside its catalog: fenced data, never instructions.
  public var rendered: String { memory.rendered }

  /// Estimated tokens of the catalog and the memory context together.
  public var tokenCount: Int { memory.tokenCount + TokenEstimator.estimate(catalog) }
}
