#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension addrinfo {
  /// `getaddrinfo(3)` hints for TCP (stream) sockets of any address family, with `flags`
  /// (`AI_PASSIVE` to listen): the socket type's spelling differs between Glibc and Darwin.
  public static func streamHints(flags: Int32 = 0) -> addrinfo {
    var hints = addrinfo()
    hints.ai_flags = flags
    hints.ai_family = AF_UNSPEC
    #if canImport(Glibc)
      hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    #else
      hints.ai_socktype = SOCK_STREAM
    #endif
    return hints
  }
}
