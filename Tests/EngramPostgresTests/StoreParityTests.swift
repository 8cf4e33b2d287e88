import EngramCore
import EngramPostgresTestSupport
import EngramTestSupport
import Foundation
import Testing

@testable import EngramPostgres
@testable import EngramStore

/// What the two stores share (the embedding entries' reading, the change log, the transaction
/// shape) gives the same results on both: the same writes to a SQLite file and a PostgreSQL
/// database, then the same reads, compared value for value.
@Suite("SQLite and PostgreSQL agree", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct StoreParityTests {
  /// What one store answered, in a form two stores can be compared by.
  struct Answers: Equatable {
    var entries: [EmbeddingEntry] = []
    var vectors: [[Float]] = []
    var entriesAbove: [Int64] = []
    var entriesByKey: [Int64] = []
    var changes: EmbeddingChanges?
    var changesBeforeTheSnapshot: EmbeddingChanges?
    var memories: [String] = []
    var stampReadBack = false
    var rows: [EmbeddingRow?] = []
  }

  struct Failure: Error {}

  /// Writes the same rows to `store` and reads them back through the shared queries.
  static func answers(of store: any MemoryStore) throws -> Answers {
    let ids = try store.writeTransaction { session in
      try session.configureEmbeddingModel(model: "hashing", dimension: 3, replace: false)
      let sessionID = try session.insert(Session(externalID: "s1", title: "Trip", startedAt: t0))
      let turns = try (0..<3).map { index in
        try session.insert(
          Message(
            sessionID: sessionID, role: .user, speaker: index == 1 ? "Ann" : nil, content: "turn \(index)",
            createdAt: t0.addingTimeInterval(Double(index))))
      }
      let old = try session.insert(Memory(kind: .fact, content: "lives in Lima", createdAt: t0))
      let new = try session.insert(
        Memory(
          kind: .preference, content: "likes tea", createdAt: t0, scopeUser: "ann", scopeAgent: "planner",
          sessionID: sessionID))
      var superseded = try #require(try session.fetch(Memory.self, id: old))
      superseded.supersededBy = new
      try session.update(superseded)
      let summary = try session.insert(
        Summary(
          sessionID: sessionID, firstMessageID: turns[0], lastMessageID: turns[2], startAt: t0, endAt: t0,
          content: "a trip", structured: "{}", createdAt: t0))
      let owners: [(ItemKind, Int64)] =
        turns.map { (.message, $0) } + [(.memory, old), (.memory, new), (.summary, summary)]
      for (position, owner) in owners.enumerated() {
        let value = Float(position)
        try session.upsertEmbedding(
          EmbeddingRow(
            ownerKind: owner.0, ownerID: owner.1, model: "hashing", vector: [value, -0.5, 1 / (value + 1)],
            createdAt: t0))
      }
      try session.quantizeEmbeddings(ownerKind: .message, ownerIDs: [turns[2]])
      return (turns: turns, old: old, new: new)
    }
    var answers = Answers()
    // The transaction shape: a failed inner part is undone alone, a failed write wholly.
    try store.writeTransaction { session in
      _ = try session.insert(Memory(kind: .fact, content: "kept", createdAt: t0))
      _ = try? session.atomically {
        _ = try session.insert(Memory(kind: .fact, content: "inner, undone", createdAt: t0))
        throw Failure()
      }
    }
    #expect(throws: Failure.self) {
      try store.writeTransaction { session in
        _ = try session.insert(Memory(kind: .fact, content: "outer, undone", createdAt: t0))
        throw Failure()
      }
    }
    // A snapshot stamp prunes the log; the changes after it are what a reader replays.
    let stamp = try store.writeTransaction { session in
      let stamp = VectorSnapshotStamp(
        token: 7, generation: try session.embeddingGeneration(), maxEmbeddingID: try session.maxEmbeddingID())
      try session.recordVectorSnapshot(stamp)
      return stamp
    }
    try store.writeTransaction { session in
      try session.upsertEmbedding(
        EmbeddingRow(
          ownerKind: .message, ownerID: ids.turns[0], model: "hashing", vector: [9, 9, 9], createdAt: t0))
      try session.deleteEmbedding(ownerKind: .memory, ownerID: ids.old)
    }
    try store.readTransaction { session in
      try session.forEachEmbedding { entry, vector in
        answers.entries.append(entry)
        answers.vectors.append(Array(vector))
      }
      try session.forEachEmbedding(idAbove: 2) { entry, _ in answers.entriesAbove.append(entry.embeddingID) }
      try session.forEachEmbedding(ids: [1], owners: [.init(kind: .memory, id: ids.new)]) { entry, _ in
        answers.entriesByKey.append(entry.embeddingID)
      }
      answers.changes = try session.embeddingChanges(after: stamp.generation)
      answers.changesBeforeTheSnapshot = try session.embeddingChanges(after: stamp.generation - 1)
      answers.memories = try session.list(Memory.self).map(\.content).sorted()
      answers.stampReadBack = try session.vectorSnapshotStamp() == stamp
      answers.rows = try [(ItemKind.memory, ids.new), (.message, ids.turns[2]), (.memory, ids.old)].map {
        try session.embedding(ownerKind: $0.0, ownerID: $0.1)
      }
    }
    return answers
  }

  @Test func theSameWritesReadTheSameThroughTheSharedQueries() throws {
    let folder = try ScratchFolder()
    var configuration = Database.Configuration()
    configuration.user = "ann"
    let database = try Database(path: folder.path("m.sqlite"), configuration: configuration)
    defer { database.close() }
    let sqlite = try Self.answers(of: database)
    let postgres = try PostgresTestServer.withDatabase { _, url in
      let store = try PostgresStore(uri: url, user: "ann")
      defer { store.close() }
      return try Self.answers(of: store)
    }
    // What the shared code must give, so that agreeing on something empty proves nothing.
    #expect(sqlite.entries.count == 5)
    #expect(sqlite.entries.map(\.ownerKind) == [.message, .message, .message, .memory, .summary])
    #expect(sqlite.entries.first { $0.ownerKind == .memory }?.scopeAgent == "planner")
    #expect(sqlite.vectors[0] == [9, 9, 9])
    #expect(sqlite.changes?.embeddingIDs.isEmpty == false)
    #expect(sqlite.changesBeforeTheSnapshot == nil)
    #expect(sqlite.memories == ["kept", "likes tea", "lives in Lima"])
    #expect(sqlite.stampReadBack)
    #expect(sqlite.rows.map { $0 == nil } == [false, false, true])
    #expect(sqlite == postgres)
  }
}
