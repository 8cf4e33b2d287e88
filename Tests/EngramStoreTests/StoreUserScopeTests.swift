import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// Every store operation of one user (migration 6, `Database.Configuration.user`) reads and
/// touches only that user's rows, even when both users wrote the same words.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct StoreUserScopeTests {
  static func open(_ path: String, user: String) throws -> Database {
    var configuration = Database.Configuration()
    configuration.user = user
    return try Database(path: path, configuration: configuration)
  }

  /// One session, two turns (one by Ann), one memory and their embeddings, written by `database`'s user.
  static func fill(_ database: Database, word: String) throws -> (
    session: Int64, turns: [Int64], memory: Int64
  ) {
    try database.write { connection in
      if try connection.embeddingModel() == nil {
        try connection.configureEmbeddingModel(model: "m", dimension: 2)
      }
      let session = try connection.insert(Session(externalID: "shared-name", startedAt: t0))
      let turns = try connection.insert(contentsOf: [
        Message(sessionID: session, role: .user, speaker: "Ann", content: "walrus \(word)", createdAt: t(1)),
        Message(sessionID: session, role: .assistant, content: "walrus reply \(word)", createdAt: t(2)),
      ])
      let memory = try connection.insert(Memory(kind: .fact, content: "walrus fact \(word)", createdAt: t(3)))
      for (kind, id) in [(ItemKind.message, turns[0]), (.memory, memory)] {
        try connection.upsertEmbedding(
          EmbeddingRow(ownerKind: kind, ownerID: id, model: "m", vector: [1, 0], createdAt: t0))
      }
      return (session, turns, memory)
    }
  }

  @Test func searchesListsAndWritesStayInsideOneUser() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("m.sqlite")
    let ann = try Self.open(path, user: "ann")
    defer { ann.close() }
    let bob = try Self.open(path, user: "bob")
    defer { bob.close() }
    let a = try Self.fill(ann, word: "apple")
    let b = try Self.fill(bob, word: "banana")

    try ann.read { connection in
      // Keyword search: the shared word finds only Ann's rows; Bob's word finds nothing.
      let hits = try connection.searchText("walrus", kinds: Set(ItemKind.allCases), limit: 10)
      #expect(Set(hits.map(\.ownerID)) == Set(a.turns + [a.memory]))
      #expect(try connection.searchText("banana", kinds: Set(ItemKind.allCases), limit: 10).isEmpty)
      #expect(
        try connection.searchText("walrus", kinds: [.message], limit: 10, sessionID: b.session).isEmpty)
      // Records by id, lists, counts, named queries.
      #expect(try connection.fetch(Message.self, id: b.turns[0]) == nil)
      #expect(try connection.list(Message.self, page: .all).map(\.id) == a.turns)
      #expect(try connection.count(Memory.self) == 1)
      #expect(try connection.session(externalID: "shared-name")?.id == a.session)
      #expect(try connection.sessionID(named: String(b.session)) == nil)
      #expect(try connection.recentMessages(limit: 10).map(\.id) == a.turns)
      #expect(try connection.memories(kind: nil, limit: 10, includeSuperseded: true).map(\.id) == [a.memory])
      #expect(try connection.candidateRows([.message: b.turns, .memory: [b.memory]]).isEmpty)
      #expect(try connection.itemTexts([.message: b.turns])[.message]?.isEmpty == true)
      #expect(try connection.distinctSpeakers() == ["Ann"])
      #expect(
        try connection.rowCounts() == [
          "sessions": 1, "messages": 2, "summaries": 0, "memories": 1, "embeddings": 2,
        ])
      // Embeddings: the index loads only Ann's.
      var owners: [Int64] = []
      try connection.forEachEmbedding { entry, _ in owners.append(entry.ownerID) }
      #expect(owners == [a.turns[0], a.memory])
      var above: [Int64] = []
      try connection.forEachEmbedding(idAbove: 0) { entry, _ in above.append(entry.ownerID) }
      #expect(above == owners)
      #expect(try connection.embedding(ownerKind: .memory, ownerID: b.memory) == nil)
      #expect(try connection.storedUsers() == ["ann", "bob"])
    }
    // Writes by id never reach Bob's rows.
    try ann.write { connection in
      #expect(try connection.delete(Message.self, id: b.turns[0]) == false)
      #expect(try connection.forgetItem(kind: .memory, id: b.memory) == nil)
      #expect(throws: StoreError.notFound(table: "memories", id: b.memory)) {
        try connection.supersedeMemory(b.memory, by: a.memory, at: t(4))
      }
      var stolen = try #require(try bob.read { try $0.fetch(Memory.self, id: b.memory) })
      stolen.content = "overwritten"
      #expect(throws: StoreError.notFound(table: "memories", id: b.memory)) { try connection.update(stolen) }
      #expect(throws: StoreError.notFound(table: "memories", id: b.memory)) {
        try connection.upsertEmbedding(
          EmbeddingRow(ownerKind: .memory, ownerID: b.memory, model: "m", vector: [0, 1], createdAt: t0))
      }
      try connection.deleteAllEmbeddings()
    }
    let bobRows = try bob.read { connection in
      (
        try connection.list(Message.self, page: .all).map(\.id),
        try connection.fetch(Memory.self, id: b.memory)?.content,
        try connection.embedding(ownerKind: .memory, ownerID: b.memory)?.vector,
        try connection.count(EmbeddingRow.self)
      )
    }
    #expect(bobRows.0 == b.turns)
    #expect(bobRows.1 == "walrus fact banana")
    #expect(bobRows.2 == [1, 0])
    #expect(bobRows.3 == 2)
  }
}
