import Engram
import EngramAgent
import EngramCore
import EngramHTTP
import Foundation

/// The chat part of the web API: each browser session (the `engram_chat` cookie) talks to its
/// own ``Agent`` (the same agent and state machine as `engram chat`). A turn's progress comes
/// back as server-sent events on the response to `POST /api/chat/send` (or `.../confirm`):
/// `state` at each phase, `partial` with the reply so far as it streams in, then one `done`
/// with the state the turn ended in (a reply, a failure, or an action waiting for Confirm).
enum WebChatAPI {
  /// The browser session a request belongs to, and whether it is new (then set as a cookie).
  struct Session {
    var id: String
    var isNew: Bool

    /// The `Set-Cookie` header for a new session.
    var cookieHeader: [(name: String, value: String)] {
      isNew ? [("Set-Cookie", "\(WebAPI.chatCookie)=\(id); Path=/; HttpOnly; SameSite=Strict")] : []
    }
  }

  /// The session named by the request's cookie (64 hex digits), or a new one.
  static func session(of request: HTTPRequest) -> Session {
    for pair in (request.header("cookie") ?? "").split(separator: ";") {
      let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
      if parts.count == 2, parts[0] == WebAPI.chatCookie, parts[1].count == 64,
        parts[1].allSatisfy(\.isHexDigit)
      {
        return Session(id: parts[1], isNew: false)
      }
    }
    return Session(id: StreamableHTTPHandler.newSessionID(), isNew: true)
  }

  /// `GET /api/chat`: the conversation's state (a reloaded page shows a waiting action).
  static func current(_ request: HTTPRequest, scope: WebScope) async -> HTTPResponse {
    let session = session(of: request)
    let chats = scope.chats
    let state = await MainActor.run { chats.existingAgent(for: session.id)?.state ?? .idle }
    var response = WebApp.json(200, stateJSON(state))
    response.headers += session.cookieHeader
    return response
  }

  /// `POST /api/chat/send {"text": ...}`: runs one turn, streaming its events.
  static func send(_ request: HTTPRequest, scope: WebScope) async throws -> HTTPResponse {
    let body: ChatSendBody = try WebAPI.body(request)
    guard let text = body.text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    else { throw WebAPI.Failure(400, "'text' is blank; say something first") }
    let session = session(of: request)
    let agent = try await agent(for: session, scope: scope)
    let busy = await MainActor.run { agent.state.isRunning }
    if busy { throw WebAPI.Failure(409, "still working on the previous request") }
    return stream(session: session, agent: agent) { agent in
      do throws(AgentError) { return .success(try await agent.send(text)) } catch { return .failure(error) }
    }
  }

  /// `POST /api/chat/confirm`: runs the action waiting for confirmation, streaming its events.
  static func confirm(_ request: HTTPRequest, scope: WebScope) async throws -> HTTPResponse {
    let session = session(of: request)
    let chats = scope.chats
    let agent = await MainActor.run { chats.existingAgent(for: session.id) }
    guard let agent, await MainActor.run(body: { Self.isWaiting(agent.state) }) else {
      throw WebAPI.Failure(409, "nothing is waiting for confirmation")
    }
    return stream(session: session, agent: agent) { agent in
      do throws(AgentError) { return .success(try await agent.confirm()) } catch { return .failure(error) }
    }
  }

  /// `POST /api/chat/cancel`: declines the waiting action or stops the running turn.
  static func cancel(_ request: HTTPRequest, scope: WebScope) async throws -> HTTPResponse {
    let session = session(of: request)
    let chats = scope.chats
    let agent = await MainActor.run { chats.existingAgent(for: session.id) }
    guard let agent else { throw WebAPI.Failure(409, "nothing is waiting or running") }
    let state = await Task { @MainActor in
      await agent.cancel() ? agent.state : nil
    }.value
    guard let state else { throw WebAPI.Failure(409, "nothing is waiting or running") }
    return WebApp.json(200, stateJSON(state))
  }

  private static func agent(for session: Session, scope: WebScope) async throws -> Agent {
    let chats = scope.chats
    return try await chats.agent(for: session.id)
  }

  @MainActor private static func isWaiting(_ state: AgentState) -> Bool {
    if case .waitingForConfirmation = state { return true }
    return false
  }

  private enum Event: Sendable {
    case state(AgentState)
    case partial(String)
    case done(Result<AgentState, AgentError>)
  }

  /// An event stream of one agent call: its states and partial text as they come, then `done`.
  private static func stream(
    session: Session, agent: Agent,
    _ work: @escaping @MainActor @Sendable (Agent) async -> Result<AgentState, AgentError>
  ) -> HTTPResponse {
    HTTPResponse(
      status: 200,
      headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")] + session.cookieHeader,
      body: .stream { writer in
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        Task { @MainActor in
          let states = agent.stateUpdates()
          let partials = agent.streamingTextUpdates()
          let forwardStates = Task { @MainActor in
            for await state in states { continuation.yield(.state(state)) }
          }
          let forwardPartials = Task { @MainActor in
            for await text in partials where !text.isEmpty { continuation.yield(.partial(text)) }
          }
          let result = await work(agent)
          forwardStates.cancel()
          forwardPartials.cancel()
          continuation.yield(.done(result))
          continuation.finish()
        }
        // Written off the main actor: a slow browser never holds up the agents.
        var lastPartial = ""
        for await event in events {
          switch event {
          case .state(let state):
            guard state.isRunning else { continue }
            writer.event("state", data: stateJSON(state).jsonText)
          case .partial(let text):
            guard text != lastPartial else { continue }
            lastPartial = text
            writer.event("partial", data: (["text": .string(text)] as JSONValue).jsonText)
          case .done(.success(let state)):
            writer.event("done", data: stateJSON(state).jsonText)
          case .done(.failure(let error)):
            writer.event(
              "done",
              data: (["phase": "error", "error": .string(ChatSession.describe(error))] as JSONValue).jsonText)
          }
        }
      })
  }

  /// The agent's state as the page draws it: `phase`, a `label` while it works, the `reply`
  /// or `error` sentence when a turn ended, and the `pending` action waiting for Confirm.
  static func stateJSON(_ state: AgentState) -> JSONValue {
    var object: [String: JSONValue] = [:]
    switch state {
    case .idle: object["phase"] = "idle"
    case .retrieving: object["phase"] = "retrieving"
    case .planning: object["phase"] = "planning"
    case .executing(let skillID, let step, let total):
      object["phase"] = "executing"
      object["skill"] = .string(skillID)
      object["step"] = .int(step)
      object["total"] = .int(total)
    case .waitingForConfirmation(let action):
      object["phase"] = "waiting"
      object["pending"] = [
        "id": .int(Int(action.id)), "skill": .string(action.skillID),
        "text": .string(action.confirmationText),
      ]
    case .finished(let reply):
      object["phase"] = "finished"
      object["reply"] = .string(reply.text)
      object["route"] = .string(reply.route.rawValue)
    case .failed(let failure):
      object["phase"] = "failed"
      object["error"] = .string(failure.message)
    }
    if let label = ChatRendering.statusLabel(for: state) { object["label"] = .string(label) }
    return .object(object)
  }
}
