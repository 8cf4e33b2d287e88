import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 for tests (Foundation on Linux has none).
///
/// Each connection gets one answer from `respond(path, body)` and is closed.
final class LocalHTTPServer: Sendable {
  typealias Responder = @Sendable (_ path: String, _ body: Data) -> (status: Int, body: String)

  /// The bound port.
  let port: UInt16
  private let listener: Int32
  private let requests = Mutex<[(path: String, headers: String, body: Data)]>([])
  private let stopped = Mutex(false)

  /// Starts listening on an ephemeral loopback port and serves on a background thread.
  init(_ respond: @escaping Responder) throws {
    #if canImport(Glibc)
      let kind = Int32(SOCK_STREAM.rawValue)
    #else
      let kind = SOCK_STREAM
    #endif
    let socket = Self.openSocket(AF_INET, kind, 0)
    guard socket >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
    }
    guard bound == 0, listen(socket, 16) == 0 else {
      close(socket)
      throw POSIXError(.init(rawValue: errno) ?? .EIO)
    }
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
    }
    listener = socket
    port = UInt16(bigEndian: address.sin_port)
    let thread = Thread { [self] in self.serve(respond) }
    thread.start()
  }

  private static func openSocket(_ domain: Int32, _ kind: Int32, _ proto: Int32) -> Int32 {
    socket(domain, kind, proto)
  }

  /// Requests received so far (path and body).
  var received: [(path: String, headers: String, body: Data)] { requests.withLock { $0 } }

  /// `http://127.0.0.1:<port>`.
  var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

  /// Stops accepting connections; the serving thread ends.
  func stop() {
    guard
      !stopped.withLock({ value in
        defer { value = true }; return value
      })
    else { return }
    // Only shut down: the serving thread closes the descriptor when accept fails, so the
    // number cannot be reused by another test's socket while this thread still uses it.
    shutdown(listener, Int32(SHUT_RDWR))
  }

  private func serve(_ respond: Responder) {
    while true {
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else {
        close(listener)
        return
      }
      handle(connection, respond)
      close(connection)
    }
  }

  private func handle(_ connection: Int32, _ respond: Responder) {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var request = Data()
    var headerEnd: Int?
    var contentLength = 0
    while true {
      let count = read(connection, &buffer, buffer.count)
      guard count > 0 else { return }
      request.append(contentsOf: buffer[0..<count])
      if headerEnd == nil, let range = request.range(of: Data("\r\n\r\n".utf8)) {
        headerEnd = range.upperBound
        let header = String(decoding: request[..<range.lowerBound], as: UTF8.self)
        for line in header.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
          contentLength = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
      }
      if let headerEnd, request.count - headerEnd >= contentLength { break }
    }
    guard let headerEnd else { return }
    let requestLine = String(decoding: request.prefix(while: { $0 != 13 }), as: UTF8.self)
    let path = requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
    let body = Data(request[headerEnd...])
    let headers = String(decoding: request[..<headerEnd], as: UTF8.self)
    requests.withLock { $0.append((path, headers, body)) }
    let (status, text) = respond(path, body)
    let payload = Data(text.utf8)
    var answer = Data(
      ("HTTP/1.1 \(status) Status\r\nContent-Type: application/json\r\nContent-Length: \(payload.count)\r\n"
        + "Connection: close\r\n\r\n").utf8)
    answer.append(payload)
    answer.withUnsafeBytes { raw in
      var offset = 0
      while offset < raw.count {
        let written = write(connection, raw.baseAddress! + offset, raw.count - offset)
        guard written > 0 else { return }
        offset += written
      }
    }
  }

  /// A loopback port with nothing listening (bound, then closed).
  static func closedPort() throws -> UInt16 {
    let server = try LocalHTTPServer { _, _ in (200, "{}") }
    server.stop()
    return server.port
  }
}
