import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension OpenAIChatClient {
  /// Sends `messages` with `"stream": true` and yields `choices[0].delta.content` of each
  /// server-sent event as it arrives, until `data: [DONE]`.
  ///
  /// The configured timeout bounds each wait for the server (the first byte, then every next
  /// chunk), not the whole reply, so a long answer that keeps arriving is not cut off. A server
  /// that answers with one JSON body instead of a stream is read as a whole reply (one delta).
  /// Ending the iteration or cancelling its task closes the connection.
  ///
  /// Errors: `LanguageModelError.timedOut`, `.transport`, `.httpStatus` (non-2xx, with the
  /// body's start), `.serverError` (an error object, also mid-stream), `.incompleteStream` (the
  /// connection closed before the end), `.malformedResponse`; `CancellationError` when cancelled.
  public func stream(messages: [ChatMessage]) -> AsyncThrowingStream<String, any Error> {
    stream(messages: messages, format: nil)
  }

  /// `stream(messages:)` with `format` sent as the request's `response_format`. A server that
  /// refuses it (HTTP 400 before any text) is asked again without it, and this client sends no
  /// format from then on.
  public func stream(messages: [ChatMessage], format: ReplyFormat?) -> AsyncThrowingStream<String, any Error>
  {
    let format = formatRefusal.isSet ? nil : format
    let request: URLRequest
    do {
      request = try self.request(for: messages, stream: true, format: format)
    } catch {
      return AsyncThrowingStream { $0.finish(throwing: error) }
    }
    let timeout = configuration.timeout
    let wakes = socketWakes
    return AsyncThrowingStream { continuation in
      let task = Task { [self] in
        do {
          do {
            try await Self.receive(request, timeout: timeout, wakes: wakes) { continuation.yield($0) }
          } catch LanguageModelError.httpStatus(let code, _) where code == 400 && format != nil {
            // An error status comes before any text: nothing was yielded.
            formatRefusal.set()
            let plain = try self.request(for: messages, stream: true)
            try await Self.receive(plain, timeout: timeout, wakes: wakes) { continuation.yield($0) }
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  /// How the body of a successful streamed request is read, decided by its first non-blank byte.
  private enum BodyShape {
    case undecided
    case events
    case json
  }

  /// Runs one streamed request, handing each text delta to `yield`.
  private static func receive(
    _ request: URLRequest, timeout: Duration, wakes: SocketWakeCounter, yield: (String) -> Void
  ) async throws {
    let seconds = Self.seconds(timeout)
    let connection = StreamingConnection(request: request, timeout: timeout, wakes: wakes)
    defer { connection.close() }
    var status: Int?
    var shape = BodyShape.undecided
    var pending = Data()
    var parser = ServerSentEventParser()
    var decoder = ChatCompletionStreamDecoder()
    do {
      for try await event in connection.events {
        switch event {
        case .response(let code):
          status = code
        case .data(let chunk):
          guard let code = status else {
            throw LanguageModelError.malformedResponse(reason: "body before the response head")
          }
          guard (200..<300).contains(code) else {
            // Only the start of an error body is kept (it is quoted in the error).
            if pending.count < 65_536 { pending.append(chunk) }
            continue
          }
          var bytes = chunk
          if shape == .undecided {
            pending.append(chunk)
            guard let first = pending.first(where: { !Self.isBlank($0) }) else { continue }
            shape = first == UInt8(ascii: "{") ? .json : .events
            guard shape == .events else { continue }
            bytes = pending
            pending = Data()
          } else if shape == .json {
            pending.append(chunk)
            continue
          }
          for data in parser.feed(bytes) {
            if let delta = try decoder.delta(in: data) { yield(delta) }
            if decoder.isComplete { return }
          }
        }
      }
    } catch let error as LanguageModelError {
      throw error
    } catch is PlainHTTPExchange.Truncated {
      // The connection closed before the body's end (the server died mid-reply).
      if shape == .events { throw LanguageModelError.incompleteStream(received: decoder.received) }
      throw LanguageModelError.transport(
        reason: "the server closed the connection before the end of its reply")
    } catch let error as URLError where error.code == .timedOut {
      throw LanguageModelError.timedOut(seconds: seconds)
    } catch let error as URLError where error.code == .cancelled {
      throw CancellationError()
    } catch is CancellationError {
      throw CancellationError()
    } catch {
      throw LanguageModelError.transport(reason: String(describing: error))
    }
    // The events stream ends quietly when this task is cancelled.
    try Task.checkCancellation()
    guard let code = status else { throw LanguageModelError.malformedResponse(reason: "no response") }
    guard (200..<300).contains(code) else {
      throw LanguageModelError.httpStatus(
        code: code, body: String(decoding: pending.prefix(2048), as: UTF8.self))
    }
    switch shape {
    case .undecided:
      throw LanguageModelError.malformedResponse(reason: "empty body")
    case .json:
      yield(try completionContent(pending))
    case .events:
      for data in parser.finish() {
        if let delta = try decoder.delta(in: data) { yield(delta) }
      }
      guard decoder.isComplete else { throw LanguageModelError.incompleteStream(received: decoder.received) }
    }
  }

  private static func isBlank(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
      || byte == UInt8(ascii: "\t")
  }
}

/// One streamed HTTP exchange: the status and body chunks as they arrive. Plain `http` goes
/// over `PlainHTTPExchange` (URLSession on Linux keeps a core busy while it waits; see there);
/// `https` over its own URLSession, a delegate-based data task (which FoundationNetworking
/// on Linux supports where `URLSession.bytes` is missing), with a watchdog that fails the
/// exchange when the server stays silent longer than the timeout.
private struct StreamingConnection: Sendable {
  let events: AsyncThrowingStream<HTTPExchangeEvent, any Error>
  /// Stops the transfer and releases what it holds.
  private let stop: @Sendable () -> Void

  init(request: URLRequest, timeout: Duration, wakes: SocketWakeCounter) {
    if OpenAIChatClient.isPlainHTTP(request) {
      let exchange = PlainHTTPExchange(request: request, idleTimeout: timeout, wakes: wakes)
      events = exchange.events
      stop = { exchange.close() }
      return
    }
    let delegate = StreamingDelegate()
    events = delegate.events
    let configuration = URLSessionConfiguration.ephemeral
    // The watchdog enforces the limit (the Linux session truncates fractions); these are backstops.
    let seconds = max(1, OpenAIChatClient.seconds(timeout).rounded(.up)) + 1
    configuration.timeoutIntervalForRequest = seconds
    configuration.timeoutIntervalForResource = 24 * 3600
    let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    let task = session.dataTask(with: request)
    let watchdog = Task {
      while !Task.isCancelled {
        let deadline = delegate.lastActivity + timeout
        if ContinuousClock.now >= deadline {
          delegate.fail(LanguageModelError.timedOut(seconds: OpenAIChatClient.seconds(timeout)))
          task.cancel()
          return
        }
        try? await Task.sleep(until: deadline, clock: .continuous)
      }
    }
    stop = {
      watchdog.cancel()
      task.cancel()
      // The session retains its delegate until invalidated.
      session.invalidateAndCancel()
    }
    task.resume()
  }

  /// Stops the transfer (and, for https, the watchdog and the session).
  func close() { stop() }
}

/// Receives a data task's response and body chunks and hands them to an async stream.
private final class StreamingDelegate: NSObject, URLSessionDataDelegate, Sendable {
  let events: AsyncThrowingStream<HTTPExchangeEvent, any Error>
  private let continuation: AsyncThrowingStream<HTTPExchangeEvent, any Error>.Continuation
  private let activity = Mutex(ContinuousClock.now)

  override init() {
    (events, continuation) = AsyncThrowingStream.makeStream(
      of: HTTPExchangeEvent.self, throwing: (any Error).self)
    super.init()
  }

  /// When the server was last heard from (or the transfer started).
  var lastActivity: ContinuousClock.Instant { activity.withLock { $0 } }

  /// Ends the events with `error` (later events are dropped).
  func fail(_ error: any Error) { continuation.finish(throwing: error) }

  private func touch() { activity.withLock { $0 = .now } }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    touch()
    guard let http = response as? HTTPURLResponse else {
      continuation.finish(throwing: LanguageModelError.malformedResponse(reason: "not an HTTP response"))
      completionHandler(.cancel)
      return
    }
    continuation.yield(.response(status: http.statusCode))
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    touch()
    continuation.yield(.data(data))
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    if let error { continuation.finish(throwing: error) } else { continuation.finish() }
  }
}
