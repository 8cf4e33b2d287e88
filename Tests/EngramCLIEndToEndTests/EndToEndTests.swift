import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

@Suite(.timeLimit(.minutes(5)), .watchdog) struct EndToEndTests {
  @Test func versionPrintsTheVersionAndSucceeds() async throws {
    let result = try await EngramBinary.run(["--version"])
    #expect(result.status == 0)
    #expect(result.standardOutput == "engram \(EngramCommandLine.version)\n")
    #expect(result.standardError.isEmpty)
  }

  @Test func unknownFlagExits64WithUsageOnStandardError() async throws {
    let result = try await EngramBinary.run(["version", "--frobnicate"], environment: ["NO_COLOR": "1"])
    #expect(result.status == 64)
    #expect(result.standardOutput.isEmpty)
    #expect(result.standardError.hasPrefix("engram: unknown option '--frobnicate'\nUsage: engram version"))
  }
}
