import EngramCore
import EngramTestSupport
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct EmbeddingRowTests {
  private func configured() throws -> (TemporaryDirectory, Connection) {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    try connection.configureEmbeddingModel(model: "mini", dimension: 3)
    return (directory, connection)
  }

  @Test func configureEmbeddingModelRules() throws {
    let (directory, connection) = try configured()
    _ = directory
    try connection.configureEmbeddingModel(model: "mini", dimension: 3)
    #expect(try connection.embeddingModel() == EmbeddingModel(name: "mini", dimension: 3))
    #expect(
      throws: StoreError.modelMismatch(
        expectedModel: "mini", expectedDimension: 3, actualModel: "big", actualDimension: 5)
    ) { try connection.configureEmbeddingModel(model: "big", dimension: 5) }
    #expect(throws: StoreError.invalidEmbeddingModel(model: "", dimension: 3)) {
      try connection.configureEmbeddingModel(model: "", dimension: 3)
    }
    try connection.upsertEmbedding(
      EmbeddingRow(ownerKind: .message, ownerID: 1, model: "mini", vector: [1, 2, 3], createdAt: t0))
    try connection.configureEmbeddingModel(model: "big", dimension: 5, replace: true)
    #expect(try connection.embeddingModel() == EmbeddingModel(name: "big", dimension: 5))
    #expect(try connection.count(EmbeddingRow.self) == 0)
  }

  @Test func refusesBadVectorsBeforeSQL() throws {
    let (directory, connection) = try configured()
    _ = directory
    let generation = try connection.embeddingGeneration()
    func row(_ vector: [Float], model: String = "mini") -> EmbeddingRow {
      EmbeddingRow(ownerKind: .memory, ownerID: 1, model: model, vector: vector, createdAt: t0)
    }
    #expect(throws: StoreError.wrongDimension(expected: 3, actual: 2)) {
      try connection.upsertEmbedding(row([1, 2]))
    }
    #expect(throws: StoreError.nonFiniteVector(index: 1)) {
      try connection.upsertEmbedding(row([1, .nan, 3]))
    }
    #expect(throws: StoreError.nonFiniteVector(index: 2)) {
      try connection.upsertEmbedding(row([1, 2, .infinity]))
    }
    #expect(throws: StoreError.emptyVector) { try connection.upsertEmbedding(row([])) }
    #expect(
      throws: StoreError.modelMismatch(
        expectedModel: "mini", expectedDimension: 3, actualModel: "other", actualDimension: 3)
    ) { try connection.upsertEmbedding(row([1, 2, 3], model: "other")) }
    var lying = row([1, 2, 3])
    lying.dimension = 4
    #expect(throws: StoreError.wrongDimension(expected: 4, actual: 3)) { try connection.insert(lying) }
    #expect(try connection.count(EmbeddingRow.self) == 0)
    #expect(try connection.embeddingGeneration() == generation)
  }

  @Test func triggerRefusesMismatchingRawInserts() throws {
    let (directory, connection) = try configured()
    _ = directory
    #expect {
      try connection.run(
        "INSERT INTO embeddings (owner_kind, owner_id, model, dimension, vector, created_at) VALUES ('message', 1, 'x', 3, zeroblob(12), 0)"
      )
    } throws: {
      isSQLite($0, .constraint) || isSQLite($0, .abort) || isSQLite($0, .error)
    }
    let fresh = try TemporaryDirectory()
    let unconfigured = try makeMigratedConnection(fresh)
    #expect(throws: StoreError.embeddingModelNotConfigured) {
      try unconfigured.upsertEmbedding(
        EmbeddingRow(ownerKind: .message, ownerID: 1, model: "m", vector: [1], createdAt: t0))
    }
  }

  @Test func upsertFetchDeleteAndGeneration() throws {
    let (directory, connection) = try configured()
    _ = directory
    let g0 = try connection.embeddingGeneration()
    let id = try connection.upsertEmbedding(
      EmbeddingRow(ownerKind: .message, ownerID: 7, model: "mini", vector: [1, 2, 3], createdAt: t0))
    let again = try connection.upsertEmbedding(
      EmbeddingRow(ownerKind: .message, ownerID: 7, model: "mini", vector: [4, 5, 6], createdAt: t(1)))
    #expect(id == again)
    let fetched = try connection.embedding(ownerKind: .message, ownerID: 7)
    #expect(fetched?.vector == [4, 5, 6])
    #expect(fetched?.dimension == 3)
    #expect(try connection.embeddingGeneration() == g0 + 2)
    #expect(try connection.deleteEmbedding(ownerKind: .message, ownerID: 7))
    #expect(try connection.embeddingGeneration() == g0 + 3)
  }

  @Test func ownerDeletionRemovesItsEmbedding() throws {
    let (directory, connection) = try configured()
    _ = directory
    let message = try connection.insert(Message(role: .user, content: "x", createdAt: t0))
    try connection.upsertEmbedding(
      EmbeddingRow(ownerKind: .message, ownerID: message, model: "mini", vector: [1, 0, 0], createdAt: t0))
    #expect(try connection.ownersWithoutEmbedding(.message, limit: 10).isEmpty)
    try connection.delete(Message.self, id: message)
    #expect(try connection.count(EmbeddingRow.self) == 0)
  }

  @Test func bulkReaderDeliversVectorsAndOwnerMetadata() throws {
    let (directory, connection) = try configured()
    _ = directory
    let session = try connection.insert(Session(startedAt: t0))
    let message = try connection.insert(
      Message(sessionID: session, role: .user, content: "m", createdAt: t(1)))
    let memory = try connection.insert(
      Memory(kind: .event, content: "e", createdAt: t(2), scopeUser: "alice", scopeAgent: "bot"))
    let summary = try connection.insert(
      Summary(sessionID: session, startAt: t(3), endAt: t(4), content: "s", createdAt: t0))
    var expected: [Int64: [Float]] = [:]
    for (kind, owner) in [(ItemKind.message, message), (.memory, memory), (.summary, summary)] {
      let vector: [Float] = [Float(owner), 0.5, -Float(owner)]
      try connection.upsertEmbedding(
        EmbeddingRow(ownerKind: kind, ownerID: owner, model: "mini", vector: vector, createdAt: t0))
      expected[owner] = vector
    }
    var seen: [EmbeddingEntry] = []
    try connection.forEachEmbedding { entry, vector in
      seen.append(entry)
      #expect(Array(vector) == expected[entry.ownerID])
    }
    #expect(seen.map(\.ownerKind) == [.message, .memory, .summary])
    #expect(seen.map(\.time) == [t0ms + 1, t0ms + 2, t0ms + 3])
    #expect(seen.map(\.sessionID) == [session, nil, session])
    #expect(seen[1].memoryKind == .event)
    #expect(seen[1].scopeUser == "alice")
    #expect(seen[1].scopeAgent == "bot")
    var memoriesOnly = 0
    try connection.forEachEmbedding(ownerKinds: [.memory]) { _, _ in memoriesOnly += 1 }
    #expect(memoriesOnly == 1)
  }
}
