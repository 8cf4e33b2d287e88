import EngramTestSupport
import Foundation
import Testing

@testable import Engram

@Suite(.timeLimit(.minutes(5)), .watchdog) struct MemoryEngineAgentTests {
  @Test func agentItemsRoundTripWithDueDates() throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let due = Date(timeIntervalSince1970: 1_750_000_000)
    let reminder = try engine.agentRecords.addItem(kind: .reminder, title: "send the minutes", due: due)
    let note = try engine.agentRecords.addItem(kind: .note, title: "ideas", body: "a, b")
    #expect(try engine.agentRecords.item(reminder)?.dueAt == due)
    #expect(try engine.agentRecords.item(reminder)?.kind == .reminder)
    #expect(try engine.agentRecords.item(note)?.body == "a, b")
    #expect(try engine.agentRecords.items(kind: .reminder).map(\.id) == [reminder])
    #expect(try engine.agentRecords.items().map(\.id) == [reminder, note])
    try engine.agentRecords.setItemDone(reminder)
    #expect(try engine.agentRecords.item(reminder)?.done == true)
    #expect(throws: AgentRecordError.notFound(table: "agent_items", id: 999)) {
      try engine.agentRecords.setItemDone(999)
    }
  }

  @Test func blankTitleIsRefusedAndNothingStored() throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    #expect(throws: AgentRecordError.emptyField("title")) {
      try engine.agentRecords.addItem(kind: .reminder, title: "  \n")
    }
    #expect(try engine.agentRecords.items().isEmpty)
  }

  @Test func tracesAreStoredInStepOrderAndValidated() throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let start = Date(timeIntervalSince1970: 1_750_000_000)
    try engine.agentRecords.recordTrace(
      Trace(
        executionID: "e1", step: 1, skillID: "time.now", arguments: "{}", result: "It's noon", status: .ok,
        startedAt: start, durationMs: 1.5))
    try engine.agentRecords.recordTrace(
      Trace(executionID: "e1", step: 0, result: "route", status: .ok, startedAt: start))
    try engine.agentRecords.recordTrace(
      Trace(executionID: "e2", step: 1, status: .failed, startedAt: start))
    let steps = try engine.agentRecords.traces(executionID: "e1")
    #expect(steps.map(\.step) == [0, 1])
    #expect(steps[1].skillID == "time.now")
    #expect(steps[1].durationMs == 1.5)
    #expect(steps[1].startedAt == start)
    #expect(try engine.agentRecords.recentTraces(limit: 1).first?.executionID == "e2")
    #expect(throws: AgentRecordError.invalidJSON(field: "arguments")) {
      try engine.agentRecords.recordTrace(
        Trace(executionID: "e3", step: 1, arguments: "[1]", status: .ok, startedAt: start))
    }
    #expect(throws: AgentRecordError.invalidDuration(-1)) {
      try engine.agentRecords.recordTrace(
        Trace(executionID: "e3", step: 1, status: .ok, startedAt: start, durationMs: -1))
    }
    #expect(throws: AgentRecordError.invalidStep(-1)) {
      try engine.agentRecords.recordTrace(
        Trace(executionID: "e3", step: -1, status: .ok, startedAt: start))
    }
    #expect(throws: AgentRecordError.emptyField("executionID")) {
      try engine.agentRecords.recordTrace(
        Trace(executionID: " ", step: 1, status: .ok, startedAt: start))
    }
    #expect(try engine.agentRecords.traces(executionID: "e3").isEmpty)
  }

  @Test func pendingCallsMoveThroughStatusesAndAreCancelledAtRestart() throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    do {
      let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
      defer { engine.close() }
      let done = try engine.agentRecords.addPendingCall(
        executionID: "e1", step: 1, skillID: "reminder.create", arguments: #"{"title":"x"}"#,
        summary: "Create?")
      _ = try engine.agentRecords.addPendingCall(
        executionID: "e2", step: 1, skillID: "note.create", arguments: "{}", summary: "Save?")
      #expect(try engine.agentRecords.pendingCall(done)?.status == .pending)
      try engine.agentRecords.setPendingCallStatus(done, to: .executed)
      #expect(try engine.agentRecords.pendingCall(done)?.status == .executed)
      #expect(try engine.agentRecords.pendingCalls(status: .pending).map(\.executionID) == ["e2"])
      #expect(throws: AgentRecordError.notFound(table: "pending_calls", id: 42)) {
        try engine.agentRecords.setPendingCallStatus(42, to: .cancelled)
      }
      #expect(throws: AgentRecordError.invalidJSON(field: "arguments")) {
        try engine.agentRecords.addPendingCall(
          executionID: "e3", step: 1, skillID: "s", arguments: "nope", summary: "?")
      }
      #expect(throws: AgentRecordError.emptyField("summary")) {
        try engine.agentRecords.addPendingCall(
          executionID: "e3", step: 1, skillID: "s", arguments: "{}", summary: "")
      }
      #expect(throws: AgentRecordError.invalidStep(0)) {
        try engine.agentRecords.addPendingCall(
          executionID: "e3", step: 0, skillID: "s", arguments: "{}", summary: "?")
      }
    }
    let reopened = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { reopened.close() }
    let cancelled = try reopened.agentRecords.cancelUnfinishedPendingCalls()
    #expect(cancelled.map(\.executionID) == ["e2"])
    #expect(cancelled.first?.status == .cancelled)
    #expect(try reopened.agentRecords.pendingCalls(status: .pending).isEmpty)
    #expect(try reopened.agentRecords.pendingCalls(status: .executed).count == 1)
    #expect(try reopened.agentRecords.cancelUnfinishedPendingCalls().isEmpty)
  }
}
