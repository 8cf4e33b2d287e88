import EngramTestSupport
import Foundation
import Synchronization

/// The shared loopback server, answering each request with the next queued response (500
/// when the queue is empty).
final class StubHTTPServer: Sendable {
  typealias Response = LoopbackHTTPServer.Response
  typealias Request = LoopbackHTTPServer.Request

  private let server: LoopbackHTTPServer

  init(responses: [Response]) throws {
    let queue = Mutex(responses)
    server = try LoopbackHTTPServer { _ in
      queue.withLock { $0.isEmpty ? Response(status: 500, body: "no response queued") : $0.removeFirst() }
    }
  }

  var port: UInt16 { server.port }
  var baseURL: URL { server.baseURL }
  var requests: [Request] { server.received }

  func stop() { server.stop() }

  /// A chat-completion body whose first choice says `content`.
  static func completion(_ content: String) -> String {
    let data = try! JSONSerialization.data(
      withJSONObject: ["choices": [["index": 0, "message": ["role": "assistant", "content": content]]]])
    return String(decoding: data, as: UTF8.self)
  }
}
