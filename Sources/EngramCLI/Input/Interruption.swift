import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Set by the SIGINT handler; read by long commands between transactions.
private let interruptRequested = Atomic<Bool>(false)

/// The SIGINT disposition before ``Interruption/install()``, restored by ``Interruption/uninstall()``.
private let previousAction = Mutex<sigaction?>(nil)

/// Ctrl-C handling: the first SIGINT sets a flag that long commands poll, the second ends the process.
///
/// The handler only does an atomic store (and `_exit` on the second signal), both async-signal-safe.
public enum Interruption {
  /// Whether Ctrl-C was pressed since ``install()`` or ``reset()``.
  public static var isRequested: Bool {
    interruptRequested.load(ordering: .acquiring)
  }

  /// Installs the SIGINT handler. Call once, before starting long work.
  public static func install() {
    interruptRequested.store(false, ordering: .releasing)
    setHandler { _ in
      if interruptRequested.exchange(true, ordering: .acquiringAndReleasing) {
        _exit(130)
      }
    }
  }

  /// Restores the SIGINT behaviour from before ``install()`` (by default the process ends at once).
  public static func uninstall() {
    guard
      var action = previousAction.withLock({ saved in
        defer { saved = nil }; return saved
      })
    else { return }
    sigaction(SIGINT, &action, nil)
  }

  /// Sets the flag as a SIGINT would (for tests and for commands that stop themselves).
  public static func request() {
    interruptRequested.store(true, ordering: .releasing)
  }

  /// Clears the flag.
  public static func reset() {
    interruptRequested.store(false, ordering: .releasing)
  }

  /// Throws ``InterruptedError`` when Ctrl-C was pressed; call between units of work.
  public static func check() throws(InterruptedError) {
    if isRequested { throw InterruptedError() }
  }

  private static func setHandler(_ handler: @convention(c) (Int32) -> Void) {
    var action = sigaction()
    sigemptyset(&action.sa_mask)
    #if canImport(Darwin)
      action.__sigaction_u.__sa_handler = handler
    #else
      action.__sigaction_handler.sa_handler = handler
    #endif
    // No SA_RESTART: a blocking read returns EINTR so a waiting prompt notices Ctrl-C.
    action.sa_flags = 0
    var old = sigaction()
    sigaction(SIGINT, &action, &old)
    // Keep the first saved disposition if install() is called twice.
    previousAction.withLock { saved in
      if saved == nil { saved = old }
    }
  }
}

/// A command stopped because Ctrl-C was pressed; the tool exits 130.
public struct InterruptedError: Error, Sendable, Hashable {
  /// Creates the error.
  public init() {}
}
