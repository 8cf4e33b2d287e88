import Engram
import EngramAgent
import EngramEmbeddings
import EngramHTTP
import EngramTestSupport
import Foundation
import Testing

@testable import EngramMCP

/// Routines over MCP (issue 47, item 4): listed and run by name; a routine whose steps change
/// something waits for one confirmation carrying the plan's execution id, and a stale id is
/// refused. The phrases are written for these tests.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RoutineToolTests {
  let scratch: ScratchFolder
  let engine: MemoryEngine
  let provider: EngineToolProvider

  init() async throws {
    scratch = try ScratchFolder()
    engine = try MemoryEngine(
      path: scratch.path("m.sqlite"),
      configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    provider = EngineToolProvider(engine: engine)
    _ = try await engine.agentRecords.saveRoutine(
      Routine(
        name: "wind down",
        steps: [
          Routine.Step(text: "remind me tomorrow at 9pm to stretch", skill: "reminder.create"),
          Routine.Step(text: "show my reminders", skill: "reminder.list"),
        ], createdAt: Date()))
    _ = try await engine.agentRecords.saveRoutine(
      Routine(
        name: "glance", steps: [Routine.Step(text: "show my reminders", skill: "reminder.list")],
        createdAt: Date()))
  }

  func call(_ name: String, _ arguments: [String: JSONValue]) async throws -> ToolResult {
    try await provider.call(name: name, arguments: arguments)
  }

  func refusal(_ name: String, _ arguments: [String: JSONValue]) async -> String? {
    do {
      _ = try await call(name, arguments)
      return nil
    } catch let error as ToolError {
      return error.message
    } catch {
      return "not a tool error"
    }
  }

  @Test func routinesAreListedWithTheirSteps() async throws {
    let listed = try await call("routine_list", [:])
    let routines = try #require(listed.structuredContent?["routines"]?.arrayValue)
    #expect(routines.compactMap { $0["name"]?.stringValue }.sorted() == ["glance", "wind down"])
    let wind = try #require(routines.first { $0["name"] == "wind down" })
    #expect(
      wind["steps"]?.arrayValue?.compactMap { $0["skill"]?.stringValue } == [
        "reminder.create", "reminder.list",
      ])
    #expect(wind["enabled"] == true)
  }

  @Test func aLookUpRoutineRunsAtOnce() async throws {
    let ran = try await call("routine_run", ["name": "Glance"])
    #expect(ran.structuredContent?["status"] == "finished")
    #expect(ran.structuredContent?["routine"] == "glance")
    await provider.finish()
  }

  @Test func aRoutineThatChangesSomethingWaitsForOneConfirmationByExecutionID() async throws {
    let planned = try await call("routine_run", ["name": "wind down"])
    #expect(planned.structuredContent?["status"] == "waiting")
    let id = try #require(planned.structuredContent?["execution_id"]?.stringValue)
    #expect(planned.structuredContent?["plan"]?.stringValue?.contains("stretch") == true)
    #expect(try await engine.agentRecords.items().isEmpty)  // nothing changed before the confirmation

    let wrong = await refusal("routine_run", ["name": "wind down", "confirm": "not-the-id"])
    #expect(wrong?.contains("stale") == true, "\(wrong ?? "")")
    #expect(try await engine.agentRecords.items().isEmpty)

    let confirmed = try await call("routine_run", ["name": "wind down", "confirm": .string(id)])
    #expect(confirmed.structuredContent?["status"] == "finished")
    #expect(try await engine.agentRecords.items().map(\.title) == ["stretch"])

    // The same id again is stale: the plan ran.
    let again = await refusal("routine_run", ["name": "wind down", "confirm": .string(id)])
    #expect(again?.contains("stale") == true)
    #expect(try await engine.agentRecords.items().count == 1)
    await provider.finish()
  }

  @Test func aNewRunMakesTheWaitingIDStale() async throws {
    let first = try await call("routine_run", ["name": "wind down"])
    let id = try #require(first.structuredContent?["execution_id"]?.stringValue)
    _ = try await call("routine_run", ["name": "wind down"])
    let stale = await refusal("routine_run", ["name": "wind down", "confirm": .string(id)])
    #expect(stale?.contains("stale") == true)
    #expect(try await engine.agentRecords.items().isEmpty)
    await provider.finish()
  }

  @Test func anUnknownOrDisabledRoutineIsASentence() async throws {
    let unknown = await refusal("routine_run", ["name": "morning stretch"])
    #expect(unknown?.contains("routine_list") == true)
    _ = try await engine.agentRecords.setRoutineEnabled(false, named: "glance")
    let disabled = await refusal("routine_run", ["name": "glance"])
    #expect(disabled?.contains("disabled") == true)
  }
}
