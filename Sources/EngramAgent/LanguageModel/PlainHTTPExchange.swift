import EngramCore
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What an HTTP exchange reports as it goes: the status once the response head is read, then
/// the body's bytes (chunked framing removed) as they arrive.
enum HTTPExchangeEvent: Sendable {
  /// The response head arrived with this HTTP status.
  case response(status: Int)
  /// A piece of the body.
  case data(Data)
}

/// Counts how often the exchanges of one client woke from waiting for their socket (a poll
/// that returned, ready or not): a client that waits without spinning wakes about once per
/// piece the server sends, however long the server thinks.
final class SocketWakeCounter: Sendable {
  private let count = Mutex(0)
  /// The wake-ups so far.
  var value: Int { count.withLock { $0 } }
  func add() { count.withLock { $0 += 1 } }
}

/// One HTTP/1.1 request over a plain TCP socket, for `http://` endpoints (llama.cpp's server
/// or Ollama on this machine), on a thread of its own that sleeps in `poll(2)` until the
/// server sends something, the deadline passes or `close()` is called.
///
/// Why not URLSession: on Linux, FoundationNetworking drives libcurl with libdispatch sources
/// and adds a write source when curl waits to connect or send, but never removes it when
/// curl then only waits to read. A connected socket is always writable, so libdispatch's
/// manager thread wakes and runs curl thousands of times a second for as long as the server
/// takes to answer: a core busy that a local model server on the same machine needs (seen
/// with strace: `epoll_wait` returning `EPOLLOUT` for the request's socket in a loop; see
/// docs/llm.md).
///
/// The request goes out with `Connection: close`; the body is read by `Content-Length`,
/// `Transfer-Encoding: chunked`, or to the end of the connection. Errors end `events`:
/// `LanguageModelError.timedOut` (a wait longer than `idleTimeout`, or past `totalTimeout`
/// from the start), `.transport` (cannot connect, the connection failed), `.malformedResponse`
/// (not an HTTP/1.x response), `Truncated` (the connection closed before the body its framing
/// announced), `CancellationError` after `close()`.
final class PlainHTTPExchange: Sendable {
  /// The connection closed before the end of the body that its framing announced.
  struct Truncated: Error {}

  let events: AsyncThrowingStream<HTTPExchangeEvent, any Error>

  private struct State {
    var cancelled = false
    var finished = false
  }

  private let state = Mutex(State())
  /// A pipe whose read end every poll also watches: `close()` writes a byte to wake the thread.
  private let wakeRead: Int32
  private let wakeWrite: Int32

  /// Starts the exchange on its own thread.
  init(
    request: URLRequest, idleTimeout: Duration, totalTimeout: Duration? = nil, wakes: SocketWakeCounter? = nil
  ) {
    let (events, continuation) = AsyncThrowingStream.makeStream(
      of: HTTPExchangeEvent.self, throwing: (any Error).self)
    self.events = events
    var ends: [Int32] = [-1, -1]
    let piped = pipe(&ends) == 0
    wakeRead = ends[0]
    wakeWrite = ends[1]
    guard piped else {
      continuation.finish(
        throwing: LanguageModelError.transport(reason: "cannot create a pipe: \(Self.errorText())"))
      state.withLock { $0.finished = true }
      return
    }
    let thread = Thread { [self] in
      do {
        var connection = try Connection(
          request: request, idleTimeout: idleTimeout, totalTimeout: totalTimeout, exchange: self, wakes: wakes
        )
        defer { connection.close() }
        try connection.run { continuation.yield($0) }
        continuation.finish()
      } catch {
        continuation.finish(throwing: isCancelled ? CancellationError() : error)
      }
      state.withLock { state in
        state.finished = true
        closeDescriptor(wakeRead)
        closeDescriptor(wakeWrite)
      }
    }
    thread.name = "engram.llm-http"
    thread.start()
  }

  /// Stops the exchange: the thread wakes, closes the connection and ends `events` with
  /// `CancellationError` (unless it had already ended).
  func close() {
    state.withLock { state in
      guard !state.cancelled, !state.finished else { return }
      state.cancelled = true
      var byte: UInt8 = 1
      _ = write(wakeWrite, &byte, 1)
    }
  }

  fileprivate var isCancelled: Bool { state.withLock { $0.cancelled } }

