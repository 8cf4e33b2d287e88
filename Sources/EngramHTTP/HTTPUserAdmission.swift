import Synchronization

/// Many users on one HTTP endpoint: chooses each request's user by its bearer token and
/// admits the request (or says why not). ``StreamableHTTPHandler`` asks it once per request,
/// before anything else of the request is read, and binds each session to the user who
/// opened it. The user is never taken from the request's content.
public protocol HTTPUserAdmission: Sendable {
  /// Admits one request carrying `token` (the `Authorization: Bearer` value).
  func admit(token: String) async -> HTTPAdmission
}

/// What ``HTTPUserAdmission/admit(token:)`` decided.
public enum HTTPAdmission: Sendable {
  /// Served by `ticket`'s provider; the ticket is released when the response is done.
  case admitted(HTTPAdmissionTicket)
  /// No user has the token (`401`).
  case unauthorized
  /// The user (or the server) is at a limit: `503` with `Retry-After: retryAfterSeconds`.
  case busy(retryAfterSeconds: Int, message: String)
  /// The user's memory could not be opened (`500`, with a line for the client).
  case failed(message: String)
}

/// One admitted request: whose it is, the tools serving it, and what to do when it is done.
public final class HTTPAdmissionTicket: Sendable {
  /// The user the token selected.
  public let user: String
  /// The tools of that user's memory.
  public let provider: any ToolProvider
  private let onRelease: Mutex<(@Sendable () -> Void)?>

  /// A ticket; `release` runs once, at ``release()`` or when the ticket is dropped.
  public init(user: String, provider: any ToolProvider, release: @escaping @Sendable () -> Void) {
    self.user = user
    self.provider = provider
    onRelease = Mutex(release)
  }

  /// Ends the request's hold (later calls do nothing).
  public func release() {
    let action = onRelease.withLock { value -> (@Sendable () -> Void)? in
      defer { value = nil }
      return value
    }
    action?()
  }

  deinit {
    release()
  }
}
