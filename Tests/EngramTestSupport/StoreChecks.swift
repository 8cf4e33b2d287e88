import EngramCore
import EngramStore
import Foundation
import Testing

/// Checks every store must pass, run on SQLite by EngramStoreTests and on PostgreSQL by
/// EngramPostgresTests: each takes two users' stores of one database.
public enum StoreChecks {
  static let time = Date(timeIntervalSince1970: 1_700_000_000)

  /// `StoreSession.embeddingVectors(owners:)` (EmbeddingVectorsTests): fills two users' stores
  /// and checks the reads of the first.
  public static func embeddingVectorsPerUser(_ mine: any MemoryStore, _ theirs: any MemoryStore) throws {
    let vectors: [[Float]] = [[0.5, -1, 2], [3, 0.25, -0.125], [-7, 1, 1]]
    let own = try mine.writeTransaction { session throws -> [Int64] in
      try session.configureEmbeddingModel(model: "m", dimension: 3, replace: false)
      return try vectors.map { vector in
        let id = try session.insert(Memory(kind: .fact, content: "fact \(vector)", createdAt: time))
        try session.upsertEmbedding(
          EmbeddingRow(ownerKind: .memory, ownerID: id, model: "m", vector: vector, createdAt: time))
        return id
      }
    }
    let other = try theirs.writeTransaction { session throws -> Int64 in
      try session.configureEmbeddingModel(model: "m", dimension: 3, replace: false)
      let id = try session.insert(Memory(kind: .fact, content: "their fact", createdAt: time))
      try session.upsertEmbedding(
        EmbeddingRow(ownerKind: .memory, ownerID: id, model: "m", vector: [1, 1, 1], createdAt: time))
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

  static let briefing = Routine(
    name: "Evening Wrap Up",
    steps: [
      Routine.Step(text: "show today's calendar", skill: "calendar.list"),
      Routine.Step(text: "天气怎么样", skill: nil),
    ], createdAt: Date(timeIntervalSince1970: 1_700_000_000))

  /// The `routines` table (RoutineStoreTests): a routine round-trips with its steps, a name
  /// folded the same way replaces it, each user sees only their own.
  public static func routinesPerUser(_ alice: any MemoryStore, _ bob: any MemoryStore) throws {
    try alice.writeTransaction { try $0.saveRoutine(briefing) }
    #expect(try alice.readTransaction { try $0.routines() } == [briefing])
    #expect(try bob.readTransaction { try $0.routines() }.isEmpty)
    var renamed = briefing
    renamed.name = "evening  wrap up!"
    renamed.enabled = false
    renamed.updatedAt = Date(timeIntervalSince1970: 1_700_000_100)
    try alice.writeTransaction { try $0.saveRoutine(renamed) }
    let stored = try alice.readTransaction { try $0.routine(key: "evening wrap up") }
    #expect(stored == renamed)
    #expect(try bob.writeTransaction { try $0.deleteRoutine(key: "evening wrap up") } == false)
    #expect(try alice.writeTransaction { try $0.deleteRoutine(key: "evening wrap up") })
    #expect(try alice.readTransaction { try $0.routines() }.isEmpty)
  }
}
