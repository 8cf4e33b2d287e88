import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// Migration 8: embedding rows stored smaller (the vector packed, the database's model as
/// NULL) with every bit of every vector kept, on every path that reads or writes them.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct EmbeddingStorageTests {
  static let model = "sentence-transformers/all-MiniLM-L6-v2"
  static let dimension = 384

  /// `count` turns with a unit-Gaussian embedding each; returns the turn ids and vectors.
  static func fill(_ connection: Connection, count: Int, seed: UInt64 = 1) throws -> [(Int64, [Float])] {
    try connection.configureEmbeddingModel(model: model, dimension: dimension)
    let ids = try connection.insert(
      contentsOf: (0..<count).map {
        Message(role: .user, content: "turn \($0)", createdAt: t(Int64($0)))
      })
    var random = SplitMix64(seed: seed)
    var stored: [(Int64, [Float])] = []
    var rows: [EmbeddingRow] = []
    for id in ids {
      var vector = PackedFloat32Tests.gaussianUnitVector(dimension, &random)
      if id == ids.first { vector[0] = -0.0 }
      if id == ids.last { vector[1] = .leastNonzeroMagnitude }
      stored.append((id, vector))
      rows.append(EmbeddingRow(ownerKind: .message, ownerID: id, model: model, vector: vector, createdAt: t0))
    }
    try connection.insert(contentsOf: rows)
    return stored
  }

  @Test func everyReadPathGivesBackTheVectorBitForBit() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let stored = try Self.fill(connection, count: 40)
    // One more through the upsert path (the engine's single writes).
    var random = SplitMix64(seed: 5)
    let extra = PackedFloat32Tests.gaussianUnitVector(Self.dimension, &random)
    let extraID = try connection.insert(Message(role: .user, content: "one more", createdAt: t(99)))
    try connection.upsertEmbedding(
      EmbeddingRow(ownerKind: .message, ownerID: extraID, model: Self.model, vector: extra, createdAt: t0))
    let all = stored + [(extraID, extra)]

    for (id, vector) in all {
      let row = try #require(try connection.embedding(ownerKind: .message, ownerID: id))
      #expect(row.vector.map(\.bitPattern) == vector.map(\.bitPattern))
      #expect(row.model == Self.model)
    }
    let listed = try connection.list(EmbeddingRow.self)
    #expect(listed.map { $0.vector.map(\.bitPattern) } == all.map { $0.1.map(\.bitPattern) })
    var streamed: [[UInt32]] = []
    try connection.forEachEmbedding { _, vector in streamed.append(vector.map(\.bitPattern)) }
    #expect(streamed == all.map { $0.1.map(\.bitPattern) })
    let reranked = try connection.embeddingVectors(owners: all.map { (ItemKind.message, $0.0) })
    #expect(reranked.map { $0?.map(\.bitPattern) } == all.map { $0.1.map(\.bitPattern) })

    // Stored packed, with the model left to the database.
    let raw = try connection.prepare("SELECT length(vector), model IS NULL, encoding FROM embeddings").map {
      ($0.int(at: 0), $0.bool(at: 1), $0.string(at: 2))
    }
    #expect(
      raw.allSatisfy { $0.0 < 4 * Self.dimension && $0.0 >= 3 * Self.dimension + 10 && $0.1 && $0.2 == "f32" }
    )
    let census = try connection.embeddingCensus(model: Self.model, dimension: Self.dimension)
    #expect(census.foreign == 0 && census.stored == all.count)
    #expect(try connection.embeddingCensus(model: "another", dimension: Self.dimension).foreign == all.count)
  }

  /// Three MiniLM rows to a 4 KiB page (two before migration 8: 2,048 bytes a row; 1,656
  /// with five to an 8 KiB page).
  @Test func aMiniLMRowTakesUnderFourteenHundredBytes() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let stored = try Self.fill(connection, count: 600)
    let bytes = try #require(
      try connection.scalarInt("SELECT sum(pgsize) FROM dbstat WHERE name = 'embeddings'"))
    #expect(Double(bytes) / Double(stored.count) < 1_400)
  }

  @Test func theModelTriggerStillRefusesAnotherModel() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let stored = try Self.fill(connection, count: 2)
    let id = stored[0].0
    #expect(throws: (any Error).self) {
      try connection.run(
        "UPDATE embeddings SET model = 'other' WHERE owner_id = ?1", [.integer(id)])
    }
    #expect(throws: (any Error).self) {
      try connection.run(
        """
        INSERT INTO embeddings (owner_kind, owner_id, model, dimension, vector, created_at)
        VALUES ('memory', 1, 'other', 384, zeroblob(1536), 0)
        """)
    }
    // A float32 vector whose length fits no form (an int8 row's, longer than plain, too
    // short to be packed) is refused by the table itself.
    for length in [388, 1537, 11] {
      #expect(throws: (any Error).self) {
        try connection.run(
          "UPDATE embeddings SET vector = zeroblob(?2) WHERE owner_id = ?1",
          [.integer(id), .integer(Int64(length))])
      }
    }
    // Deleting the turn deletes its embedding (the trigger migration 8 created again).
    try connection.run("DELETE FROM messages WHERE id = ?1", [.integer(id)])
    #expect(try connection.embedding(ownerKind: .message, ownerID: id) == nil)
    #expect(try connection.embedding(ownerKind: .message, ownerID: stored[1].0) != nil)
  }

  /// Exports hold plain float32 vectors and name the model, as before; an import stores
  /// them packed again.
  @Test func exportsStayPlainAndImportsArePacked() throws {
    let directory = try TemporaryDirectory()
    let source = try makeMigratedConnection(directory, name: "source.sqlite")
    let stored = try Self.fill(source, count: 5)
    var exported: [(columns: [String], values: [SQLValue])] = []
    var names: [String] = []
    try source.forEachExportedRow(of: "embeddings", orderedBy: "id", columns: { names = $0 }) { row in
      let values = (0..<names.count).map { index -> SQLValue in
        switch row.columnType(at: index) {
        case .integer: .integer(row.int64(at: index))
        case .real: .real(row.double(at: index))
        case .text: .text(row.string(at: index))
        case .blob: .blob(row.withBlob(at: index) { Array($0) })
        case .null: .null
        }
      }
      exported.append((names, values))
    }
    #expect(exported.count == 5)
    for ((_, vector), row) in zip(stored, exported) {
      let value = { (name: String) in row.values[row.columns.firstIndex(of: name)!] }
      #expect(value("model") == .text(Self.model))
      let plain = vector.flatMap { float in withUnsafeBytes(of: float.bitPattern.littleEndian, Array.init) }
      #expect(value("vector") == .blob(plain))
    }

    let target = try makeMigratedConnection(directory, name: "target.sqlite")
    try target.configureEmbeddingModel(model: Self.model, dimension: Self.dimension)
    try target.transaction {
      for (id, _) in stored {
        try target.insert(Message(id: id, role: .user, content: "turn", createdAt: t0))
      }
      for row in exported {
        try target.insertExportedRow(
          into: "embeddings", columns: row.columns, values: row.values, replacing: false)
      }
    }
    for (id, vector) in stored {
      #expect(
        try target.embedding(ownerKind: .message, ownerID: id)?.vector.map(\.bitPattern)
          == vector.map(\.bitPattern))
    }
    #expect(
      try target.scalarInt(
        "SELECT count(*) FROM embeddings WHERE model IS NULL AND length(vector) < 4 * dimension") == 5)
  }

  /// Compaction's int8 re-storing reads packed vectors.
  @Test func packedVectorsQuantize() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let stored = try Self.fill(connection, count: 3)
    #expect(try connection.quantizeEmbeddings(ownerKind: .message, ownerIDs: stored.map(\.0)) == 3)
    for (id, vector) in stored {
      let back = try #require(try connection.embedding(ownerKind: .message, ownerID: id)?.vector)
      let dot = zip(back, vector).reduce(0) { $0 + $1.0 * $1.1 }
      let norms = (back.reduce(0) { $0 + $1 * $1 } * vector.reduce(0) { $0 + $1 * $1 }).squareRoot()
      #expect(dot / norms > 0.999)
    }
  }

  /// A schema-7 database (model in every row, vectors plain) migrates keeping every row and
  /// the generation; its rows are packed as they are copied and read back bit for bit.
  @Test func aSchemaSevenDatabaseMigratesKeepingEveryVector() throws {
    let directory = try TemporaryDirectory()
    let connection = try Connection(path: directory.file("v7.sqlite"))
    try connection.enableWriteAheadLog()
    try Migrator.migrate(connection, migrations: Array(Migration.all.prefix(7)))
    try connection.configureEmbeddingModel(model: Self.model, dimension: Self.dimension)
    var random = SplitMix64(seed: 3)
    var old: [(Int64, [Float])] = []
    for index in 0..<10 {
      let id = try connection.legacyInsert(Message(role: .user, content: "old \(index)", createdAt: t0))
      let vector = PackedFloat32Tests.gaussianUnitVector(Self.dimension, &random)
      try connection.insertEmbeddingBeforeMigration8(
        EmbeddingRow(ownerKind: .message, ownerID: id, model: Self.model, vector: vector, createdAt: t0))
      old.append((id, vector))
    }
    let generation = try connection.embeddingGeneration()
    #expect(try Migrator.migrate(connection) == Migration.all.count - 7)
    #expect(try connection.embeddingGeneration() == generation)
    #expect(try connection.integrityCheck() == [])
    for (id, vector) in old {
      #expect(
        try connection.embedding(ownerKind: .message, ownerID: id)?.vector.map(\.bitPattern)
          == vector.map(\.bitPattern))
    }
    #expect(try connection.scalarInt("SELECT count(*) FROM embeddings WHERE model IS NULL") == 10)
    // Packed as they were copied.
    #expect(try connection.scalarInt("SELECT count(*) FROM embeddings WHERE length(vector) < 1536") == 10)
    let id = try connection.insert(Message(role: .user, content: "new", createdAt: t0))
    try connection.upsertEmbedding(
      EmbeddingRow(ownerKind: .message, ownerID: id, model: Self.model, vector: old[0].1, createdAt: t0))
    #expect(
      try connection.scalarInt(
        "SELECT length(vector) < 1536 FROM embeddings WHERE owner_id = ?1", [.integer(id)])
        == 1)
    #expect(try connection.embeddingGeneration() == generation + 1)
  }
}
