import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 for tests of the HTTP clients (Foundation on Linux
/// has no server). Each connection gets one answer from the handler and is closed.
public final class LoopbackHTTPServer: Sendable {
  /// A request as received.
  public struct Request: Sendable {
    /// `POST /path HTTP/1.1`.
    public var requestLine: String
    /// The path of the request line.
    public var path: String
    /// Header fields, names lowercased.
    public var headers: [String: String]
    /// The header block as sent.
    public var rawHeaders: String
    /// The body (as long as Content-Length said).
    public var body: Data
  }

  /// An answer.
  public struct Response: Sendable {
    public var status: Int
    public var body: String
    /// Wait this long before answering (timeouts).
    public var delaySeconds: Double
    /// When set, the body is these byte strings instead of `body`, each sent by its own write
    /// `pauseSeconds` after the previous one (a streamed answer; a part may end inside a
    /// UTF-8 character).
    public var parts: [[UInt8]]?
    /// The pause before each part.
    public var pauseSeconds: Double
    /// Send the parts with `Transfer-Encoding: chunked` (and its last chunk); otherwise the
    /// closing connection ends the body.
    public var chunked: Bool
    /// The `Content-Type` header.
    public var contentType: String
    /// Called on the serving thread before part `index` is written (a test may block it until
    /// the client has shown what it received so far).
    public var beforePart: (@Sendable (_ index: Int) -> Void)?

    public init(status: Int, body: String, delaySeconds: Double = 0) {
      self.status = status
      self.body = body
      self.delaySeconds = delaySeconds
      self.parts = nil
      self.pauseSeconds = 0
      self.chunked = false
      self.contentType = "application/json"
      self.beforePart = nil
    }

    /// A streamed answer: `parts` written one by one, `pauseSeconds` apart.
    public static func streamed(
      status: Int = 200, parts: [[UInt8]], pauseSeconds: Double = 0.02, chunked: Bool = true,
      contentType: String = "text/event-stream"
    ) -> Response {
      var response = Response(status: status, body: "")
      response.parts = parts
      response.pauseSeconds = pauseSeconds
      response.chunked = chunked
      response.contentType = contentType
      return response
    }
  }

  /// Why the server could not start.
  public struct StartError: Error {
    public var call: String
  }

  /// The bound port.
  public let port: UInt16
  private let listener: Int32
  private let requests = Mutex<[Request]>([])
  private let handler: @Sendable (Request) -> Response

  /// Starts listening on an ephemeral loopback port and serves on a background thread.
  public init(handler: @escaping @Sendable (Request) -> Response) throws {
    self.handler = handler
    let socket: (descriptor: Int32, port: UInt16)
    do {
      socket = try LoopbackListener.open()
    } catch {
      throw StartError(call: error.call)
    }
    port = socket.port
    listener = socket.descriptor
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
  }

  /// `http://127.0.0.1:<port>`.
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

  /// Requests received so far, in order.
  public var received: [Request] { requests.withLock { $0 } }

  /// Stops accepting connections; the serving thread ends.
  public func stop() {
    // Only shut down: the accept thread closes the descriptor when accept fails, so the
    // number cannot be reused by another test's socket while that thread still uses it.
    shutdown(listener, Int32(SHUT_RDWR))
  }

  /// A loopback port with nothing listening.
  public static func closedPort() throws -> UInt16 {
    let server = try LoopbackHTTPServer { _ in Response(status: 200, body: "{}") }
    server.stop()
    return server.port
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
    var chunk = [UInt8](repeating: 0, count: 65_536)
    let separator = Data("\r\n\r\n".utf8)
    var headerEnd: Range<Data.Index>?
    while headerEnd == nil {
      let count = recv(client, &chunk, chunk.count, 0)
      guard count > 0 else { return }
      buffer.append(contentsOf: chunk[0..<count])
      headerEnd = buffer.range(of: separator)
    }
    let rawHeaders = String(decoding: buffer[..<headerEnd!.lowerBound], as: UTF8.self)
    var lines = rawHeaders.components(separatedBy: "\r\n")
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
    let path = requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
    let request = Request(
      requestLine: requestLine, path: path, headers: headers, rawHeaders: rawHeaders, body: body)
    requests.withLock { $0.append(request) }
    let response = handler(request)
    if response.delaySeconds > 0 { Thread.sleep(forTimeInterval: response.delaySeconds) }
    if let parts = response.parts {
      stream(client, parts, response: response)
      return
    }
    let payload = Data(response.body.utf8)
    write(
      client,
      "HTTP/1.1 \(response.status) Status\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(payload.count)\r\nConnection: close\r\n\r\n" + response.body)
  }

  private func stream(_ client: Int32, _ parts: [[UInt8]], response: Response) {
    write(
      client,
      "HTTP/1.1 \(response.status) Status\r\nContent-Type: \(response.contentType)\r\nCache-Control: no-cache\r\n"
        + (response.chunked ? "Transfer-Encoding: chunked\r\n" : "") + "Connection: close\r\n\r\n")
    for (index, part) in parts.enumerated() {
      response.beforePart?(index)
      if response.pauseSeconds > 0 { Thread.sleep(forTimeInterval: response.pauseSeconds) }
      if response.chunked {
        write(
          client, Array(String(part.count, radix: 16).utf8) + Array("\r\n".utf8) + part + Array("\r\n".utf8))
      } else {
        write(client, part)
      }
    }
    if response.chunked { write(client, "0\r\n\r\n") }
  }

  private func write(_ client: Int32, _ text: String) {
    write(client, Array(text.utf8))
  }

  private func write(_ client: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes[offset...].withUnsafeBytes {
        send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      guard sent > 0 else { return }
      offset += sent
    }
  }
}
