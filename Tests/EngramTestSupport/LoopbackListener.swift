import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A listening TCP socket on 127.0.0.1 with an ephemeral port, for test servers.
public enum LoopbackListener {
  /// Why the socket could not be opened: the failing call and errno.
  public struct Failure: Error, CustomStringConvertible {
    public var call: String
    public var errno: Int32
    public var description: String { "\(call) failed (errno \(errno))" }
  }

  /// Opens, binds and listens (backlog 16); the caller owns and closes the descriptor.
  public static func open() throws(Failure) -> (descriptor: Int32, port: UInt16) {
    #if canImport(Glibc)
      let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { throw Failure(call: "socket", errno: errno) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0, listen(descriptor, 16) == 0 else {
      let failure = Failure(call: "bind/listen", errno: errno)
      close(descriptor)
      throw failure
    }
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    return (descriptor, UInt16(bigEndian: address.sin_port))
  }
}
