import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramCLI

/// `engram chat` with a streaming planner: each reply is printed once when piped, and shown
/// while it streams in on a terminal.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ChatStreamingEndToEndTests {
  static let answers = [
    "Zebras have black and white stripes.\nEach pattern is unique — 斑马的条纹各不相同 🦓.",
    "A second \"answer\", streamed too.",
  ]

  /// A planner reply for `answer`, as an event stream cut into small writes.
  static func streamedReply(_ answer: String) throws -> LoopbackHTTPServer.Response {
    let reply = String(decoding: try JSONSerialization.data(withJSONObject: ["final": answer]), as: UTF8.self)
    var deltas: [String] = []
    var rest = Substring(reply)
    while !rest.isEmpty {
      deltas.append(String(rest.prefix(4)))
      rest = rest.dropFirst(4)
    }
    return .streamed(
      parts: ChatCompletionStream.pieces(ChatCompletionStream.body(deltas), size: 31), pauseSeconds: 0.002)
  }

  static func server(_ responses: [LoopbackHTTPServer.Response]) throws -> LoopbackHTTPServer {
    let queue = Mutex(responses)
    return try LoopbackHTTPServer { _ in
      queue.withLock {
        $0.isEmpty ? .init(status: 500, body: "{\"error\": \"no response queued\"}") : $0.removeFirst()
      }
    }
  }

  @Test func pipedChatPrintsEachStreamedReplyExactlyOnce() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let server = try Self.server(try Self.answers.map(Self.streamedReply))
    defer { server.stop() }
    // No rule or sample phrase fits these, so each goes to the planner.
    let result = try await engram(
      "chat", "--db", db, "--llm", server.baseURL.absoluteString, "--llm-model", "m",
      input: "zebra quantum marmalade\nanother zebra quantum marmalade\n")
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput == Self.answers.map { ChatRendering.folded($0) + "\n" }.joined())
    #expect(server.received.count == 2)
    for request in server.received {
      let body = try JSONSerialization.jsonObject(with: request.body) as? [String: Any]
      #expect(body?["stream"] as? Bool == true)
    }
  }

  @Test func aTerminalShowsTheReplyWhileItStreamsIn() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let answer = Self.answers[0]
    var response = try Self.streamedReply(answer)
    let last = response.parts!.count - 1
    let release = DispatchSemaphore(value: 0)
    let waited = Mutex<DispatchTimeoutResult?>(nil)
    // The end of the reply waits until the test has seen its beginning on the screen.
    response.beforePart = { index in
      if index == last { waited.withLock { $0 = release.wait(timeout: .now() + 60) } }
    }
    let server = try Self.server([response])
    defer { server.stop() }
    let terminal = try PseudoTerminal([
      "chat", "--db", db, "--llm", server.baseURL.absoluteString, "--llm-model", "m",
    ])
    #expect(await terminal.waitFor("> "), "prompt: \(terminal.screen)")
    terminal.type("zebra quantum marmalade")
    #expect(await terminal.waitFor("Zebras have black"), "partial reply: \(terminal.screen)")
    release.signal()
    #expect(await terminal.waitFor("> "), "prompt after the reply: \(terminal.screen)")
    #expect(waited.withLock { $0 } == .success)
    let screen = terminal.screen
    #expect(screen.components(separatedBy: "Zebras have black").count == 2, "written once: \(screen)")
    #expect(screen.contains(answer + "\n"), "\(screen)")
    terminal.endOfInput()
    #expect(await terminal.waitForExit() == 0, "exit: \(terminal.screen)")
  }
}
