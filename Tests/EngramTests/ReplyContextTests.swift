import EngramEmbeddings
import EngramStore
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// A turn's embedded text carries the start of the turn before it in its session; every
/// way a turn gets its vector (ingest, an appended turn, a deferred one, doctor, reindex)
/// must agree on which turn that is, or a reindex would silently change the ranking.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ReplyContextTests {
  /// Every stored vector by owner.
  func vectors(_ path: String) throws -> [String: [Float]] {
    let connection = try Connection(path: path, mode: .readOnly)
    var found: [String: [Float]] = [:]
    try connection.forEachEmbedding { entry, vector in
      found["\(entry.ownerKind.rawValue)-\(entry.ownerID)"] = Array(vector)
    }
    return found
  }

  /// Two sessions whose turns interleave in time, two turns at the same minute, a turn
  /// with no session.
  func conversation() -> ConversationFile {
    let start = Date(timeIntervalSince1970: 1_735_689_600)
    var sessions = [
      ConversationSession(name: "a", startedAt: start, turns: []),
      ConversationSession(name: "b", startedAt: start, turns: []),
    ]
    for index in 0..<12 {
      let session = index % 2
      let minute = Double(index / 3)
      sessions[session].turns.append(
        ConversationTurn(
          role: index % 4 < 2 ? "user" : "assistant",
          content: "turn \(index) about the lake and the boat \(index * 7)",
          speaker: index % 4 < 2 ? "Ann" : "Bo", timestamp: start.addingTimeInterval(minute * 60),
          sourceLine: index + 1))
    }
    return ConversationFile(sessions: sessions, format: .jsonl)
  }

  @Test func everyPathEmbedsATurnWithTheTurnBeforeItInItsSession() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("m.sqlite")
    let embedder = try HashingEmbedder(dimension: 256)
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration())
    _ = try await engine.conversation.ingest(conversation(), path: "export.jsonl")
    // Appended turns: one embedded at once, one deferred, both after the ingested ones.
    let session = try await engine.conversation.startSession(name: "live")
    let later = Date(timeIntervalSince1970: 1_735_689_600 + 3600)
    _ = try await engine.conversation.appendTurn(
      role: "user", content: "and then the storm came", speaker: "Ann", session: session, at: later)
    _ = try await engine.conversation.appendTurn(
      role: "assistant", content: "was the boat safe?", speaker: "Bo", session: session,
      at: later.addingTimeInterval(60), embedNow: false)
    #expect(try await engine.conversation.embedPendingTurns() == 1)
    _ = try await engine.conversation.appendTurn(
      role: "user", content: "a turn of no session", speaker: "Ann")
    await engine.close()
    let stored = try vectors(path)

    // What each turn should carry, read independently: the session's turns in time order.
    let connection = try Connection(path: path, mode: .readOnly)
    let messages = try connection.list(Message.self, page: Page(limit: 1000))
    #expect(messages.count == 15)
    #expect(try connection.list(Session.self).count == 3)
    var expected: [String: [Float]] = [:]
    var following = 0
    for message in messages {
      let previous = messages.filter {
        $0.sessionID != nil && $0.sessionID == message.sessionID
          && ($0.createdAt, $0.id!) < (message.createdAt, message.id!)
      }.max { ($0.createdAt, $0.id!) < ($1.createdAt, $1.id!) }
      let text = DocumentText.make(
        speaker: message.speaker, content: message.content, date: message.createdAt,
        previous: previous?.content)
      expected["message-\(message.id!)"] = try await embedder.embed([text])[0]
      if previous != nil { following += 1 }
    }
    // Every turn but the first of each of the three sessions (and the one of none).
    #expect(following == 11)
    #expect(stored == expected)

    // Reindexing (every vector again from the table) and doctor's embedding of a missing
    // vector agree.
    let again = try await MemoryEngine.reindex(path: path, configuration: hashingConfiguration())
    await again.close()
    #expect(try vectors(path) == expected)
    let writer = try Connection(path: path)
    try writer.execute("DELETE FROM embeddings")
    let repaired = try MemoryEngine(path: path, configuration: hashingConfiguration())
    _ = try await repaired.doctor(repair: true)
    await repaired.close()
    #expect(try vectors(path) == expected)
  }

  @Test func thePreviousTurnIsTheLatestBeforeItInTimeThenId() throws {
    let folder = try TemporaryFolder()
    let connection = try Connection(path: folder.path("m.sqlite"))
    _ = try Migrator.migrate(connection)
    let session = try connection.insert(Session(externalID: "s", startedAt: Date(timeIntervalSince1970: 0)))
    let other = try connection.insert(Session(externalID: "t", startedAt: Date(timeIntervalSince1970: 0)))
    func add(_ text: String, _ seconds: Double, session: Int64) throws -> Int64 {
      try connection.insert(
        Message(
          sessionID: session, role: .user, content: text, createdAt: Date(timeIntervalSince1970: seconds),
          tokenCount: 1))
    }
    let first = try add("first", 10, session: session)
    let laterInserted = try add("earlier in time", 5, session: session)
    let sameMinute = try add("same time as first", 10, session: session)
    _ = try add("other session", 9, session: other)
    let at = { (seconds: Double, id: Int64?) in
      try connection.previousTurnContent(
        sessionID: session, time: Date(timeIntervalSince1970: seconds), id: id)
    }
    #expect(try at(5, laterInserted) == nil)
    #expect(try at(10, first) == "earlier in time")
    #expect(try at(10, sameMinute) == "first")
    // A turn not stored yet follows the latest at or before its time.
    #expect(try at(10, nil) == "same time as first")
    #expect(try at(7, nil) == "earlier in time")
    #expect(try at(1, nil) == nil)
  }
}
