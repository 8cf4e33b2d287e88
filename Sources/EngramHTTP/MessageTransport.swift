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

extension TransportError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .readFailed(let code): return "reading standard input failed (\(String(cString: strerror(code))))"
    case .writeFailed(let code): return "writing standard output failed (\(String(cString: strerror(code))))"
    case .lineTooLong(let limit): return "a message longer than \(LineInput.describe(bytes: limit)) arrived"
    }
  }
}

/// Reads newline-delimited messages from a file descriptor on a dedicated thread.
public enum LineInput {
  /// The longest line accepted (32 MiB).
  public static let maximumLineLength = 32 << 20

  /// What the reader found: a line, or a line over the limit that was skipped whole.
  public enum Message: Sendable, Hashable {
    /// A line (without `\n` or `\r\n`).
    case line(Data)
    /// A line of `bytes` bytes, over the limit: its bytes were read and dropped, never held
    /// whole in memory. JSON text cannot hold a raw newline, so the next line starts a new
    /// message and the stream stays in step.
    case tooLong(bytes: Int)
  }

  /// `n MiB` (or bytes) for messages.
  static func describe(bytes: Int) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
    return "\(bytes) bytes"
  }

  /// The messages of `fileDescriptor` until end of file; an overlong line becomes one
  /// `.tooLong` and reading goes on with the next line.
  ///
  /// A blocking `read(2)` runs on its own thread so it never holds a cooperative-pool thread.
  public static func messages(fileDescriptor: Int32 = 0, maximumLength: Int = maximumLineLength)
    -> AsyncThrowingStream<Message, any Error>
  {
    AsyncThrowingStream { continuation in
      let thread = Thread {
        var pending: [UInt8] = []
        // Bytes of the overlong line being skipped (0 when none).
        var skipped = 0
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
            let length = skipped + pending.count + (index - start)
            if skipped > 0 || length > maximumLength {
              continuation.yield(.tooLong(bytes: length))
            } else {
              pending += chunk[start..<index]
              if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
              continuation.yield(.line(Data(pending)))
            }
            pending.removeAll(keepingCapacity: pending.count <= 65_536)
            skipped = 0
            start = index + 1
          }
          if skipped > 0 {
            skipped += count - start
          } else {
            pending += chunk[start..<count]
            if pending.count > maximumLength {
              skipped = pending.count
              pending = []
            }
          }
        }
        if skipped > 0 {
          continuation.yield(.tooLong(bytes: skipped))
        } else if !pending.isEmpty {
          continuation.yield(
            pending.count > maximumLength ? .tooLong(bytes: pending.count) : .line(Data(pending)))
        }
        continuation.finish()
      }
      thread.name = "engram-mcp-stdin"
      thread.start()
    }
  }

  /// The lines of `fileDescriptor` (without `\n` or `\r\n`) until end of file; a line over
  /// `maximumLength` ends the stream with ``TransportError/lineTooLong(limit:)``.
  public static func lines(fileDescriptor: Int32 = 0, maximumLength: Int = maximumLineLength)
    -> AsyncThrowingStream<Data, any Error>
  {
    let messages = messages(fileDescriptor: fileDescriptor, maximumLength: maximumLength)
    return AsyncThrowingStream { continuation in
      let task = Task {
        do {
          for try await message in messages {
            switch message {
            case .line(let data): continuation.yield(data)
            case .tooLong:
              continuation.finish(throwing: TransportError.lineTooLong(limit: maximumLength))
              return
            }
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
