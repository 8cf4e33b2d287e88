import Foundation

/// Who may talk to an HTTP endpoint of Engram (`engram mcp --http`, `engram serve`): the
/// Origin rule against DNS rebinding and the bearer-token rule, shared by every handler on
/// the HTTP core.
///
/// - Origin: a request that carries `Origin` must name a loopback host (any port, http or
///   https) or one of `allowedOrigins`. With a bearer token configured, the request's own
///   origin (the `Host` it was sent to) is allowed too: a rebound name then still lacks the token.
/// - Token: with a bearer token configured, `Authorization: Bearer TOKEN` must match it
///   (compared in time independent of where the two differ).
public struct HTTPAccessPolicy: Sendable {
  /// Why a request was refused.
  public enum Refusal: Sendable, Hashable {
    /// `Origin` names a host that is neither loopback nor allowed (403).
    case origin(String)
    /// The bearer token is missing or wrong (401).
    case token
  }

  /// The token clients must send, or nil (loopback only).
  public var bearerToken: String?
  /// Origins allowed besides loopback ones (exact `scheme://host[:port]` strings).
  public var allowedOrigins: Set<String>

  /// Creates a policy.
  public init(bearerToken: String?, allowedOrigins: Set<String> = []) {
    self.bearerToken = bearerToken
    self.allowedOrigins = allowedOrigins
  }

  /// The policy of a transport configuration.
  public init(_ configuration: HTTPTransportConfiguration) {
    self.init(bearerToken: configuration.bearerToken, allowedOrigins: configuration.allowedOrigins)
  }

  /// Checks the Origin rule only (for what is public, such as the web app's static files).
  public func checkOrigin(_ request: HTTPRequest) -> Refusal? {
    guard let origin = request.header("origin") else { return nil }
    if isAllowed(origin: origin) { return nil }
    if bearerToken != nil, let host = request.header("host"), Self.isSameOrigin(origin, host: host) {
      return nil
    }
    return .origin(origin)
  }

  /// Checks both rules; nil when the request may be served.
  public func check(_ request: HTTPRequest) -> Refusal? {
    if let refusal = checkOrigin(request) { return refusal }
    if let token = bearerToken, !Self.isAuthorized(request.header("authorization"), token: token) {
      return .token
    }
    return nil
  }

  /// Whether `origin` names a loopback host (any port, http or https) or is allowed by name.
  public func isAllowed(origin: String) -> Bool {
    if allowedOrigins.contains(origin) { return true }
    guard let components = URLComponents(string: origin), let scheme = components.scheme?.lowercased(),
      scheme == "http" || scheme == "https", let host = components.host?.lowercased()
    else { return false }
    let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    return bare == "localhost" || bare == "::1"
      || bare.hasPrefix("127.") && bare.split(separator: ".").count == 4
  }

  /// Whether `origin`'s `host[:port]` is the `Host` header's.
  public static func isSameOrigin(_ origin: String, host: String) -> Bool {
    guard let schemeEnd = origin.range(of: "://") else { return false }
    return origin[schemeEnd.upperBound...].lowercased() == host.lowercased()
  }

  /// Whether `authorization` is `Bearer TOKEN` with `token`, compared in time independent
  /// of where the two differ.
  public static func isAuthorized(_ authorization: String?, token: String) -> Bool {
    guard let authorization else { return false }
    let parts = authorization.split(separator: " ", maxSplits: 1)
    guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
    return constantTimeEqual(Array(parts[1].trimmingCharacters(in: .whitespaces).utf8), Array(token.utf8))
  }

  /// Byte equality that reads every byte of `candidate` whatever the first difference.
  public static func constantTimeEqual(_ candidate: [UInt8], _ expected: [UInt8]) -> Bool {
    var difference = UInt8(truncatingIfNeeded: candidate.count ^ expected.count)
    difference |= UInt8(candidate.count == expected.count ? 0 : 1)
    for index in 0..<candidate.count {
      let other = expected.isEmpty ? 0 : expected[index % expected.count]
      difference |= candidate[index] ^ other
    }
    return difference == 0
  }
}
