import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramAgent

/// The streaming client against a real loopback server that writes its answer in pieces.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct OpenAIChatClientStreamingTests {
  /// A client of `server`. The default per-chunk timeout is generous: the whole suite starts at
  /// once on two cooperative threads, and a reader may wait its turn for seconds (a 10 s limit
  /// once ran out before a cleanly closed stream was read); the timeout tests pass their own.
  func client(_ server: StubHTTPServer, timeout: Duration = .seconds(60)) throws -> OpenAIChatClient {
    try OpenAIChatClient(
      configuration: .init(
        baseURL: server.baseURL, model: "m", apiKeyEnvironmentVariable: "KEY", timeout: timeout),
      environment: ["KEY": "secret"])
  }

  /// Every delta, in order, and the error that ended the stream (nil when it ended cleanly).
  func collect(_ stream: AsyncThrowingStream<String, any Error>) async -> ([String], (any Error)?) {
    var deltas: [String] = []
    do {
      for try await delta in stream { deltas.append(delta) }
      return (deltas, nil)
    } catch {
      return (deltas, error)
    }
  }

  static let deltas = ["Hel", "lo, ", "wörld", " — 世界", " 🙂", "!\n", "Second \"line\"."]

  @Test func deltasArriveInOrderAndAddUpToTheReply() async throws {
    let body = ChatCompletionStream.body(Self.deltas)
    // Pieces of 5 bytes: many cuts fall inside a line, and some inside a UTF-8 character.
    let server = try StubHTTPServer(responses: [
      .streamed(parts: ChatCompletionStream.pieces(body, size: 5), pauseSeconds: 0.001)
    ])
    defer { server.stop() }
    let (deltas, error) = await collect(try client(server).stream(messages: [.user("hi")]))
    #expect(error == nil)
    #expect(deltas.joined() == Self.deltas.joined())
    #expect(deltas == Self.deltas, "each event is one delta, in order")
    let request = try #require(server.requests.first)
    #expect(request.requestLine == "POST /v1/chat/completions HTTP/1.1")
    #expect(request.headers["authorization"] == "Bearer secret")
    #expect(request.headers["accept"] == "text/event-stream")
    let json = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
    #expect(json["stream"] as? Bool == true)
  }

  @Test func aCharacterSplitAcrossWritesArrivesWhole() async throws {
    let body = ChatCompletionStream.event("né 世") + ChatCompletionStream.done
    let bytes = Array(body.utf8)
    // Cut inside "é" (2 bytes) and inside "世" (3 bytes), with a pause long enough that each
    // write reaches the client on its own.
    let e = try #require(bytes.firstIndex(of: 0xC3))
    let shi = try #require(bytes.firstIndex(of: 0xE4))
    let server = try StubHTTPServer(responses: [
      .streamed(
        parts: ChatCompletionStream.pieces(body, cuttingAt: [e + 1, shi + 1, shi + 2]), pauseSeconds: 0.05)
    ])
    defer { server.stop() }
    let (deltas, error) = await collect(try client(server).stream(messages: [.user("hi")]))
    #expect(error == nil)
    #expect(deltas == ["né 世"])
  }

  @Test func deltasAreDeliveredBeforeTheReplyIsComplete() async throws {
    let release = DispatchSemaphore(value: 0)
    let waited = Mutex<DispatchTimeoutResult?>(nil)
    var response = LoopbackHTTPServer.Response.streamed(
      parts: [
        Array((ChatCompletionStream.event("first") + ChatCompletionStream.event(" second")).utf8),
        Array((ChatCompletionStream.event(" third") + ChatCompletionStream.done).utf8),
      ],
      pauseSeconds: 0)
    // The server holds the rest of the reply until the client has shown the first deltas.
    response.beforePart = { index in
      if index == 1 { waited.withLock { $0 = release.wait(timeout: .now() + 60) } }
    }
    let server = try StubHTTPServer(responses: [response])
    defer { server.stop() }
    var deltas: [String] = []
    // A generous per-chunk timeout: under a full parallel test run the first write can be slow.
    for try await delta in try client(server, timeout: .seconds(60)).stream(messages: [.user("hi")]) {
      deltas.append(delta)
      if deltas.count == 2 { release.signal() }
    }
    #expect(deltas == ["first", " second", " third"])
    #expect(waited.withLock { $0 } == .success, "the first deltas came while the server was still writing")
  }

  @Test func anErrorObjectInsteadOfAStreamIsAServerError() async throws {
    let server = try StubHTTPServer(responses: [
      .init(status: 200, body: #"{"error": {"message": "model 'm' not found", "type": "invalid_request"}}"#),
      .init(status: 404, body: #"{"error": "model 'm' not found"}"#),
    ])
    defer { server.stop() }
    let client = try client(server)
    let (deltas, error) = await collect(client.stream(messages: [.user("hi")]))
    #expect(deltas.isEmpty)
    #expect(error as? LanguageModelError == .serverError(message: "model 'm' not found"))
    let (_, status) = await collect(client.stream(messages: [.user("hi")]))
    #expect(
      status as? LanguageModelError == .httpStatus(code: 404, body: #"{"error": "model 'm' not found"}"#))
  }

  @Test func aWholeJSONReplyToAStreamRequestIsOneDelta() async throws {
    let server = try StubHTTPServer(responses: [
      .init(status: 200, body: StubHTTPServer.completion("all at once"))
    ])
    defer { server.stop() }
    let (deltas, error) = await collect(try client(server).stream(messages: [.user("hi")]))
    #expect(error == nil)
    #expect(deltas == ["all at once"])
  }

  @Test func aServerErrorMidStreamIsTyped() async throws {
    let body =
      ChatCompletionStream.event("partial ") + ChatCompletionStream.event("answer")
      + "data: {\"error\": {\"message\": \"CUDA out of memory\", \"code\": 500}}\n\n"
    let server = try StubHTTPServer(responses: [.streamed(parts: ChatCompletionStream.pieces(body, size: 40))]
    )
    defer { server.stop() }
    let (deltas, error) = await collect(try client(server).stream(messages: [.user("hi")]))
    #expect(deltas == ["partial ", "answer"])
    #expect(error as? LanguageModelError == .serverError(message: "CUDA out of memory"))
  }

  @Test func aStreamCutOffBeforeItsEndIsIncomplete() async throws {
    // No chunked framing: the closing connection ends the body, cleanly but too early.
    let body = ChatCompletionStream.event("Hel") + ChatCompletionStream.event("lo")
    let server = try StubHTTPServer(responses: [
      .streamed(parts: ChatCompletionStream.pieces(body, size: 30), chunked: false)
    ])
    defer { server.stop() }
    let (deltas, error) = await collect(try client(server).stream(messages: [.user("hi")]))
    #expect(deltas == ["Hel", "lo"])
    #expect(error as? LanguageModelError == .incompleteStream(received: "Hello"))
  }

  @Test func aServerThatStaysSilentTimesOutButASteadyOneDoesNot() async throws {
    let first = ChatCompletionStream.event("slow")
    let body = first + ChatCompletionStream.done
    let parts = ChatCompletionStream.pieces(body, cuttingAt: [first.utf8.count])
    // The limit is 4 s, not 1: under the full parallel run the first delta once took more
    // than a second to arrive. Silent after the response head (15 s, far past the limit).
    let silent = try StubHTTPServer(responses: [.streamed(parts: parts, pauseSeconds: 15)])
    defer { silent.stop() }
    // Silent after the first delta.
    var stalled = LoopbackHTTPServer.Response.streamed(parts: parts, pauseSeconds: 0)
    stalled.beforePart = { index in if index == 1 { Thread.sleep(forTimeInterval: 15) } }
    let stalling = try StubHTTPServer(responses: [stalled])
    defer { stalling.stop() }
    // Forty pieces 0.15 s apart: 6 s in all, longer than the limit, but never long without news.
    let steadyBody = ChatCompletionStream.body(["a", "b", "c", "d"])
    let steady = try StubHTTPServer(responses: [
      .streamed(
        parts: ChatCompletionStream.pieces(steadyBody, size: steadyBody.utf8.count / 40 + 1),
        pauseSeconds: 0.15)
    ])
    defer { steady.stop() }

    let limit = Duration.seconds(4)
    let (none, headOnly) = await collect(try client(silent, timeout: limit).stream(messages: [.user("x")]))
    #expect(none.isEmpty)
    #expect(headOnly as? LanguageModelError == .timedOut(seconds: 4))
    let (deltas, midStream) = await collect(
      try client(stalling, timeout: limit).stream(messages: [.user("x")]))
    #expect(deltas == ["slow"])
    #expect(midStream as? LanguageModelError == .timedOut(seconds: 4))
    let (all, error) = await collect(try client(steady, timeout: limit).stream(messages: [.user("x")]))
    #expect(error == nil)
    #expect(all.joined() == "abcd")
  }

  @Test func cancellingTheConsumerStopsTheStream() async throws {
    let stallEnded = Mutex(false)
    // Signalled when the test ends, so the server's thread is not parked past the run.
    let endOfTest = DispatchSemaphore(value: 0)
    defer { endOfTest.signal() }
    var stalled = LoopbackHTTPServer.Response.streamed(
      parts: [Array(ChatCompletionStream.event("before").utf8), Array(ChatCompletionStream.done.utf8)],
      pauseSeconds: 0)
    stalled.beforePart = { index in
      guard index == 1 else { return }
      // On the server's own thread: silent until the test ends (or 900 s, longer than the
      // consumer could ever wait), so a consumer that waited for the silent server is caught.
      if endOfTest.wait(timeout: .now() + 900) == .timedOut { stallEnded.withLock { $0 = true } }
    }
    let server = try StubHTTPServer(responses: [stalled])
    defer { server.stop() }
    let client = try client(server, timeout: .seconds(900))
    let received = Mutex<[String]>([])
    let task = Task {
      for try await delta in client.stream(messages: [.user("x")]) { received.withLock { $0.append(delta) } }
      // A cancelled consumer's stream ends early without an error, as every AsyncThrowingStream.
      try Task.checkCancellation()
    }
    // The deadline only makes a broken build fail instead of hanging (generous: tests that
    // wait for child processes can hold the cooperative pool's threads for minutes).
    let deadline = ContinuousClock.now + .seconds(600)
    while received.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    try #require(received.withLock { $0 } == ["before"])
    task.cancel()
    let result = await task.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(received.withLock { $0 } == ["before"])
    #expect(!stallEnded.withLock { $0 }, "the consumer did not wait for the silent server")
  }

  @Test func theNonStreamingCallStillSendsStreamFalse() async throws {
    let server = try StubHTTPServer(responses: [.init(status: 200, body: StubHTTPServer.completion("plain"))])
    defer { server.stop() }
    #expect(try await client(server).complete(messages: [.user("hi")]) == "plain")
    let json = try #require(try JSONSerialization.jsonObject(with: server.requests[0].body) as? [String: Any])
    #expect(json["stream"] as? Bool == false)
    #expect(server.requests[0].headers["accept"] == "application/json")
  }

  @Test func theDefaultStreamOfAModelYieldsItsWholeReply() async throws {
    let model = FixedReplyModel(reply: "whole")
    let (deltas, error) = await collect(model.stream(messages: [.user("x")]))
    #expect(error == nil)
    #expect(deltas == ["whole"])
    let parts = Mutex<[PartialOutput.Update]>([])
    let reply = try await model.complete(
      messages: [.user("x")], partial: PartialOutput { update in parts.withLock { $0.append(update) } })
    #expect(reply == "whole")
    #expect(parts.withLock { $0 } == [.append("whole")])
  }
}
