import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// The plain-socket HTTP/1.1 client that `http://` model servers are reached with: its framing,
/// and that it sleeps while the server thinks instead of spinning.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct PlainHTTPExchangeTests {
  func client(_ server: StubHTTPServer, timeout: Duration = .seconds(60)) throws -> OpenAIChatClient {
    try OpenAIChatClient(configuration: .init(baseURL: server.baseURL, model: "m", timeout: timeout))
  }

  /// The decoded body of `wire` fed in pieces of `size` bytes, and whether it was complete.
  func decode(_ wire: String, framing: HTTPBodyDecoder.Framing, size: Int) throws -> (String, Bool) {
    var decoder = HTTPBodyDecoder(framing: framing)
    let bytes = Array(wire.utf8)
    var content = Data()
    var start = 0
    while start < bytes.count {
      let end = min(bytes.count, start + size)
      content.append(try decoder.feed(Array(bytes[start..<end])))
      start = end
    }
    return (String(decoding: content, as: UTF8.self), decoder.isComplete)
  }

  @Test func chunkedBodiesDecodeWhateverTheCuts() throws {
    let wire = "5\r\nHello\r\n8;ext=1\r\n, wörld\r\n0\r\nTrailer: x\r\n\r\nNOT BODY"
    for size in [1, 2, 3, 7, 1000] {
      let (content, complete) = try decode(wire, framing: .chunked, size: size)
      #expect(content == "Hello, wörld", "pieces of \(size)")
      #expect(complete, "pieces of \(size)")
    }
    let (partial, complete) = try decode("5\r\nHel", framing: .chunked, size: 2)
    #expect(partial == "Hel")
    #expect(!complete)
    #expect(throws: LanguageModelError.self) { _ = try decode("zz\r\n", framing: .chunked, size: 4) }
  }

  @Test func lengthBodiesStopAtTheirLengthAndOthersAtTheClose() throws {
    let (content, complete) = try decode("abcdefXYZ", framing: .length(6), size: 4)
    #expect(content == "abcdef")
    #expect(complete)
    let (rest, ended) = try decode("abc", framing: .untilClose, size: 2)
    #expect(rest == "abc")
    #expect(!ended)
  }

  @Test func responseHeadsGiveStatusAndFraming() throws {
    let chunked = try HTTPResponseHead("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9")
    #expect(chunked.status == 200)
    #expect(chunked.framing == .chunked)
    #expect(try HTTPResponseHead("HTTP/1.0 404 Not Found\r\ncontent-length: 12").framing == .length(12))
    #expect(try HTTPResponseHead("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream").framing == .untilClose)
    #expect(try HTTPResponseHead("HTTP/1.1 204 No Content").framing == .length(0))
    #expect(throws: LanguageModelError.self) { _ = try HTTPResponseHead("SSH-2.0-OpenSSH") }
    #expect(HTTPResponseHead.end(in: Array("HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody".utf8)) == 21)
    #expect(HTTPResponseHead.end(in: Array("HTTP/1.1 200 OK\r\n".utf8)) == nil)
  }

  /// The regression this client exists for: URLSession on Linux woke thousands of times a
  /// second while a server thought (a write source left on the socket). Here the server waits
  /// 2 s before it answers; the client's waits may wake only a few times, whatever the
  /// machine's speed. At least one wake-up shows the request went over this client at all.
  @Test func waitingForASlowServerSleeps() async throws {
    let server = try StubHTTPServer(responses: [
      .init(status: 200, body: StubHTTPServer.completion("late"), delaySeconds: 2)
    ])
    defer { server.stop() }
    let client = try client(server)
    #expect(try await client.complete(messages: [.user("hi")]) == "late")
    let wakes = client.socketWakes.value
    #expect(wakes >= 1, "the request did not go over the plain-socket client")
    #expect(wakes <= 10, "the client woke \(wakes) times while the server was silent for 2 s")
  }

  @Test func aStreamWithPausesWakesAboutOncePerPiece() async throws {
    let body = ChatCompletionStream.body(["one", " two", " three"])
    let parts = ChatCompletionStream.pieces(body, size: body.utf8.count / 4 + 1)
    let server = try StubHTTPServer(responses: [.streamed(parts: parts, pauseSeconds: 0.5)])
    defer { server.stop() }
    let client = try client(server)
    var reply = ""
    for try await delta in client.stream(messages: [.user("hi")]) { reply += delta }
    #expect(reply == "one two three")
    let wakes = client.socketWakes.value
    #expect(wakes >= 1, "the stream did not go over the plain-socket client")
    // A piece may arrive split in two reads; the head and the last chunk add a few.
    #expect(wakes <= 4 * parts.count + 6, "the client woke \(wakes) times for \(parts.count) pieces")
  }

  @Test func theRequestCarriesItsHeadersBodyAndPath() async throws {
    let server = try StubHTTPServer(responses: [.init(status: 200, body: StubHTTPServer.completion("ok"))])
    defer { server.stop() }
    _ = try await client(server).complete(messages: [.user("hé")])
    let request = try #require(server.requests.first)
    #expect(request.requestLine == "POST /v1/chat/completions HTTP/1.1")
    #expect(request.headers["host"] == "127.0.0.1:\(server.port)")
    #expect(request.headers["content-type"] == "application/json")
    #expect(request.headers["content-length"] == String(request.body.count))
    #expect(request.headers["expect"] == nil)
    let json = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
    #expect((json["messages"] as? [[String: String]])?.first?["content"] == "hé")
  }

  @Test func aClosedPortIsATransportErrorNamingIt() async throws {
    let port = try LoopbackHTTPServer.closedPort()
    let closed = try OpenAIChatClient(
      configuration: .init(baseURL: URL(string: "http://127.0.0.1:\(port)")!, model: "m"))
    await #expect {
      _ = try await closed.complete(messages: [.user("x")])
    } throws: { error in
      guard case LanguageModelError.transport(let reason) = error else { return false }
      return reason.contains("cannot connect") && reason.contains(String(port))
    }
  }
}
