import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// HTTP/1.1 written by hand to a loopback port, for tests of the servers' own rules (a foreign
/// `Host`, half-finished requests): what a browser or a library would never send. The blocking
/// socket calls run on a thread of their own, never a cooperative one.
public enum RawHTTP {
  /// A parsed answer.
  public struct Response: Sendable {
    /// The status code (0 when nothing came back).
    public var status: Int
    /// Header fields, names lowercased, in arrival order.
    public var headers: [(name: String, value: String)]
    /// The body (chunked bodies are left as sent).
    public var body: String

    /// The first value of header `name`.
    public func header(_ name: String) -> String? {
      headers.first { $0.name == name.lowercased() }?.value
    }
  }

  /// A connected socket to 127.0.0.1:`port`, or nil.
  public static func connect(port: UInt16) -> Int32? {
    #if canImport(Glibc)
      let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Foundation.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(descriptor)
      return nil
    }
    return descriptor
  }

  /// Sends `bytes` on `descriptor` (all of them, unless the peer is gone).
  @discardableResult
  public static func send(_ descriptor: Int32, _ text: String) -> Bool {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      #if canImport(Glibc)
        let sent = bytes[offset...].withUnsafeBytes {
          Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
      #else
        let sent = bytes[offset...].withUnsafeBytes { Darwin.send(descriptor, $0.baseAddress, $0.count, 0) }
      #endif
      if sent <= 0 { return false }
      offset += sent
    }
    return true
  }

  /// Everything `descriptor` receives until the peer closes it or `seconds` pass without a byte.
  public static func receiveAll(_ descriptor: Int32, seconds: Int = 60) -> String {
    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
      if count <= 0 { break }
      received += buffer[0..<count]
    }
    return String(decoding: received, as: UTF8.self)
  }

  /// Sends `request` (a whole request, `Connection: close` advised) on a new connection to
  /// `port` and parses what comes back until the server closes it.
  public static func exchange(port: UInt16, _ request: String, seconds: Int = 60) async -> Response {
    let text = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
      Thread {
        guard let descriptor = connect(port: port) else {
          continuation.resume(returning: "")
          return
        }
        defer { close(descriptor) }
        send(descriptor, request)
        continuation.resume(returning: receiveAll(descriptor, seconds: seconds))
      }.start()
    }
    return parse(text)
  }

  /// A request: `METHOD PATH HTTP/1.1`, the headers given (in order), `Content-Length` when
  /// there is a body, `Connection: close`.
  public static func request(
    _ method: String, _ path: String, headers: [(String, String)], body: String = ""
  ) -> String {
    var text = "\(method) \(path) HTTP/1.1\r\n"
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.utf8.count)\r\n" }
    return text + "Connection: close\r\n\r\n" + body
  }

  /// Splits a response's status line, headers and body.
  public static func parse(_ text: String) -> Response {
    guard let split = text.range(of: "\r\n\r\n") else { return Response(status: 0, headers: [], body: text) }
    var lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
    let statusLine = lines.removeFirst().split(separator: " ")
    let status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
    let headers = lines.compactMap { line -> (name: String, value: String)? in
      guard let colon = line.firstIndex(of: ":") else { return nil }
      return (
        line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      )
    }
    return Response(status: status, headers: headers, body: String(text[split.upperBound...]))
  }
}
