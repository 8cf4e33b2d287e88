import Foundation

/// A capability the agent can route a request to.
///
/// Kept small on purpose: an id, a description and a parameter schema for the router and
/// planner, argument extraction, `prepare` and one async `execute`. The intent model decides
/// when a built-in skill runs; a skill the intent corpus does not cover (an application's
/// own) adds phrase rules by conforming to `PhraseRuledSkill`, and a request so explicit that
/// no model is asked is claimed through `PatternClaimingSkill`. Skills never touch UI; they
/// get memory, preferences and the clock through `SkillContext`.
public protocol Skill: Sendable {
  /// The stable, unique id (`reminder.create`).
  var id: String { get }
  /// A short human-readable name.
  var displayName: String { get }
  /// Action, object and what it returns, for the planner's catalog.
  var description: String { get }
  /// The parameters `execute` reads.
  var inputSchema: SkillInputSchema { get }
  /// Whether the skill changes state (memory, reminders, ...). Such skills are never retried.
  var hasSideEffects: Bool { get }
  /// Whether the agent must ask the user before `execute`. Defaults to true.
  var requiresConfirmation: Bool { get }
  /// Whether the skill destroys what it acts on (forgets a memory, cancels an item): the
  /// router then asks more of the intent model before it picks it
  /// (`SkillRouter.destructiveIntentThreshold`). Defaults to false.
  var isDestructive: Bool { get }
  /// How long one attempt may run.
  var timeout: Duration { get }
  /// How many times a failed attempt is repeated (ignored when `hasSideEffects`).
  var retryCount: Int { get }
  /// The broad category (`memory`, `office`, `utility`).
  var category: String { get }
  /// Free tags for scenario sets.
  var tags: Set<String> { get }

  /// The arguments `text` states (a title, a date, a city), read once the skill is chosen;
  /// dates resolve against `clock`. Defaults to none.
  func extractArguments(from text: String, clock: AgentClock) -> SkillArguments
  /// Completes validated arguments from what is stored, before the agent asks for
  /// confirmation: finds the item a request means ("cancel the dentist reminder"), asks which
  /// one when several fit, or replies that nothing does. Defaults to `.ready(arguments)`.
  func prepare(arguments: SkillArguments, context: SkillContext) async throws -> SkillPreparation
  /// The text the user confirms, showing exactly what will be written.
  func confirmationText(arguments: SkillArguments, context: SkillContext) -> String
  /// Runs the skill with validated arguments.
  func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput
}

extension Skill {
  /// Side effects are assumed unless a skill says it is read-only.
  public var hasSideEffects: Bool { true }
  /// Confirmation is on by default; only read-only skills turn it off.
  public var requiresConfirmation: Bool { true }
  /// Nothing is destroyed by default.
  public var isDestructive: Bool { false }
  /// Thirty seconds per attempt: long enough for a skill whose work waits for a busy
  /// machine (a remember's embedding and write took over ten seconds on a 2-core machine
  /// running the whole test suite), short enough to stop one that hangs.
  public var timeout: Duration { .seconds(30) }
  /// No retries by default.
  public var retryCount: Int { 0 }
  /// The retries actually allowed: none for skills with side effects.
  public var effectiveRetryCount: Int { hasSideEffects ? 0 : max(0, retryCount) }
  /// No arguments read from the text by default.
  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments { SkillArguments() }
  /// Nothing to look up by default.
  public func prepare(arguments: SkillArguments, context: SkillContext) async throws -> SkillPreparation {
    .ready(arguments)
  }
  /// No tags by default.
  public var tags: Set<String> { [] }
  /// Uncategorised by default.
  public var category: String { "general" }

  /// A generic confirmation listing the arguments.
  public func confirmationText(arguments: SkillArguments, context: SkillContext) -> String {
    let rendered = arguments.names.map { "\($0)=\(arguments[$0]!)" }.joined(separator: ", ")
    switch context.language {
    case .chinese: return "确认执行「\(displayName)」（\(rendered)）？"
    case .english: return "Run \(displayName) (\(rendered))?"
    }
  }
}

/// What a skill made of its arguments in `Skill.prepare`.
public enum SkillPreparation: Sendable, Hashable {
  /// Go on (confirmation, then `execute`) with these arguments.
  case ready(SkillArguments)
  /// Ask the user `question`; their next line becomes the argument `parameter` (a parameter
  /// of the skill's schema) and the skill prepares again with `arguments` plus the answer.
  case ask(parameter: String, question: String, arguments: SkillArguments)
  /// End the step with this output: nothing is confirmed or executed ("no reminder matches").
  case reply(SkillOutput)
}

/// Phrase rules for a skill the intent corpus has no label for (an application's own): the
/// router's rules stage scores it by `canHandle` and `samplePhrases`, and the similarity
/// stage compares requests with its phrases. Built-in skills are decided by the intent model
/// and do not conform.
public protocol PhraseRuledSkill: Skill {
  /// Typical phrasings; rule scoring and the semantic index use them.
  var samplePhrases: [String] { get }
  /// Whether the rules stage should consider this skill for `text`.
  func canHandle(_ text: String) -> Bool
}

/// A skill with a high-precision pattern that takes a request before any model is asked
/// (an arithmetic expression, an explicit "remind me to … at …").
public protocol PatternClaimingSkill: Skill {
  /// Whether `text` is an unambiguous request for this skill.
  func claims(_ text: String, clock: AgentClock) -> Bool
}
