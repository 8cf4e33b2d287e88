import EngramTestSupport
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A TCP port on 127.0.0.1 that accepts connections (through the kernel's backlog) and never
/// answers: a language-model server that keeps the agent in `planning` until it is stopped.
final class SilentListener {
  private let descriptor: Int32
  /// The port it listens on.
  let port: UInt16

  init() throws {
    (descriptor, port) = try LoopbackListener.open()
  }

  deinit { close(descriptor) }

  /// `http://127.0.0.1:PORT`.
  var url: String { "http://127.0.0.1:\(port)" }
}
