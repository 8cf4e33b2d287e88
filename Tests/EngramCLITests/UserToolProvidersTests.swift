import Engram
import EngramEmbeddings
import EngramHTTP
import EngramMCP
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// A many-users server admits each request on its own: a routine waiting for confirmation is
/// confirmed by the user's next request, and never on another user's or another engine's tools.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct UserToolProvidersTests {
  @Test func aRoutineWaitingForOneRequestIsConfirmedByTheNext() async throws {
    let scratch = try ScratchFolder()
    let engine = try MemoryEngine(
      path: scratch.path("m.sqlite"),
      configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    _ = try await engine.agentRecords.saveRoutine(
      Routine(
        name: "wind down",
        steps: [Routine.Step(text: "at 9pm tomorrow remind me to stretch", skill: "reminder.create")],
        createdAt: Date()))
    let providers = UserToolProviders(capacity: 2)
    let planned = try await providers.provider(user: "ann", engine: engine).call(
      name: "routine_run", arguments: ["name": "wind down"])
    let id = try #require(planned.structuredContent?["execution_id"])
    #expect(planned.structuredContent?["status"] == "waiting")

    // Another user's tools do not hold Ann's run.
    await #expect(throws: ToolError.self) {
      try await providers.provider(user: "bob", engine: engine).call(
        name: "routine_run", arguments: ["name": "wind down", "confirm": id])
    }
    let confirmed = try await providers.provider(user: "ann", engine: engine).call(
      name: "routine_run", arguments: ["name": "wind down", "confirm": id])
    #expect(confirmed.structuredContent?["status"] == "finished")
    #expect(try await engine.agentRecords.items().map(\.title) == ["stretch"])
    await providers.provider(user: "ann", engine: engine).finish()
  }
}