  /// `strerror(errno)`.
  fileprivate static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

  /// The socket side of one exchange, used on its thread only.
  private struct Connection {
    let exchange: PlainHTTPExchange
    let wakes: SocketWakeCounter?
    let idleTimeout: Duration
    let totalTimeout: Duration?
    let totalDeadline: ContinuousClock.Instant?
    let request: [UInt8]
    let host: String
    let port: UInt16
    var descriptor: Int32 = -1
    /// When the server was last heard from (or the exchange started).
    var lastActivity = ContinuousClock.now

    init(
      request: URLRequest, idleTimeout: Duration, totalTimeout: Duration?, exchange: PlainHTTPExchange,
      wakes: SocketWakeCounter?
    ) throws(LanguageModelError) {
      guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
        components.scheme?.lowercased() == "http", var host = components.host, !host.isEmpty
      else {
        throw .invalidBaseURL(request.url?.absoluteString ?? "")
      }
      if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
      guard let port = UInt16(exactly: components.port ?? 80) else {
        throw .invalidBaseURL(url.absoluteString)
      }
      self.host = host
      self.port = port
      self.exchange = exchange
      self.wakes = wakes
      self.idleTimeout = idleTimeout
      self.totalTimeout = totalTimeout
      self.totalDeadline = totalTimeout.map { ContinuousClock.now + $0 }
      let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
      let target = path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
      let body = request.httpBody ?? Data()
      let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
      var head = "\(request.httpMethod ?? "GET") \(target) HTTP/1.1\r\nHost: \(authority)\r\n"
      for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
        // This client frames the message itself; a line break in a value would start a new header.
        let lowered = name.lowercased()
        guard !["host", "content-length", "connection", "transfer-encoding"].contains(lowered),
          !value.contains(where: { $0 == "\r" || $0 == "\n" })
        else { continue }
        head += "\(name): \(value)\r\n"
      }
      head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
      self.request = Array(head.utf8) + Array(body)
    }

    mutating func close() {
      if descriptor >= 0 { closeDescriptor(descriptor) }
      descriptor = -1
    }

    /// Connects, sends the request and hands each event to `yield`.
    mutating func run(_ yield: (HTTPExchangeEvent) -> Void) throws {
      try connect()
      try sendRequest()
      try readResponse(yield)
    }

    private var deadline: ContinuousClock.Instant {
      let idle = lastActivity + idleTimeout
      guard let totalDeadline else { return idle }
      return min(idle, totalDeadline)
    }

