import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The address of a disposition's handler (function pointers are not Equatable).
private func handlerAddress(_ action: sigaction) -> Int {
  #if canImport(Darwin)
    unsafeBitCast(action.__sigaction_u.__sa_handler, to: Int.self)
  #else
    unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
  #endif
}

/// Serialized: the flag and the SIGINT disposition are process-wide.
@Suite(.serialized, .timeLimit(.minutes(5)), .watchdog) struct InterruptionTests {
  @Test func requestAndResetDriveTheFlag() {
    Interruption.reset()
    #expect(!Interruption.isRequested)
    #expect(throws: Never.self) { try Interruption.check() }
    Interruption.request()
    #expect(Interruption.isRequested)
    #expect(throws: InterruptedError.self) { try Interruption.check() }
    Interruption.reset()
    #expect(!Interruption.isRequested)
  }

  @Test func uninstallRestoresThePreviousDisposition() {
    var before = sigaction()
    sigaction(SIGINT, nil, &before)
    Interruption.install()
    Interruption.install()
    Interruption.uninstall()
    var after = sigaction()
    sigaction(SIGINT, nil, &after)
    #expect(handlerAddress(after) == handlerAddress(before))
  }

  @Test func aRealSIGINTSetsTheFlagInsteadOfEndingTheProcess() {
    Interruption.install()
    defer {
      Interruption.uninstall()
      Interruption.reset()
    }
    #expect(!Interruption.isRequested)
    // The test runner blocks SIGINT on its threads; unblock it on this one only, so raise()
    // delivers here, synchronously, to the handler under test.
    var only = sigset_t()
    sigemptyset(&only)
    sigaddset(&only, SIGINT)
    var saved = sigset_t()
    pthread_sigmask(SIG_UNBLOCK, &only, &saved)
    raise(SIGINT)
    pthread_sigmask(SIG_SETMASK, &saved, nil)
    #expect(Interruption.isRequested)
  }
}
