import Engram
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// `engram users add|list|remove`: a token printed once, only its hash stored.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct UsersCommandTests {
  func run(_ arguments: [String]) async -> ToolRun {
    let output = CapturedOutput()
    let error = CapturedOutput()
    let tool = CommandLineTool(
      name: "engram", version: "9.9.9", abstract: "Memory.", commands: [UsersCommand.self])
    let streams = StandardStreams(
      output: output, error: error, input: LineReader(text: ""), terminal: Terminal(),
      environment: ["HOME": "/nonexistent"])
    let status = await tool.run(arguments, streams: streams)
    return ToolRun(status: status, output: output.text, error: error.text)
  }

  @Test func addPrintsATokenOnceThatSelectsTheUserAndRemoveTakesItAway() async throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("users")
    let added = await run(["users", "add", "ann", "--users", path])
    #expect(added.status == 0)
    let token = added.output.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(token.count == 64)
    #expect(try !String(contentsOfFile: path, encoding: .utf8).contains(token))
    #expect(try UsersFile.load(path: path).user(forToken: token) == "ann")
    #expect(await run(["users", "add", "bob", "--users", path]).status == 0)
    let again = await run(["users", "add", "ann", "--users", path])
    #expect(again.status == 1 && again.error.contains("already exists"))
    #expect(await run(["users", "list", "--users", path]).output == "ann\nbob\n")
    #expect(await run(["users", "remove", "ann", "--users", path]).status == 0)
    #expect(await run(["users", "list", "--users", path]).output == "bob\n")
    #expect(try UsersFile.load(path: path).user(forToken: token) == nil)
    #expect(await run(["users", "remove", "ann", "--users", path]).status == 1)
    #expect(await run(["users", "add", "../x", "--users", path]).status == 64)
  }
}
