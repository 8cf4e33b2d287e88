import Engram
import EngramAgent
import EngramMCP
import Foundation

/// What one request of `engram serve` is served with: a user's engine and that user's browser
/// conversations. The API handlers are functions of a scope and a request, nothing else.
public final class WebScope: Sendable {
  /// The user's memory.
  public let engine: MemoryEngine
  /// The user's browser conversations (one agent and one pending action each).
  let chats: WebChats
  /// The clock agents and agenda reads use.
  let clock: AgentClock

  /// Creates a scope over `engine`, keeping at most `maximumChats` browser conversations;
  /// `planner` makes each conversation's language-model planner (nil: rules and skills only).
  public init(
    engine: MemoryEngine, clock: AgentClock = .system(), maximumChats: Int = WebChats.defaultMaximum,
    planner: (@Sendable (SkillRegistry) throws -> Planner)? = nil
  ) {
    self.engine = engine
    self.clock = clock
    chats = WebChats(engine: engine, clock: clock, maximum: maximumChats, planner: planner)
  }
}

/// The one place `engram serve` decides which scope a request is served with: one resolver,
/// so a server of many users replaces it (a bearer token selecting the user) without touching
/// the handlers.
public struct ServeContext: Sendable {
  /// The scope of an authorized request, or nil when the request names no user (401).
  public var scope: @Sendable (HTTPRequest) async -> WebScope?

  /// Creates a context from a resolver.
  public init(scope: @escaping @Sendable (HTTPRequest) async -> WebScope?) {
    self.scope = scope
  }

  /// Every request served with the same scope (one user, `--user` or the default).
  public static func single(_ scope: WebScope) -> ServeContext {
    ServeContext { _ in scope }
  }
}
