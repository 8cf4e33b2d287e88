import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A TCP port on 127.0.0.1 that accepts connections (through the kernel's backlog) and never
/// answers: a language-model server that keeps the agent in `planning` until it is stopped.
final class SilentListener {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  private let descriptor: Int32
  /// The port it listens on.
  let port: UInt16

  init() throws {
    #if canImport(Glibc)
      let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { throw Failure(description: "socket failed (errno \(errno))") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0, listen(descriptor, 16) == 0 else {
      close(descriptor)
      throw Failure(description: "bind/listen failed (errno \(errno))")
    }
    var actual = sockaddr_in()
    var actualLength = length
    _ = withUnsafeMutablePointer(to: &actual) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
    }
    self.descriptor = descriptor
    port = UInt16(bigEndian: actual.sin_port)
  }

  deinit { close(descriptor) }

  /// `http://127.0.0.1:PORT`.
  var url: String { "http://127.0.0.1:\(port)" }
}
