import EngramTestSupport
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct RecordTests {
  @Test func sessionAndMessageCRUD() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    var session = Session(externalID: "ext-1", title: "Trip", startedAt: t0)
    session.id = try connection.insert(session)
    #expect(try connection.session(externalID: "ext-1") == session)
    session.endedAt = t(10)
    try connection.update(session)
    #expect(try connection.fetch(Session.self, id: session.id!)?.endedAt == t(10))

    var message = Message(
      sessionID: session.id, role: .assistant, speaker: "Bot", content: "Hi", createdAt: t(1),
      tokenCount: 3,
      metadata: #"{"k":1}"#)
    message.id = try connection.insert(message)
    #expect(try connection.fetch(Message.self, id: message.id!) == message)
    #expect(try connection.count(Message.self, filter: RecordFilter(sessionID: session.id)) == 1)
    // Deleting the session cascades to its messages.
    #expect(try connection.delete(Session.self, id: session.id!))
    #expect(try connection.fetch(Message.self, id: message.id!) == nil)
    #expect(try !connection.delete(Session.self, id: session.id!))
  }

  @Test func paginationAndFilters() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let session = try connection.insert(Session(startedAt: t0))
    for index in 0..<25 {
      try connection.insert(
        Message(
          sessionID: index % 2 == 0 ? session : nil, role: .user, content: "m\(index)",
          createdAt: t(Int64(index))))
    }
    let page1 = try connection.list(Message.self, page: Page(limit: 10))
    let page2 = try connection.list(Message.self, page: Page(limit: 10, offset: 10))
    let after = try connection.list(Message.self, page: Page(limit: 10, afterID: page1.last!.id))
    #expect(page1.count == 10)
    #expect(page2 == after)
    #expect(page1.map(\.content).first == "m0")
    #expect(try connection.count(Message.self) == 25)
    #expect(try connection.count(Message.self, filter: RecordFilter(sessionID: session)) == 13)
    let window = RecordFilter(timeRange: (t0ms + 5)..<(t0ms + 8))
    #expect(
      try connection.list(Message.self, filter: window, page: .all).map(\.content) == ["m5", "m6", "m7"])
    #expect(try connection.recentMessages(limit: 2).map(\.content) == ["m23", "m24"])
    #expect(throws: StoreError.invalidPage(limit: -1, offset: 0)) {
      try connection.list(Message.self, page: Page(limit: -1))
    }
  }

  @Test func updateAndDeleteOfMissingRows() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    #expect(throws: StoreError.missingID(table: "messages")) {
      try connection.update(Message(role: .user, content: "x", createdAt: t0))
    }
    #expect(throws: StoreError.notFound(table: "messages", id: 77)) {
      try connection.update(Message(id: 77, role: .user, content: "x", createdAt: t0))
    }
  }

  @Test func memoryRoundTripAndValidation() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    var memory = Memory(
      kind: .preference, content: "Likes \"tea\"", importance: 0.9, createdAt: t0, validFrom: t0,
      sourceMessageIDs: [3, 4], scopeUser: "alice", tags: ["drink", "quote\"d"])
    memory.id = try connection.insert(memory)
    #expect(try connection.fetch(Memory.self, id: memory.id!) == memory)
    for bad in [-0.1, 1.01, Double.nan] {
      var invalid = memory
      invalid.id = nil
      invalid.importance = bad
      #expect(throws: StoreError.self) { try connection.insert(invalid) }
    }
    #expect(try connection.count(Memory.self) == 1)
    try connection.recordMemoryAccess(ids: [memory.id!], at: t(5))
    let newer = try connection.insert(Memory(kind: .preference, content: "Likes coffee", createdAt: t(6)))
    try connection.supersedeMemory(memory.id!, by: newer, at: t(6))
    let reread = try #require(try connection.fetch(Memory.self, id: memory.id!))
    #expect(reread.accessCount == 1)
    #expect(reread.lastAccessedAt == t(5))
    #expect(reread.supersededBy == newer)
  }

  @Test func unknownEnumValueIsATypedError() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let id = try connection.insert(AgentItem(kind: .note, title: "n", createdAt: t0))
    // Another tool drops the CHECK-guarded value in through a raw write with checks off.
    try connection.execute("PRAGMA ignore_check_constraints = ON")
    try connection.run("UPDATE agent_items SET kind = 'alien' WHERE id = ?1", [.integer(id)])
    #expect(throws: StoreError.invalidColumnValue(table: "agent_items", column: "kind", value: "alien")) {
      try connection.fetch(AgentItem.self, id: id)
    }
  }

  @Test func summaryTraceAgentItemCRUD() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    var summary = Summary(
      firstMessageID: 1, lastMessageID: 9, startAt: t0, endAt: t(9), content: "sum",
      structured: #"{"topics":[]}"#,
      createdAt: t0)
    summary.id = try connection.insert(summary)
    #expect(try connection.fetch(Summary.self, id: summary.id!) == summary)
    let messageID = try connection.insert(Message(role: .user, content: "x", createdAt: t0))
    try connection.setSummary(summary.id, forMessages: [messageID])
    #expect(try connection.fetch(Message.self, id: messageID)?.summaryID == summary.id)

    let trace1 = Trace(
      executionID: "e1", step: 2, skillID: "calc", status: .ok, startedAt: t0, durationMs: 1.5)
    let trace0 = Trace(executionID: "e1", step: 1, status: .timeout, startedAt: t0, error: "slow")
    try connection.insert(trace1)
    try connection.insert(trace0)
    #expect(try connection.traces(executionID: "e1").map(\.step) == [1, 2])
    #expect(try connection.traces(executionID: "e1").first?.error == "slow")

    var item = AgentItem(kind: .reminder, title: "Call mom", dueAt: t(100), createdAt: t0)
    item.id = try connection.insert(item)
    item.done = true
    try connection.update(item)
    #expect(try connection.fetch(AgentItem.self, id: item.id!) == item)
    #expect(try connection.count(AgentItem.self, filter: RecordFilter(timeRange: t0ms..<(t0ms + 101))) == 1)
  }

  @Test func preferencesSkillStateAndMeta() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    try connection.setPreference(Preference(key: "tz", value: "Europe/Paris", updatedAt: t0))
    try connection.setPreference(Preference(key: "lang", value: "fr", pinned: true, updatedAt: t0))
    try connection.setPreference(Preference(key: "tz", value: "Asia/Tokyo", updatedAt: t(1)))
    #expect(try connection.preference(key: "tz")?.value == "Asia/Tokyo")
    #expect(try connection.preferences(pinnedOnly: true).map(\.key) == ["lang"])
    #expect(try connection.preferenceCount() == 2)
    #expect(try connection.deletePreference(key: "tz"))
    #expect(try connection.preference(key: "tz") == nil)

    try connection.setSkillState(SkillState(skillID: "weather", enabled: false, updatedAt: t0))
    #expect(try connection.skillState(skillID: "weather")?.enabled == false)
    try connection.setSkillState(SkillState(skillID: "weather", enabled: true, updatedAt: t(1)))
    #expect(
      try connection.skillStates() == [SkillState(skillID: "weather", enabled: true, updatedAt: t(1))])
    #expect(try connection.skillStateCount() == 1)
    #expect(try connection.deleteSkillState(skillID: "weather"))

    try connection.setMeta("k", "v")
    #expect(try connection.meta("k") == "v")
    #expect(try connection.deleteMeta("k"))
    #expect(try connection.meta("k") == nil)
  }

  @Test func unfinishedPendingCallsAreCancelledAtRestart() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let pending = try connection.insert(
      PendingCall(executionID: "e", skillID: "mail", summary: "send", createdAt: t0))
    let confirmed = try connection.insert(
      PendingCall(
        executionID: "e", step: 2, skillID: "mail", summary: "send 2", status: .confirmed, createdAt: t0))
    try connection.insert(
      PendingCall(
        executionID: "e", step: 3, skillID: "mail", summary: "done", status: .executed, createdAt: t0))
    let cancelled = try connection.markUnfinishedPendingCallsCancelled(at: t(50))
    #expect(cancelled.map(\.id) == [pending, confirmed])
    #expect(cancelled.allSatisfy { $0.status == .cancelled && $0.updatedAt == t(50) })
    #expect(try connection.pendingCalls(status: .executed).count == 1)
    #expect(try connection.markUnfinishedPendingCallsCancelled().isEmpty)
    try connection.setPendingCallStatus(pending, to: .failed, error: "boom", at: t(60))
    #expect(try connection.fetch(PendingCall.self, id: pending)?.error == "boom")
    #expect(throws: StoreError.notFound(table: "pending_calls", id: 999)) {
      try connection.setPendingCallStatus(999, to: .failed, at: t0)
    }
  }
}
