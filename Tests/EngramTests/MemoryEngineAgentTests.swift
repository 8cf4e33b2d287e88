import EngramTestSupport
import Foundation
import Testing

@testable import Engram

@Suite(.timeLimit(.minutes(5)), .watchdog) struct MemoryEngineAgentTests {
  @Test func agentItemsRoundTripWithDueDates() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let due = Date(timeIntervalSince1970: 1_750_000_000)
    let reminder = try await engine.agentRecords.addItem(kind: .reminder, title: "send the minutes", due: due)
    let note = try await engine.agentRecords.addItem(kind: .note, title: "ideas", body: "a, b")
    #expect(try await engine.agentRecords.item(reminder)?.dueAt == due)
    #expect(try await engine.agentRecords.item(reminder)?.kind == .reminder)
    #expect(try await engine.agentRecords.item(note)?.body == "a, b")
    #expect(try await engine.agentRecords.items(kind: .reminder).map(\.id) == [reminder])
    #expect(try await engine.agentRecords.items().map(\.id) == [reminder, note])
    try await engine.agentRecords.setItemDone(reminder)
    #expect(try await engine.agentRecords.item(reminder)?.done == true)
    await #expect(throws: AgentRecordError.notFound(table: "agent_items", id: 999)) {
      try await engine.agentRecords.setItemDone(999)
    }
  }

  @Test func blankTitleIsRefusedAndNothingStored() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    await #expect(throws: AgentRecordError.emptyField("title")) {
      try await engine.agentRecords.addItem(kind: .reminder, title: "  \n")
    }
    #expect(try await engine.agentRecords.items().isEmpty)
  }

  @Test func tracesAreStoredInStepOrderAndValidated() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let start = Date(timeIntervalSince1970: 1_750_000_000)
    try await engine.agentRecords.recordTrace(
      Trace(
        executionID: "e1", step: 1, skillID: "time.now", arguments: "{}", result: "It's noon", status: .ok,
        startedAt: start, durationMs: 1.5))
    try await engine.agentRecords.recordTrace(
      Trace(executionID: "e1", step: 0, result: "route", status: .ok, startedAt: start))
    try await engine.agentRecords.recordTrace(
      Trace(executionID: "e2", step: 1, status: .failed, startedAt: start))
    let steps = try await engine.agentRecords.traces(executionID: "e1")
    #expect(steps.map(\.step) == [0, 1])
    #expect(steps[1].skillID == "time.now")
    #expect(steps[1].durationMs == 1.5)
    #expect(steps[1].startedAt == start)
    #expect(try await engine.agentRecords.recentTraces(limit: 1).first?.executionID == "e2")
    await #expect(throws: AgentRecordError.invalidJSON(field: "arguments")) {
      try await engine.agentRecords.recordTrace(
        Trace(executionID: "e3", step: 1, arguments: "[1]", status: .ok, startedAt: start))
    }
    await #expect(throws: AgentRecordError.invalidDuration(-1)) {
      try await engine.agentRecords.recordTrace(
        Trace(executionID: "e3", step: 1, status: .ok, startedAt: start, durationMs: -1))
    }
    await #expect(throws: AgentRecordError.invalidStep(-1)) {
      try await engine.agentRecords.recordTrace(
        Trace(executionID: "e3", step: -1, status: .ok, startedAt: start))
    }
    await #expect(throws: AgentRecordError.emptyField("executionID")) {
      try await engine.agentRecords.recordTrace(
        Trace(executionID: " ", step: 1, status: .ok, startedAt: start))
    }
    #expect(try await engine.agentRecords.traces(executionID: "e3").isEmpty)
  }

  @Test func pendingCallsMoveThroughStatusesAndAreCancelledAtRestart() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    do {
      let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
      defer { engine.close() }
      let done = try await engine.agentRecords.addPendingCall(
        executionID: "e1", step: 1, skillID: "reminder.create", arguments: #"{"title":"x"}"#,
        summary: "Create?")
      _ = try await engine.agentRecords.addPendingCall(
        executionID: "e2", step: 1, skillID: "note.create", arguments: "{}", summary: "Save?")
      #expect(try await engine.agentRecords.pendingCall(done)?.status == .pending)
      try await engine.agentRecords.setPendingCallStatus(done, to: .executed)
      #expect(try await engine.agentRecords.pendingCall(done)?.status == .executed)
      #expect(try await engine.agentRecords.pendingCalls(status: .pending).map(\.executionID) == ["e2"])
      await #expect(throws: AgentRecordError.notFound(table: "pending_calls", id: 42)) {
        try await engine.agentRecords.setPendingCallStatus(42, to: .cancelled)
      }
      await #expect(throws: AgentRecordError.invalidJSON(field: "arguments")) {
        try await engine.agentRecords.addPendingCall(
          executionID: "e3", step: 1, skillID: "s", arguments: "nope", summary: "?")
      }
      await #expect(throws: AgentRecordError.emptyField("summary")) {
        try await engine.agentRecords.addPendingCall(
          executionID: "e3", step: 1, skillID: "s", arguments: "{}", summary: "")
      }
      await #expect(throws: AgentRecordError.invalidStep(0)) {
        try await engine.agentRecords.addPendingCall(
          executionID: "e3", step: 0, skillID: "s", arguments: "{}", summary: "?")
      }
    }
    let reopened = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { reopened.close() }
    let cancelled = try await reopened.agentRecords.cancelUnfinishedPendingCalls()
    #expect(cancelled.map(\.executionID) == ["e2"])
    #expect(cancelled.first?.status == .cancelled)
    #expect(try await reopened.agentRecords.pendingCalls(status: .pending).isEmpty)
    #expect(try await reopened.agentRecords.pendingCalls(status: .executed).count == 1)
    #expect(try await reopened.agentRecords.cancelUnfinishedPendingCalls().isEmpty)
  }
}
