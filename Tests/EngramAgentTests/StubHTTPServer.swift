import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 that answers each request with the next queued response.
final class StubHTTPServer: Sendable {
  struct Response: Sendable {
    var status: Int
    var body: String
    var delaySeconds: Double = 0
  }

  struct Request: Sendable {
    var requestLine: String
    var headers: [String: String]
    var body: Data
  }

  struct StartError: Error { var call: String }

  private struct State {
    var responses: [Response]
    var requests: [Request] = []
  }

  let port: UInt16
  private let listener: Int32
  private let state: Mutex<State>

  init(responses: [Response]) throws {
    state = Mutex(State(responses: responses))
    #if canImport(Glibc)
      let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { throw StartError(call: "socket") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(descriptor, 8) == 0 else {
      close(descriptor)
      throw StartError(call: "bind/listen")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    port = UInt16(bigEndian: address.sin_port)
    listener = descriptor
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
  }

  var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

  var requests: [Request] { state.withLock { $0.requests } }

  /// Stops accepting; a blocked accept returns and the thread ends.
  func stop() {
    // Only shut down: the accept loop closes the descriptor when accept fails, so the number
    // cannot be reused by another test's socket while the loop still uses it.
    shutdown(listener, Int32(SHUT_RDWR))
  }

  private func acceptLoop() {
    while true {
      let client = accept(listener, nil, nil)
      guard client >= 0 else {
        close(listener)
        return
      }
      handle(client)
      close(client)
    }
  }

  private func handle(_ client: Int32) {
    var buffer = Data()
    var chunk = [UInt8](repeating: 0, count: 4096)
    let separator = Data("\r\n\r\n".utf8)
    var headerEnd: Range<Data.Index>?
    while headerEnd == nil {
      let count = recv(client, &chunk, chunk.count, 0)
      guard count > 0 else { return }
      buffer.append(contentsOf: chunk[0..<count])
      headerEnd = buffer.range(of: separator)
    }
    let headerText = String(decoding: buffer[..<headerEnd!.lowerBound], as: UTF8.self)
    var lines = headerText.components(separatedBy: "\r\n")
    let requestLine = lines.removeFirst()
    var headers: [String: String] = [:]
    for line in lines {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    if headers["expect"]?.lowercased() == "100-continue" { write(client, "HTTP/1.1 100 Continue\r\n\r\n") }
    let length = Int(headers["content-length"] ?? "0") ?? 0
    var body = Data(buffer[headerEnd!.upperBound...])
    while body.count < length {
      let count = recv(client, &chunk, chunk.count, 0)
      guard count > 0 else { break }
      body.append(contentsOf: chunk[0..<count])
    }
    let response = state.withLock { state -> Response in
      state.requests.append(Request(requestLine: requestLine, headers: headers, body: body))
      return state.responses.isEmpty
        ? Response(status: 500, body: "no response queued") : state.responses.removeFirst()
    }
    if response.delaySeconds > 0 { Thread.sleep(forTimeInterval: response.delaySeconds) }
    let payload = Data(response.body.utf8)
    write(
      client,
      "HTTP/1.1 \(response.status) Stub\r\nContent-Type: application/json\r\nContent-Length: \(payload.count)\r\n"
        + "Connection: close\r\n\r\n" + response.body)
  }

  private func write(_ client: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let sent = bytes[offset...].withUnsafeBytes {
        send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      guard sent > 0 else { return }
      offset += sent
    }
  }

  /// A chat-completion body whose first choice says `content`.
  static func completion(_ content: String) -> String {
    let data = try! JSONSerialization.data(
      withJSONObject: ["choices": [["index": 0, "message": ["role": "assistant", "content": content]]]])
    return String(decoding: data, as: UTF8.self)
  }
}
