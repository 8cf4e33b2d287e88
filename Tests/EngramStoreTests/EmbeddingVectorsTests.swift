import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// `StoreSession.embeddingVectors(owners:)`: what a vector index of int8 codes re-ranks with,
/// read by owner in the session's transaction, in order, one user's rows only, the same
/// vectors `embedding(ownerKind:ownerID:)` decodes (float32 and int8 rows alike).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct EmbeddingVectorsTests {
  /// Fills two users' stores and checks the reads of the first.
  static func check(_ mine: any MemoryStore, _ theirs: any MemoryStore) throws {
    let vectors: [[Float]] = [[0.5, -1, 2], [3, 0.25, -0.125], [-7, 1, 1]]
    let own = try mine.writeTransaction { session throws -> [Int64] in
      try session.configureEmbeddingModel(model: "m", dimension: 3, replace: false)
      return try vectors.map { vector in
        let id = try session.insert(Memory(kind: .fact, content: "fact \(vector)", createdAt: t0))
        try session.upsertEmbedding(
          EmbeddingRow(ownerKind: .memory, ownerID: id, model: "m", vector: vector, createdAt: t0))
        return id
      }
    }
    let other = try theirs.writeTransaction { session throws -> Int64 in
      try session.configureEmbeddingModel(model: "m", dimension: 3, replace: false)
      let id = try session.insert(Memory(kind: .fact, content: "their fact", createdAt: t0))
      try session.upsertEmbedding(
        EmbeddingRow(ownerKind: .memory, ownerID: id, model: "m", vector: [1, 1, 1], createdAt: t0))
      return id
    }
    // The last row stored as int8 codes.
    let quantized = try mine.writeTransaction { session throws -> Int in
      try session.quantizeEmbeddings(ownerKind: .memory, ownerIDs: [own[2]])
    }
    #expect(quantized == 1)
    try mine.readTransaction { session throws in
      let owners: [(kind: ItemKind, id: Int64)] = [
        (.memory, own[2]), (.message, own[0]), (.memory, other), (.memory, own[0]), (.memory, 999_999),
        (.memory, own[1]),
      ]
      let found = try session.embeddingVectors(owners: owners)
      #expect(found.count == owners.count)
      #expect(found[0] == (try session.embedding(ownerKind: .memory, ownerID: own[2])?.vector))
      #expect(found[0] != nil && found[0] != vectors[2])  // decoded from the codes
      #expect(found[1] == nil)  // no message of that id has an embedding
      #expect(found[2] == nil)  // another user's row
      #expect(found[3] == vectors[0])
      #expect(found[4] == nil)
      #expect(found[5] == vectors[1])
      #expect(try session.embeddingVectors(owners: []).isEmpty)
    }
  }

  @Test func sqlite() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("m.sqlite")
    let mine = try StoreUserScopeTests.open(path, user: "alice")
    let theirs = try StoreUserScopeTests.open(path, user: "bob")
    try Self.check(mine, theirs)
  }

  @Test func postgres() throws {
    try PostgresTestServer.withDatabase { _, url in
      let mine = try PostgresStore(uri: url, user: "alice")
      let theirs = try PostgresStore(uri: url, user: "bob")
      defer {
        mine.close()
        theirs.close()
      }
      try Self.check(mine, theirs)
    }
  }
}
