/// One message of a chat exchange.
public struct ChatMessage: Sendable, Hashable, Codable {
  /// Who wrote the message.
  public enum Role: String, Sendable, Hashable, Codable {
    /// Instructions for the model.
    case system
    /// The user (or the agent speaking for the user).
    case user
    /// The model.
    case assistant
  }

  /// Who wrote the message.
  public var role: Role
  /// The text.
  public var content: String

  /// Creates a message.
  public init(role: Role, content: String) {
    self.role = role
    self.content = content
  }

  /// A system message.
  public static func system(_ content: String) -> ChatMessage { ChatMessage(role: .system, content: content) }
  /// A user message.
  public static func user(_ content: String) -> ChatMessage { ChatMessage(role: .user, content: content) }
  /// An assistant message.
  public static func assistant(_ content: String) -> ChatMessage {
    ChatMessage(role: .assistant, content: content)
  }
}

/// A chat-completion model: the planner's last-resort router.
public protocol LanguageModel: Sendable {
  /// The model's reply to `messages`.
  func complete(messages: [ChatMessage]) async throws -> String
}

/// Errors of the language-model client.
public enum LanguageModelError: Error, Sendable, Hashable {
  /// Plain http to a host that is not loopback, without `allowInsecureRemote`.
  case insecureEndpoint(host: String)
  /// The base URL cannot be used (no scheme or host, or not http/https).
  case invalidBaseURL(String)
  /// The model name is empty.
  case emptyModelName
  /// The request took longer than the configured timeout.
  case timedOut(seconds: Double)
  /// The connection failed; `reason` is the transport's description.
  case transport(reason: String)
  /// The server answered with a non-2xx status.
  case httpStatus(code: Int, body: String)
  /// The body was not a chat completion with at least one message.
  case malformedResponse(reason: String)
}