    /// Sleeps until the socket is ready for `events`; throws at the deadline or on `close()`.
    private mutating func wait(for events: Int16) throws {
      while true {
        if exchange.isCancelled { throw CancellationError() }
        let remaining = deadline - .now
        guard remaining > .zero else { throw LanguageModelError.timedOut(seconds: timeoutSeconds) }
        let milliseconds = Int32(clamping: Int((OpenAIChatClient.seconds(remaining) * 1000).rounded(.up)))
        var descriptors = [
          pollfd(fd: descriptor, events: events, revents: 0),
          pollfd(fd: exchange.wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&descriptors, 2, max(1, milliseconds))
        wakes?.add()
        if ready < 0 {
          if errno == EINTR { continue }
          throw LanguageModelError.transport(reason: "poll failed: \(PlainHTTPExchange.errorText())")
        }
        if descriptors[1].revents != 0 { throw CancellationError() }
        if descriptors[0].revents != 0 { return }
      }
    }

    /// The limit that ran out: the whole request's when its deadline came first, else the idle one.
    private var timeoutSeconds: Double {
      if let totalTimeout, let totalDeadline, totalDeadline < lastActivity + idleTimeout {
        return OpenAIChatClient.seconds(totalTimeout)
      }
      return OpenAIChatClient.seconds(idleTimeout)
    }

    private mutating func connect() throws {
      var hints = addrinfo.streamHints()
      var list: UnsafeMutablePointer<addrinfo>?
      let status = getaddrinfo(host, String(port), &hints, &list)
      guard status == 0, let first = list else {
        throw LanguageModelError.transport(
          reason: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
      }
      defer { freeaddrinfo(list) }
      var failure = "no address"
      var entry: UnsafeMutablePointer<addrinfo>? = first
      while let address = entry {
        entry = address.pointee.ai_next
        let candidate = openSocket(
          address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard candidate >= 0 else {
          failure = PlainHTTPExchange.errorText()
          continue
        }
        descriptor = candidate
        _ = fcntl(candidate, F_SETFL, fcntl(candidate, F_GETFL) | O_NONBLOCK)
        #if canImport(Darwin)
          var one: Int32 = 1
          _ = setsockopt(candidate, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        if connectSocket(candidate, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return }
        if errno == EINPROGRESS {
          try wait(for: Int16(POLLOUT))
          var code: Int32 = 0
          var length = socklen_t(MemoryLayout<Int32>.size)
          if getsockopt(candidate, SOL_SOCKET, SO_ERROR, &code, &length) == 0, code == 0 { return }
          failure = PlainHTTPExchange.errorText(code)
        } else {
          failure = PlainHTTPExchange.errorText()
        }
        closeDescriptor(candidate)
        descriptor = -1
      }
      throw LanguageModelError.transport(reason: "cannot connect to \(host) port \(port): \(failure)")
    }

    private mutating func sendRequest() throws {
      var sent = 0
      while sent < request.count {
        let count = request.withUnsafeBytes { bytes in
          sendBytes(descriptor, bytes.baseAddress! + sent, bytes.count - sent)
        }
        if count > 0 {
          sent += count
          continue
        }
        guard count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
          throw LanguageModelError.transport(
            reason: "sending the request failed: \(PlainHTTPExchange.errorText())")
        }
        try wait(for: Int16(POLLOUT))
      }
      lastActivity = .now
    }

    /// The next bytes from the server (empty at the end of the connection).
    private mutating func receive() throws -> [UInt8] {
      var buffer = [UInt8](repeating: 0, count: 65_536)
      while true {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count >= 0 {
          if count > 0 { lastActivity = .now }
          return Array(buffer[0..<count])
        }
        guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
          throw LanguageModelError.transport(
            reason: "reading the reply failed: \(PlainHTTPExchange.errorText())")
        }
        try wait(for: Int16(POLLIN))
      }
    }

    private mutating func readResponse(_ yield: (HTTPExchangeEvent) -> Void) throws {
      var pending: [UInt8] = []
      var head: HTTPResponseHead
      repeat {
        var end = HTTPResponseHead.end(in: pending)
        while end == nil {
          guard pending.count <= 65_536 else {
            throw LanguageModelError.malformedResponse(reason: "the response head is longer than 64 KiB")
          }
          let bytes = try receive()
          guard !bytes.isEmpty else {
            throw LanguageModelError.transport(reason: "the server closed the connection without answering")
          }
          pending += bytes
          end = HTTPResponseHead.end(in: pending)
        }
        head = try HTTPResponseHead(String(decoding: pending[0..<end!], as: UTF8.self))
        pending.removeFirst(end! + 4)
        // An informational head (100 Continue) precedes the real one.
      } while (100..<200).contains(head.status)
      yield(.response(status: head.status))
      var body = HTTPBodyDecoder(framing: head.framing)
      var bytes = pending
      while true {
        let data = try body.feed(bytes)
        if !data.isEmpty { yield(.data(data)) }
        if body.isComplete { return }
        bytes = try receive()
        if bytes.isEmpty {
          guard body.endsAtClose else { throw Truncated() }
          return
        }
      }
    }
  }
}

// libc's names, reachable where a method of the same name hides them.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
private func openSocket(_ family: Int32, _ type: Int32, _ proto: Int32) -> Int32 {
  socket(family, type, proto)
}
private func connectSocket(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t)
  -> Int32
{
  connect(descriptor, address, length)
}
/// `send(2)` without SIGPIPE when the peer has gone (Darwin sets SO_NOSIGPIPE on the socket).
private func sendBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
  #if canImport(Glibc)
    send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
  #else
    send(descriptor, bytes, count, 0)
  #endif
}

/// The status line and the framing headers of an HTTP/1.x response head.
struct HTTPResponseHead: Sendable, Equatable {
  let status: Int
  let framing: HTTPBodyDecoder.Framing

