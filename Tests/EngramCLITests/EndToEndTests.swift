import Foundation
import Testing

@testable import EngramCLI

@Suite struct EndToEndTests {
  @Test func versionPrintsTheVersionAndSucceeds() throws {
    let result = try EngramBinary.run(["--version"])
    #expect(result.status == 0)
    #expect(result.standardOutput == "engram \(EngramCommandLine.version)\n")
    #expect(result.standardError.isEmpty)
  }

  @Test func unknownFlagExits64WithUsageOnStandardError() throws {
    let result = try EngramBinary.run(["version", "--frobnicate"], environment: ["NO_COLOR": "1"])
    #expect(result.status == 64)
    #expect(result.standardOutput.isEmpty)
    #expect(result.standardError.hasPrefix("engram: unknown option '--frobnicate'\nUsage: engram version"))
  }
}
