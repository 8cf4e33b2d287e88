import EngramCore
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A `LanguageModel` speaking the OpenAI chat-completions protocol (also Ollama and llama.cpp).
public final class OpenAIChatClient: LanguageModel, TokenCounter {
  /// The configuration it was created with.
  public let configuration: LanguageModelConfiguration
  private let endpoint: URL
  private let apiKey: String?
  private let session: URLSession
  /// Wake-ups of the plain-HTTP exchanges' waits (tests check that waiting does not spin).
  let socketWakes = SocketWakeCounter()

  /// Creates a client; the API key is read once from `environment`.
  /// - Throws: `LanguageModelError` when the configuration is unusable (see `validatedEndpoint`).
  public init(
    configuration: LanguageModelConfiguration,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(LanguageModelError) {
    self.configuration = configuration
    self.endpoint = try configuration.validatedEndpoint()
    self.apiKey = configuration.apiKeyEnvironmentVariable.flatMap { environment[$0] }.flatMap {
      $0.isEmpty ? nil : $0
    }
    let sessionConfiguration = URLSessionConfiguration.ephemeral
    // Whole seconds, rounded up: the Linux session truncates fractions (see `send`).
    let seconds = max(1, Self.seconds(configuration.timeout).rounded(.up)) + 1
    sessionConfiguration.timeoutIntervalForRequest = seconds
    sessionConfiguration.timeoutIntervalForResource = seconds
    self.session = URLSession(configuration: sessionConfiguration)
  }

  deinit { session.invalidateAndCancel() }

  private struct RequestBody: Encodable {
    var model: String
    var messages: [ChatMessage]
    var stream: Bool
    var temperature: Double?
    var max_tokens: Int?
    var response_format: ResponseFormat?
  }

  /// OpenAI's `{"type": "json_schema", "json_schema": {"name", "schema"}}`.
  private struct ResponseFormat: Encodable {
    struct Schema: Encodable {
      var name: String
      var schema: JSONValue
    }
    var type = "json_schema"
    var json_schema: Schema
  }

  /// Whether the server refused a `response_format` once (HTTP 400): later requests of this
  /// client go without it, and their replies are checked as any other.
  let formatRefusal = FormatRefusal()

  /// A flag shared by the client and its streams' tasks.
  final class FormatRefusal: Sendable {
    private let refused = Mutex(false)
    /// Whether the server refused a format.
    var isSet: Bool { refused.withLock { $0 } }
    /// Records that it did.
    func set() { refused.withLock { $0 = true } }
  }

  private struct ResponseBody: Decodable {
    struct Choice: Decodable {
      struct Message: Decodable { var content: String? }
      var message: Message?
    }
    var choices: [Choice]
  }

  /// The POST request for `messages`, streamed or not.
  func request(for messages: [ChatMessage], stream: Bool, format: ReplyFormat? = nil) throws -> URLRequest {
    var request = URLRequest(url: endpoint)
    request.httpMethod = "POST"
    request.timeoutInterval = max(1, Self.seconds(configuration.timeout).rounded(.up)) + 1
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue(stream ? "text/event-stream" : "application/json", forHTTPHeaderField: "Accept")
    if let apiKey { request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
    let body = RequestBody(
      model: configuration.model, messages: messages, stream: stream, temperature: configuration.temperature,
      max_tokens: configuration.maxTokens,
      response_format: format.map { ResponseFormat(json_schema: .init(name: $0.name, schema: $0.schema)) })
    request.httpBody = try JSONEncoder().encode(body)
    return request
  }

  /// Sends `messages` (`"stream": false`) and returns the first choice's content.
  /// - Throws: `LanguageModelError` (`.timedOut`, `.transport`, `.httpStatus`, `.malformedResponse`,
  ///   `.serverError`).
  public func complete(messages: [ChatMessage]) async throws -> String {
    let request = try request(for: messages, stream: false)
    let (data, status) = try await send(request)
    guard (200..<300).contains(status) else {
      throw LanguageModelError.httpStatus(
        code: status, body: String(decoding: data.prefix(2048), as: UTF8.self))
    }
    return try Self.completionContent(data)
  }

  /// How many tokens the server's model makes of `text`, from llama.cpp's `/tokenize`
  /// (`{"content": text}` answered by `{"tokens": [...]}`), within the configured timeout but
  /// at most 10 seconds (a count is not worth a long wait). Servers without the endpoint
  /// (Ollama, OpenAI) answer 404: `.httpStatus`.
  /// - Throws: `LanguageModelError` (`.httpStatus`, `.malformedResponse`, `.timedOut`, `.transport`).
  public func countTokens(_ text: String) async throws -> Int {
    var request = URLRequest(url: try configuration.tokenizeEndpoint())
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    if let apiKey { request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
    request.httpBody = try JSONEncoder().encode(["content": text])
    let (data, status) = try await send(request, limit: min(configuration.timeout, .seconds(10)))
    guard (200..<300).contains(status) else {
      throw LanguageModelError.httpStatus(
        code: status, body: String(decoding: data.prefix(2048), as: UTF8.self))
    }
    struct Tokens: Decodable { var tokens: [Int] }
    do {
      return try JSONDecoder().decode(Tokens.self, from: data).tokens.count
    } catch {
      throw LanguageModelError.malformedResponse(reason: "the /tokenize body has no tokens array")
    }
  }

  /// The first choice's content of a whole (not streamed) chat-completion body.
  static func completionContent(_ data: Data) throws(LanguageModelError) -> String {
    if let message = ChatCompletionStreamDecoder.errorMessage(in: data) {
      throw .serverError(message: message)
    }
    let decoded: ResponseBody
    do {
      decoded = try JSONDecoder().decode(ResponseBody.self, from: data)
    } catch {
      throw .malformedResponse(reason: "body is not a chat completion: \(error)")
    }
    guard let content = decoded.choices.first?.message?.content else {
      throw .malformedResponse(reason: "no choices[0].message.content")
    }
    return content
  }

  /// Sends `request` within `limit` (default: the configured timeout) and returns the body
  /// and the HTTP status. Plain `http` goes over a socket of its own (`PlainHTTPExchange`: URLSession
  /// on Linux keeps a core busy while it waits); `https` over URLSession.
  private func send(_ request: URLRequest, limit: Duration? = nil) async throws -> (Data, Int) {
    let limit = limit ?? configuration.timeout
    if Self.isPlainHTTP(request) {
      let exchange = PlainHTTPExchange(
        request: request, idleTimeout: limit, totalTimeout: limit, wakes: socketWakes)
      return try await withTaskCancellationHandler {
        var status: Int?
        var data = Data()
        do {
          for try await event in exchange.events {
            switch event {
            case .response(let code): status = code
            case .data(let chunk): data.append(chunk)
            }
          }
        } catch is PlainHTTPExchange.Truncated {
          throw LanguageModelError.transport(
            reason: "the server closed the connection before the end of its reply")
        }
        try Task.checkCancellation()
        guard let status else { throw LanguageModelError.malformedResponse(reason: "no response") }
        return (data, status)
      } onCancel: {
        exchange.close()
      }
    }
    let (data, response) = try await sendWithSession(request, limit: limit)
    guard let http = response as? HTTPURLResponse else {
      throw LanguageModelError.malformedResponse(reason: "not an HTTP response")
    }
    return (data, http.statusCode)
  }

  /// Whether `request` goes to a plain `http` URL (served by `PlainHTTPExchange`).
  static func isPlainHTTP(_ request: URLRequest) -> Bool { request.url?.scheme?.lowercased() == "http" }

  /// Sends `request` with URLSession, racing it against `limit`: URLSession on Linux rounds
  /// sub-second timeouts down to zero, so the session's own limit is only a backstop.
  private func sendWithSession(_ request: URLRequest, limit: Duration) async throws -> (Data, URLResponse) {
    let session = session
    let seconds = Self.seconds(limit)
    return try await withThrowingTaskGroup(of: (Data, URLResponse)?.self) { group in
      group.addTask {
        do {
          return try await session.data(for: request)
        } catch let error as URLError where error.code == .timedOut {
          throw LanguageModelError.timedOut(seconds: seconds)
        } catch is CancellationError {
          throw CancellationError()
        } catch let error as URLError where error.code == .cancelled {
          throw CancellationError()
        } catch {
          throw LanguageModelError.transport(reason: String(describing: error))
        }
      }
      group.addTask {
        try await Task.sleep(for: limit)
        return nil
      }
      defer { group.cancelAll() }
      guard let first = try await group.next(), let result = first else {
        try Task.checkCancellation()
        throw LanguageModelError.timedOut(seconds: seconds)
      }
      return result
    }
  }

  static func seconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) + Double(attoseconds) / 1e18
  }
}
