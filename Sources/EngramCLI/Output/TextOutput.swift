import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Somewhere text goes: standard output, standard error, or a buffer in tests.
public protocol TextOutput: Sendable {
  /// Writes `text` as UTF-8, unbuffered (the text is out when the call returns).
  func write(_ text: String)
}

/// Writes straight to a file descriptor with `write(2)`, retrying short writes and EINTR.
///
/// Nothing is buffered, so stdout and stderr interleave in the order they were written.
public struct FileDescriptorOutput: TextOutput {
  /// The descriptor written to.
  public let fileDescriptor: Int32

  /// Creates an output on `fileDescriptor` (not owned: never closed).
  public init(fileDescriptor: Int32) {
    self.fileDescriptor = fileDescriptor
  }

  /// The process's standard output.
  public static let standardOutput = FileDescriptorOutput(fileDescriptor: 1)
  /// The process's standard error.
  public static let standardError = FileDescriptorOutput(fileDescriptor: 2)

  /// Writes `text`; a closed pipe (EPIPE) or other error drops the rest silently.
  public func write(_ text: String) {
    var text = text
    text.withUTF8 { buffer in
      guard var base = buffer.baseAddress else { return }
      var remaining = buffer.count
      while remaining > 0 {
        #if canImport(Glibc)
          let written = Glibc.write(fileDescriptor, base, remaining)
        #else
          let written = Darwin.write(fileDescriptor, base, remaining)
        #endif
        if written < 0 {
          if errno == EINTR { continue }
          return
        }
        remaining -= written
        base += written
      }
    }
  }
}

/// Collects written text in memory; for tests and for rendering into a string.
public final class CapturedOutput: TextOutput {
  private let buffer = Mutex("")

  /// Creates an empty buffer.
  public init() {}

  /// Appends `text`.
  public func write(_ text: String) {
    buffer.withLock { $0 += text }
  }

  /// Everything written so far.
  public var text: String {
    buffer.withLock { $0 }
  }
}