  /// Where the head ends in `bytes` (the index of its blank line's `\r\n\r\n`), if it has.
  static func end(in bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for index in 0...(bytes.count - 4)
    where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
      return index
    }
    return nil
  }

  /// Parses a head (without its blank line).
  /// - Throws: `LanguageModelError.malformedResponse` when the status line is not HTTP/1.x's.
  init(_ text: String) throws(LanguageModelError) {
    let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
    let statusLine = lines.first.map(String.init) ?? ""
    let parts = statusLine.split(separator: " ", maxSplits: 2)
    guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1])
    else {
      throw .malformedResponse(reason: "not an HTTP/1.x response: '\(statusLine.prefix(80))'")
    }
    var chunked = false
    var length: Int?
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      if name == "transfer-encoding", value.lowercased().contains("chunked") { chunked = true }
      if name == "content-length" {
        guard let count = Int(value), count >= 0 else {
          throw .malformedResponse(reason: "Content-Length '\(value.prefix(40))' is not a length")
        }
        length = count
      }
    }
    self.status = status
    // No body for 1xx, 204 and 304; chunked wins over a length (RFC 9112, 6.3).
    if (100..<200).contains(status) || status == 204 || status == 304 {
      framing = .length(0)
    } else if chunked {
      framing = .chunked
    } else if let length {
      framing = .length(length)
    } else {
      framing = .untilClose
    }
  }
}

/// Takes a response body's bytes as they arrive and gives back its content: the chunked
/// framing removed, a `Content-Length` body cut at its length.
struct HTTPBodyDecoder: Sendable {
  /// How the body's end is known.
  enum Framing: Sendable, Equatable {
    /// `Content-Length`.
    case length(Int)
    /// `Transfer-Encoding: chunked`.
    case chunked
    /// Neither: the closing connection ends it.
    case untilClose
  }

  private enum ChunkState: Sendable {
    /// Reading a chunk-size line.
    case size
    /// Inside a chunk, this many bytes left.
    case data(Int)
    /// The CRLF after a chunk's data.
    case dataEnd
    /// After the last chunk: trailer lines up to a blank one.
    case trailer
    case done
  }

  let framing: Framing
  private var remaining: Int
  private var state = ChunkState.size
  private var line: [UInt8] = []

  init(framing: Framing) {
    self.framing = framing
    if case .length(let count) = framing { remaining = count } else { remaining = 0 }
  }

  /// Whether the whole body has been read (never, for a body that ends at the close).
  var isComplete: Bool {
    switch framing {
    case .length: return remaining == 0
    case .chunked: if case .done = state { return true } else { return false }
    case .untilClose: return false
    }
  }

  /// Whether the connection's end is the body's end.
  var endsAtClose: Bool { framing == .untilClose }

  /// The content in `bytes` (bytes past the body's end are ignored).
  /// - Throws: `LanguageModelError.malformedResponse` for a chunk-size line that is not hex.
  mutating func feed(_ bytes: [UInt8]) throws(LanguageModelError) -> Data {
    switch framing {
    case .untilClose:
      return Data(bytes)
    case .length:
      let taken = bytes.prefix(remaining)
      remaining -= taken.count
      return Data(taken)
    case .chunked:
      var content = Data()
      var index = 0
      while index < bytes.count {
        switch state {
        case .data(let left):
          let count = min(left, bytes.count - index)
          content.append(contentsOf: bytes[index..<(index + count)])
          index += count
          state = left == count ? .dataEnd : .data(left - count)
        case .size, .dataEnd, .trailer:
          let byte = bytes[index]
          index += 1
          guard byte == 10 else {
            if byte != 13 { line.append(byte) }
            continue
          }
          let text = String(decoding: line, as: UTF8.self)
          line = []
          try endLine(text)
        case .done:
          return content
        }
      }
      return content
    }
  }

  /// A whole line in the size, data-end or trailer state.
  private mutating func endLine(_ text: String) throws(LanguageModelError) {
    switch state {
    case .size:
      let digits =
        text.split(separator: ";", maxSplits: 1).first.map {
          $0.trimmingCharacters(in: .whitespaces)
        } ?? ""
      guard let size = Int(digits, radix: 16), size >= 0 else {
        throw .malformedResponse(reason: "chunk size '\(text.prefix(40))' is not hexadecimal")
      }
      state = size == 0 ? .trailer : .data(size)
    case .dataEnd:
      guard text.isEmpty else { throw .malformedResponse(reason: "a chunk is longer than its size") }
      state = .size
    case .trailer:
      if text.isEmpty { state = .done }
    case .data, .done:
      break
    }
  }
}
