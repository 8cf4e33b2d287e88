import EngramTestSupport
import Testing

@testable import EngramStore

/// Migration 5: known speakers (by index; a table since migration 7), and the log of embedding changes a lagging
/// vector snapshot is brought up to date with.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct VectorSnapshotStampTests {
  private func configured() throws -> (TemporaryDirectory, Connection) {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    try connection.configureEmbeddingModel(model: "mini", dimension: 3)
    return (directory, connection)
  }

  private func embed(_ connection: Connection, _ id: Int64, _ vector: [Float] = [1, 0, 0]) throws -> Int64 {
    try connection.upsertEmbedding(
      EmbeddingRow(ownerKind: .message, ownerID: id, model: "mini", vector: vector, createdAt: t0))
  }

  /// (Migration 7 keeps the names in a table: LeanIndexesTests.speakersFollowTurns.)
  @Test func distinctSpeakersMatchADistinctScan() throws {
    let (directory, connection) = try configured()
    _ = directory
    for (index, speaker) in ["Ann", nil, "bob", "Ann", "Émile", "bob", "Ann B", nil].enumerated() {
      try connection.insert(
        Message(role: .user, speaker: speaker, content: "turn \(index)", createdAt: t(Int64(index))))
    }
    let scanned = try connection.prepare(
      "SELECT DISTINCT speaker FROM messages WHERE speaker IS NOT NULL ORDER BY speaker"
    ).map { $0.string(at: 0) }
    #expect(try connection.distinctSpeakers() == scanned)
    #expect(scanned == ["Ann", "Ann B", "bob", "Émile"])
  }

  @Test func appendsAreNotLoggedEveryOtherChangeIs() throws {
    let (directory, connection) = try configured()
    _ = directory
    let first = try embed(connection, 1)
    let second = try embed(connection, 2)
    let third = try embed(connection, 3)
    let start = try connection.embeddingGeneration()
    #expect(try connection.embeddingChanges(after: 0)?.embeddingIDs == [])

    _ = try embed(connection, 2, [0, 1, 0])  // an update in place
    try connection.deleteEmbedding(ownerKind: .message, ownerID: 1)
    try connection.run(  // an insert below the highest id
      "INSERT INTO embeddings (id, owner_kind, owner_id, model, dimension, vector, created_at) "
        + "SELECT ?1, 'message', 9, model, dimension, vector, created_at FROM embeddings WHERE id = ?2",
      [.integer(first), .integer(third)])
    let fourth = try embed(connection, 4)  // an append
    let changes = try #require(try connection.embeddingChanges(after: start))
    #expect(changes.embeddingIDs == [first, second])
    #expect(
      changes.owners == [
        EmbeddingChanges.OwnerKey(kind: .message, id: 1), EmbeddingChanges.OwnerKey(kind: .message, id: 2),
        EmbeddingChanges.OwnerKey(kind: .message, id: 9),
      ])
    #expect(try connection.maxEmbeddingID() == fourth)

    var replayed: [Int64] = []
    try connection.forEachEmbedding(ids: changes.embeddingIDs, owners: changes.owners) { entry, _ in
      replayed.append(entry.ownerID)
    }
    #expect(replayed == [9, 2])  // in embedding id order; owner 1 has none now
    var appended: [Int64] = []
    try connection.forEachEmbedding(idAbove: third) { entry, _ in appended.append(entry.ownerID) }
    #expect(appended == [4])
  }

  @Test func recordingASnapshotPrunesTheLogItHolds() throws {
    let (directory, connection) = try configured()
    _ = directory
    _ = try embed(connection, 1)
    _ = try embed(connection, 2)
    try connection.deleteEmbedding(ownerKind: .message, ownerID: 1)
    let atSnapshot = try connection.embeddingGeneration()
    try connection.deleteEmbedding(ownerKind: .message, ownerID: 2)
    let stamp = VectorSnapshotStamp(token: 0xABCD, generation: atSnapshot, maxEmbeddingID: 2)
    try connection.recordVectorSnapshot(stamp)
    #expect(try connection.vectorSnapshotStamp() == stamp)
    #expect(try connection.embeddingChangesFloor() == atSnapshot)
    #expect(try connection.embeddingChanges(after: atSnapshot)?.owners == [.init(kind: .message, id: 2)])
    #expect(try connection.embeddingChanges(after: atSnapshot - 1) == nil)
    #expect(try connection.scalarInt("SELECT count(*) FROM embedding_changes") == 1)
  }
}
