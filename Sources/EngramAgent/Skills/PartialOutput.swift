/// Where a skill or the planner reports the text of its reply while it is still being produced
/// (a language model's tokens, a long computation's progress), before the final output.
///
/// Reports are deltas: each `append` adds text after what was reported before; `reset` takes
/// back everything reported so far (for example when a model's reply turns out unusable and
/// is asked again). The final `SkillOutput` (or the agent's reply) stays the reference: partial
/// text is for display only and is never stored. The sink may be called from any thread.
public struct PartialOutput: Sendable {
  /// One report.
  public enum Update: Sendable, Hashable {
    /// Text that follows what was reported before.
    case append(String)
    /// Everything reported so far is withdrawn.
    case reset
  }

  private let sink: @Sendable (Update) -> Void

  /// A partial output that hands every update to `sink`.
  public init(_ sink: @escaping @Sendable (Update) -> Void) {
    self.sink = sink
  }

  /// A partial output that drops everything (the default where nobody listens).
  public static let discard = PartialOutput { _ in }

  /// Reports `delta`, the text produced since the last report; empty text is not reported.
  public func append(_ delta: String) {
    guard !delta.isEmpty else { return }
    sink(.append(delta))
  }

  /// Withdraws everything reported so far.
  public func reset() {
    sink(.reset)
  }
}
