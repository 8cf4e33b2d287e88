import EngramCore

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
///
/// `complete` is the one requirement; `stream` has a default that yields the whole reply as
/// one delta, so a model that cannot stream still works wherever streaming is asked for.
public protocol LanguageModel: Sendable {
  /// The model's reply to `messages`.
  func complete(messages: [ChatMessage]) async throws -> String

  /// The model's reply to `messages` as text deltas, in order, as the model produces them;
  /// their concatenation is the reply. The stream ends after the last delta, or throws the
  /// error that stopped it. Ending the iteration (or cancelling its task) stops the request;
  /// like every `AsyncThrowingStream`, a cancelled consumer's stream ends early without an
  /// error, so check `Task.isCancelled` before taking what arrived as the whole reply.
  func stream(messages: [ChatMessage]) -> AsyncThrowingStream<String, any Error>

  /// `stream(messages:)` with the reply held to `format` where the server can do so (a JSON
  /// schema the server's sampler keeps to, as llama.cpp's grammars do). The default ignores
  /// `format`: a model that cannot be held to one still answers, and its reply is checked as
  /// any other.
  func stream(messages: [ChatMessage], format: ReplyFormat?) -> AsyncThrowingStream<String, any Error>
}

/// A shape the language model's reply is asked to keep to: one JSON object valid against
/// `schema` (OpenAI's `response_format` of type `json_schema`, which llama.cpp's server turns
/// into a grammar and Ollama into its `format`).
public struct ReplyFormat: Sendable, Hashable {
  /// A short name of the shape (letters, digits, `_`, `-`).
  public var name: String
  /// The JSON Schema of the reply.
  public var schema: JSONValue

  /// Creates a format.
  public init(name: String, schema: JSONValue) {
    self.name = name
    self.schema = schema
  }
}

extension LanguageModel {
  /// The reply of `stream(messages:)`, `format` unused.
  public func stream(messages: [ChatMessage], format: ReplyFormat?) -> AsyncThrowingStream<String, any Error>
  {
    stream(messages: messages)
  }

  /// The whole reply of `complete` as one delta.
  public func stream(messages: [ChatMessage]) -> AsyncThrowingStream<String, any Error> {
    AsyncThrowingStream { continuation in
      let task = Task {
        do {
          continuation.yield(try await complete(messages: messages))
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  /// Streams the reply to `messages`, handing each delta to `partial`, and returns the whole reply.
  /// - Throws: the stream's error; `CancellationError` when the task is cancelled mid-stream.
  public func complete(messages: [ChatMessage], partial: PartialOutput) async throws -> String {
    var reply = ""
    for try await delta in stream(messages: messages) {
      reply += delta
      partial.append(delta)
    }
    // An AsyncThrowingStream ends quietly when its consumer is cancelled: that is not a reply.
    try Task.checkCancellation()
    return reply
  }
}

/// Counts tokens the way a model's own tokenizer does (llama.cpp's `/tokenize`), where the
/// estimate (`TokenEstimator`) is not good enough: the prompt context's budget and its display.
public protocol TokenCounter: Sendable {
  /// How many tokens the model makes of `text`.
  func countTokens(_ text: String) async throws -> Int
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
  /// The server sent an error object (`{"error": …}`) instead of a reply, or in the middle of a
  /// stream; `message` is its `error.message` (or the error value as text).
  case serverError(message: String)
  /// The streamed reply ended (the connection closed) before `data: [DONE]` or a finish reason;
  /// `received` is the text that had arrived.
  case incompleteStream(received: String)
}
