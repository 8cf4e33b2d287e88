import Foundation
import Testing

@testable import Engram

@Suite struct MemoryEngineAgentTests {
  @Test func agentItemsRoundTripWithDueDates() throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let due = Date(timeIntervalSince1970: 1_750_000_000)
    let reminder = try engine.addAgentItem(kind: .reminder, title: "send the minutes", due: due)
    let note = try engine.addAgentItem(kind: .note, title: "ideas", body: "a, b")
    #expect(try engine.agentItem(reminder)?.due == due)
    #expect(try engine.agentItem(reminder)?.kind == .reminder)
    #expect(try engine.agentItem(note)?.body == "a, b")
    #expect(try engine.agentItems(kind: .reminder).map(\.id) == [reminder])
    #expect(try engine.agentItems().map(\.id) == [reminder, note])
    try engine.setAgentItemDone(reminder)
    #expect(try engine.agentItem(reminder)?.done == true)
    #expect(throws: AgentRecordError.notFound(table: "agent_items", id: 999)) {
      try engine.setAgentItemDone(999)
    }
  }

  @Test func blankTitleIsRefusedAndNothingStored() throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    #expect(throws: AgentRecordError.emptyField("title")) {
      try engine.addAgentItem(kind: .reminder, title: "  \n")
    }
    #expect(try engine.agentItems().isEmpty)
  }

  @Test func tracesAreStoredInStepOrderAndValidated() throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let start = Date(timeIntervalSince1970: 1_750_000_000)
    try engine.recordTrace(
      AgentTraceRecord(
        executionID: "e1", step: 1, skillID: "time.now", arguments: "{}", result: "It's noon", status: .ok,
        startedAt: start, durationMs: 1.5))
    try engine.recordTrace(
      AgentTraceRecord(executionID: "e1", step: 0, result: "route", status: .ok, startedAt: start))
    try engine.recordTrace(AgentTraceRecord(executionID: "e2", step: 1, status: .failed, startedAt: start))
    let steps = try engine.traces(executionID: "e1")
    #expect(steps.map(\.step) == [0, 1])
    #expect(steps[1].skillID == "time.now")
    #expect(steps[1].durationMs == 1.5)
    #expect(steps[1].startedAt == start)
    #expect(try engine.recentTraces(limit: 1).first?.executionID == "e2")
    #expect(throws: AgentRecordError.invalidJSON(field: "arguments")) {
      try engine.recordTrace(
        AgentTraceRecord(executionID: "e3", step: 1, arguments: "[1]", status: .ok, startedAt: start))
    }
    #expect(throws: AgentRecordError.invalidDuration(-1)) {
      try engine.recordTrace(
        AgentTraceRecord(executionID: "e3", step: 1, status: .ok, startedAt: start, durationMs: -1))
    }
    #expect(throws: AgentRecordError.invalidStep(-1)) {
      try engine.recordTrace(AgentTraceRecord(executionID: "e3", step: -1, status: .ok, startedAt: start))
    }
    #expect(throws: AgentRecordError.emptyField("executionID")) {
      try engine.recordTrace(AgentTraceRecord(executionID: " ", step: 1, status: .ok, startedAt: start))
    }
    #expect(try engine.traces(executionID: "e3").isEmpty)
  }

  @Test func pendingCallsMoveThroughStatusesAndAreCancelledAtRestart() throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    do {
      let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
      defer { engine.close() }
      let done = try engine.addPendingCall(
        executionID: "e1", step: 1, skillID: "reminder.create", arguments: #"{"title":"x"}"#,
        summary: "Create?")
      _ = try engine.addPendingCall(
        executionID: "e2", step: 1, skillID: "note.create", arguments: "{}", summary: "Save?")
      #expect(try engine.pendingCall(done)?.status == .pending)
      try engine.setPendingCallStatus(done, to: .executed)
      #expect(try engine.pendingCall(done)?.status == .executed)
      #expect(try engine.pendingCalls(status: .pending).map(\.executionID) == ["e2"])
      #expect(throws: AgentRecordError.notFound(table: "pending_calls", id: 42)) {
        try engine.setPendingCallStatus(42, to: .cancelled)
      }
      #expect(throws: AgentRecordError.invalidJSON(field: "arguments")) {
        try engine.addPendingCall(executionID: "e3", step: 1, skillID: "s", arguments: "nope", summary: "?")
      }
      #expect(throws: AgentRecordError.emptyField("summary")) {
        try engine.addPendingCall(executionID: "e3", step: 1, skillID: "s", arguments: "{}", summary: "")
      }
      #expect(throws: AgentRecordError.invalidStep(0)) {
        try engine.addPendingCall(executionID: "e3", step: 0, skillID: "s", arguments: "{}", summary: "?")
      }
    }
    let reopened = try MemoryEngine(path: path, configuration: hashingConfiguration())
    defer { reopened.close() }
    let cancelled = try reopened.cancelUnfinishedPendingCalls()
    #expect(cancelled.map(\.executionID) == ["e2"])
    #expect(cancelled.first?.status == .cancelled)
    #expect(try reopened.pendingCalls(status: .pending).isEmpty)
    #expect(try reopened.pendingCalls(status: .executed).count == 1)
    #expect(try reopened.cancelUnfinishedPendingCalls().isEmpty)
  }
}
