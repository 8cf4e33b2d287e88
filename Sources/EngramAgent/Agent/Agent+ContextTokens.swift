import Engram

/// How many tokens a turn's prompt context counts, and who counted them.
public struct ContextTokenCount: Sendable, Hashable {
  /// Who counted.
  public enum Source: Sendable, Hashable {
    /// The language model's server (llama.cpp's `/tokenize`): the model's own tokens.
    case server
    /// `TokenEstimator` (no language model, or its server cannot tokenize).
    case estimate
  }

  /// The count.
  public var tokens: Int
  /// Who counted.
  public var source: Source

  /// Creates a count.
  public init(tokens: Int, source: Source) {
    self.tokens = tokens
    self.source = source
  }
}

extension Agent {
  /// What counts the model's tokens: the planner's model, when it can (an `OpenAIChatClient`)
  /// and `AgentConfiguration.countsTokensWithModel` asks for it.
  var tokenCounter: (any TokenCounter)? {
    guard configuration.countsTokensWithModel, !tokenizerFailed else { return nil }
    return planner?.model as? any TokenCounter
  }

  /// `context` within `budget` tokens as the language model's server counts them, trimmed in
  /// the engine's order (oldest recent turn, then the lowest-ranked item, then the last
  /// preference) while it is over; the count goes to `lastContextTokens`. Without a server
  /// that counts (no model, or one without `/tokenize`, noted once), the engine's estimate stands.
  /// - Throws: `CancellationError` only; a failed count falls back to the estimate.
  func fitted(_ context: TurnContext, budget: Int) async throws -> TurnContext {
    guard let counter = tokenCounter else {
      lastContextTokens = ContextTokenCount(tokens: context.tokenCount, source: .estimate)
      return context
    }
    var fitted = context
    do {
      var count = try await counter.countTokens(fitted.rendered)
      while count > budget, Self.trimOne(&fitted) {
        count = try await counter.countTokens(fitted.rendered)
      }
      lastContextTokens = ContextTokenCount(tokens: count, source: .server)
      return fitted
    } catch {
      try Task.checkCancellation()
      // Ollama and OpenAI have no /tokenize: estimate from now on rather than ask every turn.
      tokenizerFailed = true
      lastContextTokens = ContextTokenCount(tokens: context.tokenCount, source: .estimate)
      return context
    }
  }

  /// Takes one part out of `context` in the engine's trimming order; false when nothing is left.
  static func trimOne(_ context: inout TurnContext) -> Bool {
    if !context.recentTurns.isEmpty {
      context.recentTurns.removeFirst()
    } else if !context.hits.isEmpty {
      context.hits.removeLast()
    } else if !context.preferences.isEmpty {
      context.preferences.removeLast()
    } else {
      return false
    }
    context.omitted += 1
    context.tokenCount = TokenEstimator.estimate(context.rendered)
    return true
  }
}
