import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where the server writes its messages, one JSON text per line.
public protocol MessageSink: Sendable {
  /// Writes one message (without newline) followed by `\n`, completely, before returning.
  /// - Throws: ``TransportError`` when the peer is gone.
  func send(_ message: Data) throws(TransportError)
}

/// Why the transport stopped.
public enum TransportError: Error, Sendable, Hashable {
  /// `read(2)` failed with this errno.
  case readFailed(errno: Int32)
  /// `write(2)` failed with this errno (EPIPE: the client went away).
  case writeFailed(errno: Int32)
  /// A line longer than the limit arrived; the stream cannot be resynchronized safely.
  case lineTooLong(limit: Int)
}

/// Writes messages to a file descriptor (standard output by default) with `write(2)`, unbuffered.
public struct FileDescriptorSink: MessageSink {
  /// The descriptor (not owned: never closed).
  public let fileDescriptor: Int32

  /// Creates a sink.
  public init(fileDescriptor: Int32 = 1) {
    self.fileDescriptor = fileDescriptor
  }

  /// Writes `message` and a newline.
  public func send(_ message: Data) throws(TransportError) {
    var bytes = [UInt8](message)
    bytes.append(UInt8(ascii: "\n"))
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes { write(fileDescriptor, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EINTR { continue }
        throw .writeFailed(errno: errno)
      }
      offset += written
    }
  }
}

/// Reads newline-delimited messages from a file descriptor on a dedicated thread.
public enum LineInput {
  /// The longest line accepted (32 MiB).
  public static let maximumLineLength = 32 << 20

  /// The lines of `fileDescriptor` (without `\n` or `\r\n`) until end of file.
  ///
  /// A blocking `read(2)` runs on its own thread so it never holds a cooperative-pool thread.
  public static func lines(fileDescriptor: Int32 = 0, maximumLength: Int = maximumLineLength)
    -> AsyncThrowingStream<Data, any Error>
  {
    AsyncThrowingStream { continuation in
      let thread = Thread {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
          let count = chunk.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
          if count < 0 {
            if errno == EINTR { continue }
            continuation.finish(throwing: TransportError.readFailed(errno: errno))
            return
          }
          if count == 0 { break }
          var start = 0
          for index in 0..<count where chunk[index] == UInt8(ascii: "\n") {
            pending += chunk[start..<index]
            start = index + 1
            if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
            continuation.yield(Data(pending))
            pending.removeAll(keepingCapacity: true)
          }
          pending += chunk[start..<count]
          if pending.count > maximumLength {
            continuation.finish(throwing: TransportError.lineTooLong(limit: maximumLength))
            return
          }
        }
        if !pending.isEmpty { continuation.yield(Data(pending)) }
        continuation.finish()
      }
      thread.name = "engram-mcp-stdin"
      thread.start()
    }
  }
}
