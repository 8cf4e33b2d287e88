import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// Every command's error paths end in a sentence: a missing memory, a damaged file, an
/// unknown option, a bad value. No Swift type or case text reaches the terminal.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct CommandErrorSentenceTests {
  @Test func everyCommandFailsWithASentence() async throws {
    let scratch = try ScratchFolder()
    let damaged = try scratch.write("damaged.sqlite", "this is not a database")
    let missing = scratch.path("missing/memory.sqlite")
    var failures = 0
    for command in EngramCommandLine.commands {
      let name = command.configuration.commandName
      // Servers and the chat serve until stopped; their refusals are tested on their own
      // (MCPHTTPCommandTests, ServeCommandTests, ChatCommandTests).
      guard !["version", "demo", "mcp", "chat", "serve"].contains(name) else { continue }
      let takesDatabase = command.declaredConfiguration.options.contains { $0.name == "db" }
      var attempts: [[String]] = [[name, "--no-such-option"]]
      if takesDatabase {
        attempts += [
          [name, "--db", missing], [name, "--db", damaged], [name, "--db", damaged, "--now", "soon"],
        ]
      }
      for arguments in attempts {
        let result = try await EngramBinary.run(arguments, environment: ScratchFolder.environment)
        guard result.status != 0 else { continue }
        failures += 1
        #expect(!result.standardError.isEmpty, "\(arguments)")
        #expect(
          SwiftInternals.find(in: result.standardError).isEmpty, "\(arguments): \(result.standardError)")
      }
    }
    #expect(failures > 30)
  }
}
