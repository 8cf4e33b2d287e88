import Engram
import EngramAgent
import EngramHTTP
import Foundation
import Synchronization

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

/// What the resolver made of a request: the scope it is served with (and what to call when
/// it has been served), or why it is not.
public enum ServeAdmission: Sendable {
  /// Served with `scope`; `release` is called once the response (a stream included) is done.
  case scope(WebScope, release: @Sendable () -> Void)
  /// The request names no user (401).
  case unauthorized
  /// The user is at a limit (503 with `Retry-After`).
  case busy(retryAfterSeconds: Int, message: String)
  /// The user's memory cannot be opened (500).
  case failed(message: String)
}

/// The one place `engram serve` decides which scope a request is served with: one resolver,
/// so a server of many users (a bearer token selecting the user, `--users`) replaces it
/// without touching the handlers.
public struct ServeContext: Sendable {
  /// The scope of a request.
  public var admit: @Sendable (HTTPRequest) async -> ServeAdmission
  /// Whether each request's bearer token selects its user.
  public var servesManyUsers: Bool

  /// Creates a context from a resolver.
  public init(servesManyUsers: Bool = false, admit: @escaping @Sendable (HTTPRequest) async -> ServeAdmission)
  {
    self.admit = admit
    self.servesManyUsers = servesManyUsers
  }

  /// Every request served with the same scope (one user, `--user` or the default).
  public static func single(_ scope: WebScope) -> ServeContext {
    ServeContext { _ in .scope(scope, release: {}) }
  }

  /// Each request's bearer token selects its user among `engines`; a user's scope (and its
  /// browser conversations) lives as long as the user's engine stays open.
  public static func users(
    _ engines: UserEngines, clock: AgentClock = .system(),
    planner: (@Sendable (SkillRegistry) throws -> Planner)? = nil
  ) -> ServeContext {
    let scopes = Mutex<[String: WebScope]>([:])
    return ServeContext(servesManyUsers: true) { request in
      guard let token = StreamableHTTPHandler.bearerToken(request.header("authorization")),
        let user = engines.user(forToken: token)
      else { return .unauthorized }
      do {
        let lease = try await engines.lease(user: user)
        let scope = scopes.withLock { scopes -> WebScope in
          // A user's engine closed and opened again gets a fresh scope.
          if let known = scopes[user], known.engine === lease.engine { return known }
          let fresh = WebScope(engine: lease.engine, clock: clock, planner: planner)
          scopes[user] = fresh
          return fresh
        }
        return .scope(scope, release: { lease.release() })
      } catch {
        switch UserEngineAdmission.refusal(error) {
        case .busy(let seconds, let message): return .busy(retryAfterSeconds: seconds, message: message)
        case .failed(let message): return .failed(message: message)
        case .admitted, .unauthorized: return .failed(message: "cannot open this user's memory")
        }
      }
    }
  }
}
